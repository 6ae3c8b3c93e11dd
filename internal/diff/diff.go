// Package diff compares two path profiles: per function and in total, the
// paths only the first executed (gone), only the second (new), and those
// whose count changed by more than a threshold, with path coverage before
// and after. It is what "pathprof diff" prints as text, JSON or HTML.
package diff

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"

	"github.com/pathprof/pathprof/internal/report"
	"github.com/pathprof/pathprof/profile"
)

// DefaultThreshold is the change, in percent of the first count, beyond
// which a path counts as changed.
const DefaultThreshold = 10

// Path statuses.
const (
	Gone    = "gone"    // executed in A only
	New     = "new"     // executed in B only
	Changed = "changed" // executed in both, the count changed by more than the threshold
)

// Options say how to compare.
type Options struct {
	// Threshold is the change, in percent of A's count, beyond which a
	// path is changed; with 0 every change counts.
	Threshold float64
	// A and B build the two sides' reports: their modules, if at hand,
	// give the paths their source labels, by which the paths of two
	// different modules are matched.
	A, B report.Options
	// FileA and FileB name the profiles.
	FileA, FileB string
}

// Diff is two profiles compared. Its JSON form is "pathprof diff --json".
type Diff struct {
	A, B Side `json:"-"`
	// SameModule is set when both profiles are of one module: functions
	// are matched by index and paths by id. Otherwise functions are
	// matched by name and paths by kind and label.
	SameModule bool    `json:"same_module"`
	Threshold  float64 `json:"threshold"`
	Totals     Totals  `json:"totals"`
	// Functions are those with a path gone, new or changed, or whose
	// coverage changed, most differing paths first.
	Functions []Function `json:"functions"`
}

// MarshalJSON writes the sides under "a" and "b".
func (d *Diff) MarshalJSON() ([]byte, error) {
	type plain Diff
	return json.Marshal(struct {
		A Side `json:"a"`
		B Side `json:"b"`
		*plain
	}{d.A, d.B, (*plain)(d)})
}

// Side is one profile's facts and totals.
type Side struct {
	File   string `json:"file"`
	Module string `json:"module"`
	SHA256 string `json:"sha256,omitempty"`
	// Runs is the number of runs (inputs) the profile counts.
	Runs          int         `json:"runs"`
	Complete      bool        `json:"complete"`
	Executions    json.Number `json:"executions"`
	Paths         int         `json:"paths"`
	PossiblePaths string      `json:"possible_paths"`
	Coverage      float64     `json:"coverage"`
}

// Totals count the paths of every function by status.
type Totals struct {
	Gone      int `json:"gone"`
	New       int `json:"new"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
}

// Function is one function compared.
type Function struct {
	Name string `json:"name"`
	// IndexA and IndexB are the function's index in each module; absent
	// on the side that lacks the function.
	IndexA *uint32 `json:"index_a,omitempty"`
	IndexB *uint32 `json:"index_b,omitempty"`
	Totals
	PathsA    int      `json:"paths_a"`
	PathsB    int      `json:"paths_b"`
	PossibleA string   `json:"possible_a,omitempty"`
	PossibleB string   `json:"possible_b,omitempty"`
	CoverageA *float64 `json:"coverage_a,omitempty"`
	CoverageB *float64 `json:"coverage_b,omitempty"`
	// Paths are the gone, new and changed paths, the largest count first.
	Paths []Path `json:"paths"`
}

// Path is one path that differs.
type Path struct {
	Status string  `json:"status"`
	IDA    *uint64 `json:"id_a,omitempty"`
	IDB    *uint64 `json:"id_b,omitempty"`
	Kind   string  `json:"kind"`
	Label  string  `json:"label"`
	CountA uint64  `json:"count_a"`
	CountB uint64  `json:"count_b"`
	// Change is (B − A) / A in percent, for a changed path.
	Change *float64       `json:"change,omitempty"`
	Blocks []report.Block `json:"blocks"`
}

// Compare compares the profiles a and b.
func Compare(a, b *profile.Profile, opt Options) (*Diff, error) {
	if opt.Threshold < 0 {
		return nil, fmt.Errorf("threshold %v%%: want at least 0", opt.Threshold)
	}
	ra, err := report.Build(a, opt.A)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opt.FileA, err)
	}
	rb, err := report.Build(b, opt.B)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opt.FileB, err)
	}
	d := &Diff{A: side(opt.FileA, a, ra), B: side(opt.FileB, b, rb), Threshold: opt.Threshold,
		SameModule: a.Module.SHA256 != "" && a.Module.SHA256 == b.Module.SHA256}
	ka, kb := d.funcKeys(ra), d.funcKeys(rb)
	byKey := map[fkey]*report.Function{}
	for i := range rb.Functions {
		byKey[kb[i]] = &rb.Functions[i]
	}
	seen := map[fkey]bool{}
	for i := range ra.Functions {
		seen[ka[i]] = true
		d.add(&ra.Functions[i], byKey[ka[i]])
	}
	for i := range rb.Functions {
		if !seen[kb[i]] {
			d.add(nil, &rb.Functions[i])
		}
	}
	slices.SortStableFunc(d.Functions, func(x, y Function) int {
		return cmp.Or(cmp.Compare(len(y.Paths), len(x.Paths)), cmp.Compare(x.Name, y.Name))
	})
	if d.Functions == nil {
		d.Functions = []Function{}
	}
	return d, nil
}

// fkey is what matches a function of A with one of B: its index in one
// module; its name, and which of the functions of that name in index
// order (static functions of different files may share one), in two.
type fkey struct {
	index uint32
	name  string
}

// funcKeys returns the key of each of r's functions.
func (d *Diff) funcKeys(r *report.Report) []fkey {
	keys := make([]fkey, len(r.Functions))
	order := make([]int, len(r.Functions))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return cmp.Compare(r.Functions[x].Index, r.Functions[y].Index) })
	nth := map[string]uint32{}
	for _, i := range order {
		f := &r.Functions[i]
		if d.SameModule {
			keys[i] = fkey{index: f.Index}
			continue
		}
		keys[i] = fkey{index: nth[f.Name], name: f.Name}
		nth[f.Name]++
	}
	return keys
}

func side(file string, p *profile.Profile, r *report.Report) Side {
	return Side{File: file, Module: r.Run.Module, SHA256: p.Module.SHA256, Runs: max(len(p.Inputs), 1), Complete: p.Complete,
		Executions: r.Totals.Executions, Paths: r.Totals.Paths, PossiblePaths: r.Totals.PossiblePaths, Coverage: r.Totals.Coverage}
}

// add compares function fa of A with fb of B (either nil where the
// function is missing) and keeps it if anything differs.
func (d *Diff) add(fa, fb *report.Function) {
	var f Function
	type pkey struct {
		id          uint64
		kind, label string
	}
	key := func(p *report.Path) pkey {
		if d.SameModule {
			return pkey{id: p.ID}
		}
		return pkey{kind: p.Kind, label: p.Label}
	}
	inB := map[pkey]*report.Path{}
	if fb != nil {
		f.Name, f.IndexB, f.PathsB, f.PossibleB, f.CoverageB = fb.Name, &fb.Index, fb.ExecutedPaths, fb.PossiblePaths, fb.Coverage
		for i := range fb.Paths {
			inB[key(&fb.Paths[i])] = &fb.Paths[i]
		}
	}
	matched := map[pkey]bool{}
	if fa != nil {
		f.Name, f.IndexA, f.PathsA, f.PossibleA, f.CoverageA = fa.Name, &fa.Index, fa.ExecutedPaths, fa.PossiblePaths, fa.Coverage
		for i := range fa.Paths {
			pa := &fa.Paths[i]
			k := key(pa)
			pb := inB[k]
			if pb == nil {
				f.Gone++
				f.Paths = append(f.Paths, Path{Status: Gone, IDA: &pa.ID, Kind: pa.Kind, Label: pa.Label, CountA: pa.Count, Blocks: pa.Blocks})
				continue
			}
			matched[k] = true
			if !changed(pa.Count, pb.Count, d.Threshold) {
				f.Unchanged++
				continue
			}
			f.Changed++
			ch := change(pa.Count, pb.Count)
			f.Paths = append(f.Paths, Path{Status: Changed, IDA: &pa.ID, IDB: &pb.ID, Kind: pb.Kind, Label: pb.Label,
				CountA: pa.Count, CountB: pb.Count, Change: &ch, Blocks: pb.Blocks})
		}
	}
	if fb != nil {
		for i := range fb.Paths {
			pb := &fb.Paths[i]
			if !matched[key(pb)] {
				f.New++
				f.Paths = append(f.Paths, Path{Status: New, IDB: &pb.ID, Kind: pb.Kind, Label: pb.Label, CountB: pb.Count, Blocks: pb.Blocks})
			}
		}
	}
	d.Totals.Gone += f.Gone
	d.Totals.New += f.New
	d.Totals.Changed += f.Changed
	d.Totals.Unchanged += f.Unchanged
	sameCoverage := f.PathsA == f.PathsB && f.PossibleA == f.PossibleB
	if len(f.Paths) == 0 && sameCoverage {
		return
	}
	slices.SortStableFunc(f.Paths, func(x, y Path) int {
		return cmp.Or(cmp.Compare(max(y.CountA, y.CountB), max(x.CountA, x.CountB)), cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Label, y.Label))
	})
	if f.Paths == nil {
		f.Paths = []Path{}
	}
	d.Functions = append(d.Functions, f)
}

// changed reports whether b differs from a by more than threshold percent
// of a, exactly (counts pass what a float64 holds).
func changed(a, b uint64, threshold float64) bool {
	if a == b {
		return false
	}
	diff := new(big.Rat).SetInt(new(big.Int).Sub(new(big.Int).SetUint64(b), new(big.Int).SetUint64(a)))
	diff.Abs(diff)
	limit := new(big.Rat).SetFloat64(threshold / 100)
	limit.Mul(limit, new(big.Rat).SetInt(new(big.Int).SetUint64(a)))
	return diff.Cmp(limit) > 0
}

// change is (b − a) / a in percent.
func change(a, b uint64) float64 {
	return (float64(b) - float64(a)) / float64(a) * 100
}
