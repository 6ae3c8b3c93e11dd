// Package report turns a path profile into what a person reads: the
// hottest paths of the program, path coverage per function, and the facts
// of the run, as aligned text or as JSON. Given the original module it names
// functions from the name section, places blocks within their functions,
// and maps them to source lines through DWARF.
package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math/big"
	"math/bits"
	"slices"

	"github.com/pathprof/pathprof/internal/srcmap"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// DefaultTop is how many hottest paths are listed unless Options say.
const DefaultTop = 10

// Options select what Build puts in a report.
type Options struct {
	// Top is how many paths each hottest list holds; 0 means DefaultTop.
	Top int
	// Module is the original (uninstrumented) module, or nil. With it,
	// blocks are placed in their functions and, where the module has DWARF,
	// in the source.
	Module []byte
	// ModulePath names Module in the report; it defaults to the profile's.
	ModulePath string
	// Sources, when set, are the directories source files may be read
	// from; the report names, as left out, the files its blocks are in
	// that lie outside them (a module's DWARF can name any path).
	Sources *srcmap.Roots
}

// Report is a profile arranged for reading. Its JSON form is what
// "pathprof report --json" prints.
type Report struct {
	Run    Run    `json:"run"`
	Totals Totals `json:"totals"`
	// Inputs are the runs of a profile of several, in the profile's order.
	Inputs []Input `json:"inputs,omitempty"`
	// Functions are every function of the profile, most executed first.
	Functions []Function `json:"functions"`
	// Hottest lists the paths with the highest counts; HottestByLength
	// those with the highest count × length, which favours long paths:
	// where the program spends its blocks rather than its path runs.
	Hottest         []Hot `json:"hottest"`
	HottestByLength []Hot `json:"hottest_by_length"`
	// Warnings are problems that left the report with less detail.
	Warnings []string `json:"warnings,omitempty"`
	// SourcesLeftOut are the source files the report's blocks are in that
	// lie outside Options.Sources: no report reads them.
	SourcesLeftOut []string `json:"sources_left_out,omitempty"`
}

// Run is how the profile was obtained.
type Run struct {
	Module string `json:"module"`
	SHA256 string `json:"sha256,omitempty"`
	// Source says where block locations come from: "dwarf", "offsets"
	// (a module without DWARF), or "none" (no module: file offsets only).
	Source   string           `json:"source"`
	Strategy profile.Strategy `json:"strategy"`
	Copies   int              `json:"copies"`
	// Weights says what a PBL or P3 run's copies were planned by.
	Weights  *profile.Weights `json:"weights,omitempty"`
	Complete bool             `json:"complete"`
	// Incomplete says why the profile is incomplete.
	Incomplete string `json:"incomplete,omitempty"`
	// Interrupted is set when the counts were read while the program
	// ran (profile.Interruption).
	Interrupted bool          `json:"interrupted,omitempty"`
	ExitCode    uint32        `json:"exit_code"`
	Runs        []profile.Run `json:"runs"`
	// Stubs and Region are the profile's (profile.Stub, profile.Region).
	Stubs  []profile.Stub  `json:"stubs,omitempty"`
	Region *profile.Region `json:"region,omitempty"`
	// Invoked are the exports a profile of one run called in place of
	// _start (profile.Input.Invoked).
	Invoked []profile.Invocation `json:"invoked,omitempty"`
}

// Totals sum the profile.
type Totals struct {
	Functions int `json:"functions"`
	Profiled  int `json:"profiled"`
	Skipped   int `json:"skipped"`
	// Executed is the number of functions with at least one path.
	Executed int `json:"executed"`
	// Executions is the sum of all path counts.
	Executions json.Number `json:"executions"`
	Calls      json.Number `json:"calls"`
	Paths      int         `json:"paths"`
	// PossiblePaths sums the profiled functions' possible paths (decimal).
	PossiblePaths string `json:"possible_paths"`
	// Coverage is Paths / PossiblePaths in percent.
	Coverage float64 `json:"coverage"`
}

// Function is one function's paths and coverage.
type Function struct {
	Index  uint32         `json:"index"`
	Name   string         `json:"name"`
	Status profile.Status `json:"status"`
	// Executions is the sum of the function's path counts; Calls the sum
	// of those of its paths that start at the function's entry: how often
	// it was called, less the calls that ended before their first path did
	// (a trap, an exception passing through, the program's exit).
	Executions    json.Number `json:"executions"`
	Calls         json.Number `json:"calls"`
	ExecutedPaths int         `json:"executed_paths"`
	PossiblePaths string      `json:"possible_paths"`
	// Coverage is ExecutedPaths / PossiblePaths in percent; absent for a
	// skipped function.
	Coverage *float64 `json:"coverage,omitempty"`
	Cuts     []Block  `json:"cuts,omitempty"`
	// Paths are the executed paths, highest count first.
	Paths []Path `json:"paths"`

	executions, calls *big.Int
}

// Path is one executed path.
type Path struct {
	ID     uint64  `json:"id"`
	Count  uint64  `json:"count"`
	Kind   string  `json:"kind"`
	Blocks []Block `json:"blocks"`
	// Label is the blocks as the text report lists them, on one line; no
	// two paths of a function have the same kind and label (two paths
	// through the same blocks, were there such, would get their ids).
	Label string `json:"label"`
	// ByInput says which runs of a profile of several executed the path
	// and how often ([input, count], input indexing Report.Inputs).
	ByInput []profile.InputCount `json:"by_input,omitempty"`

	suffix string // what Label adds to the blocks
}

// Block is where one block of a path starts.
type Block struct {
	// Offset is the block's file offset in the original module.
	Offset int `json:"offset"`
	// FuncOffset is Offset from the start of the function's body (its
	// locals declarations), as wasm-objdump and DWARF count; 0 without
	// the module.
	FuncOffset int    `json:"func_offset,omitempty"`
	File       string `json:"file,omitempty"`
	Line       int    `json:"line,omitempty"`
	Column     int    `json:"column,omitempty"`
	// Instr is the block's first instruction.
	Instr string `json:"instr,omitempty"`
	// At is how the text report shows the block: file:line:column (or
	// file:line), else function+0xOFFSET, else the file offset in hex.
	// Where two blocks of a function would show alike, each gets its
	// function offset too: file:line:column(+0xOFFSET).
	At string `json:"at"`
}

// Hot is one entry of a hottest-paths list; Functions holds the path's
// blocks.
type Hot struct {
	Rank     int    `json:"rank"`
	Function string `json:"function"`
	Index    uint32 `json:"index"`
	ID       uint64 `json:"id"`
	Kind     string `json:"kind"`
	Count    uint64 `json:"count"`
	Length   int    `json:"length"`
	// Weight is Count × Length, exactly.
	Weight json.Number `json:"weight"`

	path *Path
}

// Build arranges p for reading. p must be valid (profile.Read validates);
// a module that is given must be the one profiled.
func Build(p *profile.Profile, opt Options) (*Report, error) {
	top := opt.Top
	if top <= 0 {
		top = DefaultTop
	}
	r := &Report{Run: Run{
		Module:      p.Module.Path,
		SHA256:      p.Module.SHA256,
		Source:      "none",
		Strategy:    p.Strategy,
		Copies:      p.Copies,
		Weights:     p.Weights,
		Complete:    p.Complete,
		Incomplete:  p.Incomplete,
		Interrupted: p.Interrupted != nil,
		ExitCode:    p.ExitCode,
		Runs:        p.Runs,
		Stubs:       p.Stubs,
		Region:      p.Region,
	}}
	if len(p.Inputs) == 1 {
		r.Run.Invoked = p.Inputs[0].Invoked
	}
	r.Inputs = inputs(p)
	if r.Run.Runs == nil {
		r.Run.Runs = []profile.Run{}
	}
	if !p.Complete && p.Incomplete == "" {
		r.Run.Incomplete = "no reason given"
	}
	if opt.ModulePath != "" {
		r.Run.Module = opt.ModulePath
	}
	var loc *locator
	if opt.Module != nil {
		var err error
		var warn string
		if loc, warn, err = newLocator(p, opt.Module); err != nil {
			return nil, err
		}
		if warn != "" {
			r.Warnings = append(r.Warnings, warn)
		}
		r.Run.Source = "offsets"
		if loc.src != nil {
			r.Run.Source = "dwarf"
		}
	}

	totalExec, totalCalls, totalPossible := new(big.Int), new(big.Int), new(big.Int)
	var hot []*Hot
	for _, pf := range p.Functions {
		f := Function{
			Index:         pf.Index,
			Name:          pf.Name,
			Status:        pf.Status,
			ExecutedPaths: len(pf.Paths),
			PossiblePaths: pf.PossiblePaths,
			Paths:         make([]Path, 0, len(pf.Paths)),
			executions:    new(big.Int),
			calls:         new(big.Int),
		}
		if f.Name == "" && loc != nil {
			f.Name = loc.m.FuncName(pf.Index)
		}
		if f.Name == "" {
			f.Name = fmt.Sprintf("func[%d]", pf.Index)
		}
		r.Totals.Functions++
		if pf.Status == profile.StatusProfiled {
			r.Totals.Profiled++
			possible, ok := new(big.Int).SetString(pf.PossiblePaths, 10)
			if !ok || possible.Sign() < 0 {
				return nil, fmt.Errorf("function %d: possible paths %q", pf.Index, pf.PossiblePaths)
			}
			totalPossible.Add(totalPossible, possible)
			// A function whose every path traps has no possible paths,
			// and no coverage to speak of.
			if possible.Sign() > 0 {
				c := percent(len(pf.Paths), possible)
				f.Coverage = &c
			}
		} else {
			r.Totals.Skipped++
		}
		var code *wasm.Code
		if loc != nil {
			var err error
			if code, err = loc.code(pf.Index); err != nil {
				return nil, err
			}
		}
		// Each block is placed once, and those that would read alike
		// told apart, before the paths are filled in.
		blocks, err := placeBlocks(loc, code, f.Name, pf)
		if err != nil {
			return nil, fmt.Errorf("function %d (%s): %v", pf.Index, f.Name, err)
		}
		for _, off := range pf.Cuts {
			f.Cuts = append(f.Cuts, blocks[off])
		}
		var n big.Int
		for _, pp := range pf.Paths {
			path := Path{ID: pp.ID, Count: pp.Count, Kind: pp.Kind, Blocks: make([]Block, len(pp.Blocks)), ByInput: pp.ByInput}
			for i, off := range pp.Blocks {
				path.Blocks[i] = blocks[off]
			}
			n.SetUint64(pp.Count)
			f.executions.Add(f.executions, &n)
			if pp.Kind == profile.KindEntryExit || pp.Kind == profile.KindEntryBack {
				f.calls.Add(f.calls, &n)
			}
			f.Paths = append(f.Paths, path)
		}
		label(&f)
		slices.SortStableFunc(f.Paths, func(a, b Path) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.ID, b.ID))
		})
		f.Executions = json.Number(f.executions.String())
		f.Calls = json.Number(f.calls.String())
		totalExec.Add(totalExec, f.executions)
		totalCalls.Add(totalCalls, f.calls)
		if len(f.Paths) > 0 {
			r.Totals.Executed++
		}
		r.Totals.Paths += len(f.Paths)
		r.Functions = append(r.Functions, f)
	}
	slices.SortStableFunc(r.Functions, func(a, b Function) int {
		return cmp.Or(b.executions.Cmp(a.executions), cmp.Compare(a.Index, b.Index))
	})
	for i := range r.Functions {
		f := &r.Functions[i]
		for j := range f.Paths {
			hot = append(hot, &Hot{Function: f.Name, Index: f.Index, ID: f.Paths[j].ID,
				Kind: f.Paths[j].Kind, Count: f.Paths[j].Count, Length: len(f.Paths[j].Blocks), path: &f.Paths[j]})
		}
	}
	if r.Functions == nil {
		r.Functions = []Function{}
	}
	r.Totals.Executions = json.Number(totalExec.String())
	r.Totals.Calls = json.Number(totalCalls.String())
	r.Totals.PossiblePaths = totalPossible.String()
	if totalPossible.Sign() > 0 {
		r.Totals.Coverage = percent(r.Totals.Paths, totalPossible)
	}

	// Ties go to the lower function index, then the lower path id, so that
	// the lists do not depend on the order of the profile's functions.
	tie := func(a, b *Hot) int { return cmp.Or(cmp.Compare(a.Index, b.Index), cmp.Compare(a.ID, b.ID)) }
	slices.SortStableFunc(hot, func(a, b *Hot) int { return cmp.Or(cmp.Compare(b.Count, a.Count), tie(a, b)) })
	r.Hottest = rank(hot, top)
	slices.SortStableFunc(hot, func(a, b *Hot) int { return cmp.Or(cmpWeight(b, a), tie(a, b)) })
	r.HottestByLength = rank(hot, top)
	if opt.Sources != nil {
		r.SourcesLeftOut = leftOut(r.Functions, opt.Sources)
		if n := len(r.SourcesLeftOut); n > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s left out, not read: outside the current directory, the module's directory and the directories given with %s (%s)",
				plural(n, "source file"), srcmap.SourceFlag, srcmap.Some(r.SourcesLeftOut)))
		}
	}
	return r, nil
}

// leftOut returns, in first-seen order, the files fs's blocks are in that
// lie outside roots.
func leftOut(fs []Function, roots *srcmap.Roots) []string {
	seen := map[string]bool{}
	var out []string
	check := func(bs []Block) {
		for _, b := range bs {
			if b.File == "" || seen[b.File] {
				continue
			}
			seen[b.File] = true
			if roots.LeftOut(b.File) {
				out = append(out, b.File)
			}
		}
	}
	for _, f := range fs {
		check(f.Cuts)
		for _, p := range f.Paths {
			check(p.Blocks)
		}
	}
	return out
}

// rank copies the first top entries of sorted, numbering them from 1.
func rank(sorted []*Hot, top int) []Hot {
	out := make([]Hot, 0, min(top, len(sorted)))
	for i, h := range sorted[:min(top, len(sorted))] {
		e := *h
		e.Rank = i + 1
		hi, lo := bits.Mul64(h.Count, uint64(h.Length))
		e.Weight = json.Number(new(big.Int).Add(new(big.Int).Lsh(new(big.Int).SetUint64(hi), 64), new(big.Int).SetUint64(lo)).String())
		out = append(out, e)
	}
	return out
}

// cmpWeight compares count × length exactly: the product can pass 2^64.
func cmpWeight(a, b *Hot) int {
	ahi, alo := bits.Mul64(a.Count, uint64(a.Length))
	bhi, blo := bits.Mul64(b.Count, uint64(b.Length))
	return cmp.Or(cmp.Compare(ahi, bhi), cmp.Compare(alo, blo))
}

// percent is 100 × n / d as a float64, exact up to its rounding even when
// d is far beyond 2^64.
func percent(n int, d *big.Int) float64 {
	q := new(big.Rat).SetFrac(big.NewInt(int64(n)), d)
	q.Mul(q, big.NewRat(100, 1))
	f, _ := q.Float64()
	return f
}

// JSON returns the report's JSON form, indented.
func (r *Report) JSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
