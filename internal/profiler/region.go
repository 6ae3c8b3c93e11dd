package profiler

// This file limits a profile to a region of interest (profile.Region): a
// path counts when its count is added while the region is open. The copy
// adds a path's count where the path ends, and every count is in memory
// at any call (loop counters are kept only in loops without calls), so
// the region's counts are the counters when it closes minus those when it
// opened, summed over its openings (counters.Delta); the instrumented code
// does not change, whatever the strategy.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/pathprof/pathprof/internal/counters"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/srcmap"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// Region is a region of interest: between calls of the imports Start and
// End, which pathprof stubs unless WASI provides them, or while the defined function Func is on the
// stack.
type Region struct {
	Start, End runner.Stub
	// Func is the function's name as given, FuncIndex its index in the
	// original module.
	Func      string
	FuncIndex uint32
}

// ParseMarkers reads --region's "MODULE.START,MODULE.END".
func ParseMarkers(s string) (*Region, error) {
	a, b, ok := strings.Cut(s, ",")
	start, err1 := runner.ParseStub(a)
	end, err2 := runner.ParseStub(b)
	if !ok || err1 != nil || err2 != nil || start.Result != "" || end.Result != "" {
		return nil, fmt.Errorf("--region %q: want MODULE.START,MODULE.END", s)
	}
	if start == end {
		return nil, fmt.Errorf("--region %q: the start and end markers must differ", s)
	}
	return &Region{Start: start, End: end}, nil
}

// FuncRegion returns the region of the defined function called name in
// the module orig: by the names reports show (wasm.Module.FuncNames:
// the name section, exports, DWARF), or its index.
func FuncRegion(orig []byte, name string) (*Region, error) {
	m, err := wasm.Decode(orig)
	if err != nil {
		return nil, err
	}
	srcmap.AddNames(m)
	defined := func(idx uint32) bool {
		return idx >= m.NumImportedFuncs && idx-m.NumImportedFuncs < uint32(len(m.Code))
	}
	found := map[uint32]bool{}
	for idx, n := range m.FuncNames() {
		if n == name && defined(idx) {
			found[idx] = true
		}
	}
	for _, e := range m.Exports {
		if e.Kind == wasm.KindFunc && e.Name == name && defined(e.Index) {
			found[e.Index] = true
		}
	}
	if idx, err := strconv.ParseUint(name, 10, 32); err == nil && defined(uint32(idx)) {
		found[uint32(idx)] = true
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("--region-func %s: the module defines no function of that name (pathprof inspect lists them)", name)
	case 1:
		for idx := range found {
			return &Region{Func: name, FuncIndex: idx}, nil
		}
	}
	return nil, fmt.Errorf("--region-func %s: %d functions have that name; give the index (pathprof inspect lists them)", name, len(found))
}

// withMarkers returns the stubs with the region's markers added where
// missing: a marker is a stub unless WASI provides it.
func (r *Region) withMarkers(stubs []runner.Stub) []runner.Stub {
	if r == nil || r.Func != "" {
		return stubs
	}
	out := append([]runner.Stub(nil), stubs...)
	for _, m := range []runner.Stub{r.Start, r.End} {
		found := m.Module == runner.WASIModule
		for _, s := range stubs {
			found = found || s.Module == m.Module && s.Name == m.Name
		}
		if !found {
			out = append(out, m)
		}
	}
	return out
}

// record is the region's part of the profile.
func (r *Region) record() *profile.Region {
	if r.Func != "" {
		return &profile.Region{Func: r.Func}
	}
	return &profile.Region{Start: r.Start.String(), End: r.End.String()}
}

// regionRun follows the region in one copy's run. It is the copy's
// function listener factory: it listens to the markers, or to Func.
type regionRun struct {
	r     *Region
	res   *instrument.Result
	live  *runner.Live
	mu    sync.Mutex
	open  bool
	depth int
	// delta sums the counts made while the region was open.
	delta counters.Delta
	rec   profile.Region
	cuts  map[uint32]*profile.Cut
	// below are the profiled functions on the stack below Func when the
	// region opened, which its close cuts too.
	below []uint32
	err   error
}

func newRegionRun(r *Region, res *instrument.Result) *regionRun {
	return &regionRun{r: r, res: res}
}

// reset starts a run, whose instances live gives.
func (rr *regionRun) reset(live *runner.Live) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.live, rr.open, rr.depth, rr.delta = live, false, 0, counters.Delta{}
	rr.rec, rr.cuts, rr.below, rr.err = profile.Region{}, map[uint32]*profile.Cut{}, nil, nil
}

func (rr *regionRun) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	if rr.r.Func != "" {
		if def.GoFunction() == nil && def.Index() == rr.r.FuncIndex+rr.res.FuncShift {
			return &regionListener{rr: rr}
		}
		return nil
	}
	if def.GoFunction() == nil {
		return nil
	}
	switch [2]string{def.ModuleName(), def.Name()} {
	case [2]string{rr.r.Start.Module, rr.r.Start.Name}:
		return &regionListener{rr: rr, kind: 1}
	case [2]string{rr.r.End.Module, rr.r.End.Name}:
		return &regionListener{rr: rr, kind: 2}
	}
	return nil
}

// regionListener listens to Func (kind 0), the start marker (1) or the
// end marker (2).
type regionListener struct {
	rr   *regionRun
	kind int
	// other is set for a function of Func's index in another module (the
	// counter module's), which wazero only tells apart once it runs.
	other bool
}

func (l *regionListener) Before(_ context.Context, mod api.Module, _ api.FunctionDefinition, _ []uint64, si experimental.StackIterator) {
	// A wasm function's listener gets its own instance.
	if l.kind == 0 && mod.Name() != runner.ProgramKey {
		l.other = true
		return
	}
	rr := l.rr
	rr.mu.Lock()
	defer rr.mu.Unlock()
	switch l.kind {
	case 0:
		if rr.depth++; rr.depth == 1 {
			rr.below = rr.stack(si, rr.below[:0])
			rr.cross(true, rr.below)
		}
	case 1:
		if !rr.open {
			rr.cross(true, rr.stack(si, nil))
		}
	case 2:
		if rr.open {
			rr.cross(false, rr.stack(si, nil))
		}
	}
}

func (l *regionListener) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {
	l.leave()
}

func (l *regionListener) Abort(context.Context, api.Module, api.FunctionDefinition, error) {
	l.leave()
}

func (l *regionListener) leave() {
	rr := l.rr
	if l.kind != 0 || l.other {
		return
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if rr.depth--; rr.depth == 0 {
		rr.cross(false, rr.below)
	}
}

// visibleFrames is the most frames wazero's stack iterator shows (see
// package tracer, which keeps a stack of its own and so sees them all).
const visibleFrames = 29

// stack appends to fs the profiled functions (original indices) of the
// frames below the callee the iterator starts at: each has a path in
// progress, which the boundary cuts.
func (rr *regionRun) stack(si experimental.StackIterator, fs []uint32) []uint32 {
	si.Next() // the callee
	frames := 1
	for si.Next() {
		if frames++; frames >= visibleFrames {
			rr.rec.CutPartial = true
		}
		def := si.Function().Definition()
		if def.GoFunction() != nil || def.Index() < rr.res.FuncShift {
			continue
		}
		idx := def.Index() - rr.res.FuncShift
		if len(rr.res.Funcs) == 0 {
			break
		}
		if d := int(idx) - int(rr.res.Funcs[0].Index); d >= 0 && d < len(rr.res.Funcs) && rr.res.Funcs[d].Status == profile.StatusProfiled {
			fs = append(fs, idx)
		}
	}
	return fs
}

// cross opens or closes the region, reading the counters and counting
// the cut paths of the functions fs.
func (rr *regionRun) cross(open bool, fs []uint32) {
	if rr.err != nil {
		return
	}
	rr.err = rr.live.Read(func(mods map[string]api.Module) error {
		area, err := counters.Area(mods)
		if err != nil {
			return err
		}
		if open {
			return rr.delta.Open(area)
		}
		return rr.delta.Close(area)
	})
	if rr.err != nil {
		return
	}
	rr.open = open
	if open {
		rr.rec.Opened++
	} else {
		rr.rec.Closed++
	}
	for _, f := range fs {
		c := rr.cuts[f]
		if c == nil {
			c = &profile.Cut{Index: f}
			rr.cuts[f] = c
		}
		if open {
			c.AtOpen++
		} else {
			c.AtClose++
		}
	}
}

// finish returns the region's counts given the run's final instances: a
// region still open when the program ended closes there, cutting nothing
// (no frame is left).
func (rr *regionRun) finish(mods map[string]api.Module) (counters.Counts, error) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return rr.counts(mods)
}

// finishLive is finish for a run that may still be running: its counts
// as they stand, read as the program runs (or as it ended).
func (rr *regionRun) finishLive() (counters.Counts, error) {
	rr.mu.Lock() // before the Live, as cross locks them
	defer rr.mu.Unlock()
	var out counters.Counts
	err := rr.live.Read(func(mods map[string]api.Module) error {
		var err error
		out, err = rr.counts(mods)
		return err
	})
	if errors.Is(err, runner.ErrNotRunning) {
		return rr.counts(nil)
	}
	return out, err
}

func (rr *regionRun) counts(mods map[string]api.Module) (counters.Counts, error) {
	if rr.err != nil {
		return nil, fmt.Errorf("region: %w", rr.err)
	}
	var area []byte
	if mods != nil && rr.open {
		var err error
		if area, err = counters.Area(mods); err != nil {
			return nil, fmt.Errorf("region: %w", err)
		}
	}
	return rr.delta.Counts(area)
}

// profile is the region's record in the profile, cuts in function order.
func (rr *regionRun) profile() *profile.Region {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	p := rr.r.record()
	p.Opened, p.Closed, p.CutPartial = rr.rec.Opened, rr.rec.Closed, rr.rec.CutPartial
	for i := range rr.res.Funcs {
		if c := rr.cuts[rr.res.Funcs[i].Index]; c != nil {
			p.Cut = append(p.Cut, *c)
		}
	}
	return p
}

// liveRegions limits to the region the counts of the runs read while
// their programs ran (those with no region record yet): the closed
// openings' counts, and the open one's up to the read.
func liveRegions(progs []*CopyProgram, runs []*CopyRun) {
	for c, r := range runs {
		if c >= len(progs) || progs[c] == nil || progs[c].region == nil || r == nil || r.region != nil {
			continue
		}
		counts, err := progs[c].region.finishLive()
		if err != nil {
			r.ReadErr = err
			continue
		}
		r.Counts, r.region = counts, progs[c].region.profile()
	}
}

// regionOf is the region's record of the runs, which every copy must
// agree on unless they were read while running (live); nil without a
// region.
func regionOf(runs []*CopyRun, live bool) (*profile.Region, error) {
	rec := runs[0].region
	for c, r := range runs {
		if live || rec == nil || r.region == nil {
			continue
		}
		if r.region.Opened != rec.Opened || r.region.Closed != rec.Closed {
			return nil, fmt.Errorf("copy %d opened its region %d times, copy 0 %d times: the run is not deterministic", c, r.region.Opened, rec.Opened)
		}
	}
	return rec, nil
}
