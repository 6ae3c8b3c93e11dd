package profiler

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"github.com/pathprof/pathprof/internal/atomicfile"
	"github.com/pathprof/pathprof/internal/counters"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/jshost"
	"github.com/pathprof/pathprof/internal/noderun"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/profile"
)

// Manifest formats: a directory of instrumented copies, and one copy's
// counts.
const (
	ManifestFormat = "pathprof-copies"
	PartFormat     = "pathprof-part"
	FilesVersion   = 1
	// PlacedVersion is the version of a manifest whose plan carries edge
	// frequencies that place the copies' probes (FuncInfo.Freq): a reader
	// of version 1 would rebuild other copies from it.
	PlacedVersion = 2
	// SlicedVersion is the version of a manifest whose plan shares out
	// the calls of functions among copies (FuncInfo.Slices): a reader of
	// an earlier version would rebuild copies that profile every call.
	SlicedVersion = 3
	// LoopVersion is the version of a manifest whose plan shares out the
	// iterations of loops (FuncInfo.Loop): a reader of an earlier
	// version would share out calls instead.
	LoopVersion = 4
	// LoopsVersion is the version of a manifest whose plan shares out the
	// iterations of several loops of one function (FuncInfo.Loops): a
	// reader of an earlier version would share out one of them.
	LoopsVersion = 5
	// SpreadVersion is the version of a manifest whose plan deals out a
	// loop's iterations by a test (FuncInfo.Spread): a reader of an
	// earlier version would deal them out by n mod g.
	SpreadVersion = 6
)

// Manifest describes a directory written by WriteDir: the original module
// (original.wasm), copy-N.wasm for each copy (with counters-N.wasm when the
// copies keep their counters in counter modules), the node runner run.cjs,
// and the plan.
type Manifest struct {
	Format   string           `json:"format"`
	Version  int              `json:"version"`
	Module   profile.Module   `json:"module"`
	Strategy profile.Strategy `json:"strategy"`
	Copies   int              `json:"copies"`
	Plan     *partition.Plan  `json:"plan"`
	// Weights says what the plan was weighted by, as a profile of the
	// copies' runs records it (absent for SBL, and in directories
	// written before it was recorded).
	Weights *profile.Weights `json:"weights,omitempty"`
	// CopySHA256 identifies each copy's module, so a part from another
	// plan or module is refused.
	CopySHA256 []string `json:"copy_sha256"`
	// FellBack says that a weighted P3 plan split functions but its
	// copies would have made more probe hits than PBL's on the weights'
	// run, so Plan is PBL's (Copies.FellBack).
	FellBack bool `json:"fell_back,omitempty"`
	// CounterModule says that the copies keep their counters in counter
	// modules (counters-N.wasm) instead of their own memory.
	CounterModule bool `json:"counter_module,omitempty"`
	// Host is HostJS when the copies are for a JavaScript host, which
	// runs them with pathprof.mjs; else empty.
	Host string `json:"host,omitempty"`
	// Runs labels the runs of a work directory written with a runs
	// file (units.go), and Units enumerates its work units.
	Runs  []string `json:"runs,omitempty"`
	Units []Unit   `json:"units,omitempty"`
}

// HostJS is the Manifest.Host of copies for a JavaScript host.
const HostJS = "js"

// Part is one copy's counts on one run, written by "pathprof exec".
type Part struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// ModuleSHA256 and CopySHA256 tie the part to its module and copy.
	ModuleSHA256 string `json:"module_sha256"`
	CopySHA256   string `json:"copy_sha256"`
	Copy         int    `json:"copy"`
	ExitCode     uint32 `json:"exit_code"`
	// OutputSHA256 hashes the program's stdout and stderr, so merge can
	// check that every copy behaved the same.
	OutputSHA256 string  `json:"output_sha256"`
	Seconds      float64 `json:"seconds"`
	Error        string  `json:"error,omitempty"`
	// Counts maps function index to path id (this copy's numbering) to
	// count, as read from the counter module.
	Counts map[string]map[string]uint64 `json:"counts"`
	// Calls maps function index to the copy's count of its calls, for
	// the functions whose calls the copy shares out with others
	// (instrument.CallsExport); absent when they were not read (a
	// node run).
	Calls map[string]uint64 `json:"calls,omitempty"`
	// Interrupted is set when the run was stopped before it ended (a
	// signal, exec's --timeout) and its counts read as they stood.
	Interrupted *profile.Interruption `json:"interrupted,omitempty"`
	// Unit and Input are set in the part of a work unit: its number,
	// and the record of its run's input, which its run's profile keeps.
	Unit  *int           `json:"unit,omitempty"`
	Input *profile.Input `json:"input,omitempty"`
}

// setCalls records a copy's call counters in the part.
func (p *Part) setCalls(calls map[uint32]uint64) {
	p.Calls = nil
	for f, n := range calls {
		if p.Calls == nil {
			p.Calls = map[string]uint64{}
		}
		p.Calls[strconv.FormatUint(uint64(f), 10)] = n
	}
}

func (p *Part) calls() (map[uint32]uint64, error) {
	if p.Calls == nil {
		return nil, nil
	}
	out := map[uint32]uint64{}
	for fs, n := range p.Calls {
		f, err := strconv.ParseUint(fs, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("function %q: %v", fs, err)
		}
		out[uint32(f)] = n
	}
	return out, nil
}

func hashHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// WriteDir writes the copies, the original module and the manifest, which
// records weights as what the plan was weighted by (Copies.WeightedBy);
// for host HostJS also the ES module that runs the copies there, which
// needs their counters in counter modules.
func WriteDir(dir, modulePath string, orig []byte, cs *Copies, weights *profile.Weights, host string) (*Manifest, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	version := FilesVersion
	if slices.ContainsFunc(cs.Plan.Funcs, func(f partition.FuncInfo) bool { return f.Freq != nil }) {
		version = PlacedVersion
	}
	if slices.ContainsFunc(cs.Plan.Funcs, func(f partition.FuncInfo) bool { return f.Slices > 0 }) {
		version = SlicedVersion
	}
	if slices.ContainsFunc(cs.Plan.Funcs, func(f partition.FuncInfo) bool { return f.Loop != 0 }) {
		version = LoopVersion
	}
	if slices.ContainsFunc(cs.Plan.Funcs, func(f partition.FuncInfo) bool { return len(f.Loops) > 0 }) {
		version = LoopsVersion
	}
	if slices.ContainsFunc(cs.Plan.Funcs, func(f partition.FuncInfo) bool { return f.Spread }) {
		version = SpreadVersion
	}
	man := &Manifest{
		Format: ManifestFormat, Version: version,
		Module:   profile.Module{Path: modulePath, SHA256: hashHex(orig), Size: len(orig), CodeOffset: cs.Copy[0].CodeOffset},
		Strategy: cs.Plan.Strategy, Copies: len(cs.Copy), Plan: cs.Plan, Weights: weights, FellBack: cs.FellBack,
		CounterModule: cs.Copy[0].Counters != nil, Host: host,
	}
	files := map[string][]byte{"original.wasm": orig, "run.cjs": noderun.Script}
	var js []jshost.Copy
	for c, res := range cs.Copy {
		files[fmt.Sprintf("copy-%d.wasm", c)] = res.Module
		if res.Counters != nil {
			files[fmt.Sprintf("counters-%d.wasm", c)] = res.Counters
		}
		man.CopySHA256 = append(man.CopySHA256, hashHex(res.Module))
		js = append(js, jshost.Copy{SHA256: man.CopySHA256[c], Counters: res.Counters})
	}
	switch host {
	case "":
	case HostJS:
		b, err := jshost.Module(man.Module.SHA256, jshost.Part{Format: PartFormat, Version: FilesVersion}, js)
		if err != nil {
			return nil, err
		}
		files[jshost.FileName] = b
	default:
		return nil, fmt.Errorf("no host %q", host)
	}
	// The manifest is what a reader trusts, written last: one left from
	// an earlier plan must not name copies half replaced by this one's.
	if err := os.Remove(filepath.Join(dir, "manifest.json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for name, b := range files {
		if err := atomicfile.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, err
		}
	}
	return man, WriteManifest(dir, man)
}

// WriteManifest writes man as dir's manifest, without indentation: a big
// module's plan is megabytes, which every copy's exec and every work unit
// reads, and indentation more than doubled it.
func WriteManifest(dir string, man *Manifest) error {
	mb, err := json.Marshal(man)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, "manifest.json"), append(mb, '\n'), 0o644)
}

// ReadDir reads a directory written by WriteDir and rebuilds its copies
// from the original module and the plan, checking that they are the ones
// in the directory.
func ReadDir(dir string) (*Manifest, []byte, *Copies, error) {
	man, orig, err := ReadManifest(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	cs, err := BuildPlan(orig, man.Plan, instrument.Options{SeparateCounters: man.CounterModule})
	if err != nil {
		return nil, nil, nil, err
	}
	cs.FellBack = man.FellBack
	for c, res := range cs.Copy {
		if err := man.checkCopy(dir, c, res); err != nil {
			return nil, nil, nil, err
		}
	}
	return man, orig, cs, nil
}

// ReadManifest reads the manifest and the original module of a directory
// written by WriteDir, checked against each other, and builds no copy.
func ReadManifest(dir string) (*Manifest, []byte, error) {
	mb, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, nil, err
	}
	var man Manifest
	if err := json.Unmarshal(mb, &man); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", filepath.Join(dir, "manifest.json"), err)
	}
	if man.Format != ManifestFormat {
		return nil, nil, fmt.Errorf("%s: not a pathprof copies manifest", dir)
	}
	if man.Version > SpreadVersion {
		return nil, nil, fmt.Errorf("%s: manifest version %d is newer than this pathprof reads (%d)", dir, man.Version, SpreadVersion)
	}
	if man.Plan == nil || len(man.CopySHA256) != man.Copies {
		return nil, nil, fmt.Errorf("%s: manifest without a plan for its %d copies", dir, man.Copies)
	}
	for i, u := range man.Units {
		if u.Copy < 0 || u.Copy >= man.Copies || u.Run < 0 || u.Run >= len(man.Runs) {
			return nil, nil, fmt.Errorf("%s: unit %d is copy %d of run %d, of no copy or run of the manifest", dir, i, u.Copy, u.Run)
		}
	}
	orig, err := os.ReadFile(filepath.Join(dir, "original.wasm"))
	if err != nil {
		return nil, nil, err
	}
	if hashHex(orig) != man.Module.SHA256 {
		return nil, nil, fmt.Errorf("%s: original.wasm does not match the manifest", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "counters-0.wasm")); err == nil {
		// Written before counters moved into the program's memory, or
		// with --counter-module.
		man.CounterModule = true
	}
	return &man, orig, nil
}

// BuildCopy builds copy c of the directory dir, whose manifest and
// original module ReadManifest read, and no other: running one copy needs
// only its own. The copy's counter layout and numberings, which reading
// its counts needs, come from instrumenting it, so it is rebuilt from the
// analysis and the plan, and checked to be the copy the directory holds.
func (man *Manifest) BuildCopy(dir string, orig []byte, c int) (*instrument.Result, error) {
	if c < 0 || c >= man.Copies {
		return nil, fmt.Errorf("%s has copies 0 to %d, not %d", dir, man.Copies-1, c)
	}
	opt := instrument.Options{SeparateCounters: man.CounterModule}
	analysis, m, dags, err := analyze(orig, opt)
	if err != nil {
		return nil, err
	}
	if err := man.Plan.Check(dags); err != nil {
		return nil, fmt.Errorf("the plan does not fit this module: %w", err)
	}
	copt := copyOptions(m, man.Plan, c, opt)
	copt.Analysis = analysis
	res, err := instrument.Instrument(orig, copt)
	if err != nil {
		return nil, fmt.Errorf("copy %d: %w", c, err)
	}
	if err := man.checkCopy(dir, c, res); err != nil {
		return nil, err
	}
	return res, nil
}

// checkCopy says whether copy c, rebuilt from the plan, is the one the
// manifest records.
func (man *Manifest) checkCopy(dir string, c int, res *instrument.Result) error {
	if hashHex(res.Module) != man.CopySHA256[c] {
		return fmt.Errorf("%s: copy %d rebuilt from the plan differs from the one written: written by another pathprof?", dir, c)
	}
	return nil
}

// OutputHash is the hash of a copy's output that its part records
// (Part.OutputSHA256, as hex): written to as the output comes, it keeps
// none of it.
func OutputHash() hash.Hash { return sha256.New() }

// NewPart turns a run of copy c, whose output hashed to outputSum
// (OutputHash), into a part. The part's error is the run's, or else why
// its counts could not be read.
func NewPart(man *Manifest, c int, run *CopyRun, outputSum []byte) *Part {
	p := &Part{Format: PartFormat, Version: FilesVersion, ModuleSHA256: man.Module.SHA256, CopySHA256: man.CopySHA256[c],
		Copy: c, ExitCode: run.Result.ExitCode, OutputSHA256: hex.EncodeToString(outputSum), Seconds: run.Result.RunTime.Seconds(),
		Counts: map[string]map[string]uint64{}}
	if err := run.Failure(); err != nil {
		p.Error = err.Error()
	}
	for f, ids := range run.Counts {
		m := map[string]uint64{}
		for id, n := range ids {
			m[strconv.FormatUint(id, 10)] = n
		}
		p.Counts[strconv.FormatUint(uint64(f), 10)] = m
	}
	p.setCalls(run.Calls)
	return p
}

// ReadPart reads a part file.
func ReadPart(path string) (*Part, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := ParsePart(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return p, nil
}

// ParsePart parses a part, as "pathprof exec" or a JavaScript host's
// pathprof.mjs writes it.
func ParsePart(b []byte) (*Part, error) {
	var p Part
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, err
	}
	if p.Format != PartFormat {
		return nil, errors.New("not a pathprof part")
	}
	if p.Version > FilesVersion {
		return nil, fmt.Errorf("part version %d is newer than this pathprof reads (%d)", p.Version, FilesVersion)
	}
	return &p, nil
}

func (p *Part) counts() (counters.Counts, error) {
	out := counters.Counts{}
	for fs, ids := range p.Counts {
		f, err := strconv.ParseUint(fs, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("function %q: %v", fs, err)
		}
		m := map[uint64]uint64{}
		for is, n := range ids {
			id, err := strconv.ParseUint(is, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("path id %q: %v", is, err)
			}
			m[id] = n
		}
		out[uint32(f)] = m
	}
	return out, nil
}

// MergeParts merges the parts of one manifest's copies into a profile.
// Every copy must be present once, and all must have behaved alike.
func MergeParts(man *Manifest, cs *Copies, parts []*Part) (*profile.Profile, error) {
	if len(parts) == 0 {
		return nil, errors.New("no parts to merge")
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].Copy < parts[j].Copy })
	byCopy := map[int]*Part{}
	for _, p := range parts {
		if p.ModuleSHA256 != man.Module.SHA256 {
			return nil, fmt.Errorf("part of copy %d is from another module", p.Copy)
		}
		if p.Copy < 0 || p.Copy >= man.Copies || p.CopySHA256 != man.CopySHA256[p.Copy] {
			return nil, fmt.Errorf("part of copy %d is from another plan", p.Copy)
		}
		if byCopy[p.Copy] != nil {
			return nil, fmt.Errorf("two parts of copy %d", p.Copy)
		}
		byCopy[p.Copy] = p
	}
	// An interrupted part's program stopped short: its output and exit
	// code are compared with no other's, and the profile is marked
	// interrupted as the first such part was (approximate with several
	// copies, each stopped at its own point).
	var ref *Part
	var in *profile.Interruption
	for _, p := range parts {
		if p.Interrupted == nil && ref == nil {
			ref = p
		}
		if p.Interrupted != nil && in == nil {
			cp := *p.Interrupted
			cp.Approximate = man.Copies > 1
			in = &cp
		}
	}
	exitCode := parts[0].ExitCode
	if ref != nil {
		exitCode = ref.ExitCode
	}
	results := make([]*copyResult, man.Copies)
	for c := range results {
		p := byCopy[c]
		if p == nil {
			continue
		}
		if p.Interrupted == nil && (p.ExitCode != ref.ExitCode || p.OutputSHA256 != ref.OutputSHA256) {
			return nil, fmt.Errorf("copy %d printed or exited differently from copy %d: the run is not deterministic", c, ref.Copy)
		}
		counts, err := p.counts()
		if err != nil {
			return nil, fmt.Errorf("part of copy %d: %v", c, err)
		}
		calls, err := p.calls()
		if err != nil {
			return nil, fmt.Errorf("part of copy %d: %v", c, err)
		}
		results[c] = &copyResult{exitCode: p.ExitCode, seconds: p.Seconds, err: p.Error, counts: counts, calls: calls, interrupted: p.Interrupted != nil}
	}
	prof := &profile.Profile{Format: profile.Format, Version: profile.Version, Module: man.Module,
		Strategy: man.Strategy, Copies: man.Copies, Weights: man.Weights, Complete: true, ExitCode: exitCode}
	if err := merge(prof, cs, results); err != nil {
		return nil, err
	}
	if in != nil {
		markInterrupted(prof, in)
	}
	return prof, nil
}
