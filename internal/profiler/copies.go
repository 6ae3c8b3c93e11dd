package profiler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/counters"
	"github.com/pathprof/pathprof/internal/estimate"
	"github.com/pathprof/pathprof/internal/heapstart"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/tempfiles"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// Copies are the instrumented copies of a partitioned run.
type Copies struct {
	// Covered is, for UncoveredCopies, how many functions get no probes
	// because the base covered every path of theirs.
	Covered int
	Plan    *partition.Plan
	Copy    []*instrument.Result
	Funcs   []*instrument.Func // the analysis: every defined function's DAG
	// PlanSeconds is the time partition.Make took (for a weighted P3
	// plan that splits functions, both plans'); the analysis and
	// instrumenting the copies are not included.
	PlanSeconds float64
	// FellBack is set when a P3 plan made with weights split functions
	// but its copies would have made more hits on the weights' run than
	// PBL's: the copies are then PBL's (Plan.Strategy still says p3; the
	// manifest records the fallback).
	FellBack bool
	// Estimated is set when the plan was weighted by the static estimate
	// (no weights were given).
	Estimated bool
	// PBL holds, when a P3 plan made with weights split or shared out
	// functions and was kept, the PBL copies it was compared with, so
	// that a run can tell whether it paid: hits of copies that share out
	// calls are estimated before the run.
	PBL *Copies
}

// Build plans a strategy over k copies and instruments each copy.
func Build(orig []byte, strategy profile.Strategy, k int, opt instrument.Options, popt partition.Options) (*Copies, error) {
	if strategy == profile.SBL && popt.Weights == nil {
		return buildSBL(orig, opt, popt)
	}
	analysis, m, dags, err := analyze(orig, opt)
	if err != nil {
		return nil, err
	}
	if strategy != profile.SBL && popt.Weights == nil && !popt.Static {
		funcs := make([]estimate.Func, len(analysis.Funcs))
		for i, f := range analysis.Funcs {
			if f.Num != nil {
				funcs[i] = estimate.Func{Graph: f.Graph, DAG: dags[i], Offset: f.InstrOffset}
			}
		}
		est, err := estimate.Run(m, funcs)
		if err != nil {
			return nil, err
		}
		popt.Weights, popt.Repeated, popt.Recursive = est.Weights, est.Repeated, est.Recursive
		popt.Guessed = true
	}
	if strategy != profile.SBL && popt.Weights != nil && !popt.Guessed && popt.WholeHits == nil {
		// An estimate's costs are wrong by more than the model.
		if popt.WholeHits, err = wholeHits(orig, m, analysis, opt, popt.Weights); err != nil {
			return nil, err
		}
	}
	// A loop of counted shape, not shared out, is counted where it is
	// left or in a local counter, cheaply either way: its iterations are
	// not worth sharing.
	counted := func(f *instrument.Func, h int32) bool { return !opt.NoLoopCounts && f.CountedShape(h) }
	if popt.ShareLoop == nil {
		popt.ShareLoop = func(def int, h int32) bool {
			f := analysis.Funcs[def]
			return f.CanShareLoop(h) == nil && !counted(f, h)
		}
	}
	if popt.ShareLoops == nil {
		popt.ShareLoops = func(def int, hs []int32) bool {
			f := analysis.Funcs[def]
			return f.CanShareLoops(hs) == nil && !slices.ContainsFunc(hs, func(h int32) bool { return counted(f, h) })
		}
	}
	if popt.LoopBytes == nil {
		popt.LoopBytes = func(def int, h int32) int { return analysis.Funcs[def].LoopBytes(h) }
	}
	start := time.Now()
	plan, err := partition.Make(m, dags, strategy, k, popt)
	if err != nil {
		return nil, err
	}
	planSecs := time.Since(start).Seconds()
	cs, err := instrumentCopies(orig, m, plan, analysis, opt)
	if err != nil {
		return nil, err
	}
	cs.PlanSeconds, cs.Estimated = planSecs, popt.Guessed
	if strategy == profile.P3 && popt.Weights != nil && !popt.Guessed && split(plan) {
		// The planner prices probes with a model of the instrumenter;
		// the copies' hits on the profiled run are exact. Keep P3's
		// splits only if they beat the plan with every function whole.
		// (An estimate's hits are no better than its guess, which the
		// plan hedges against.)
		start := time.Now()
		pbl, err := partition.Make(m, dags, profile.PBL, k, popt)
		if err != nil {
			return nil, err
		}
		cs.PlanSeconds += time.Since(start).Seconds()
		pcs, err := instrumentCopies(orig, m, pbl, analysis, opt)
		if err != nil {
			return nil, err
		}
		pcs.PlanSeconds = cs.PlanSeconds
		return fewerHits(cs, pcs, popt.Weights)
	}
	return cs, nil
}

// buildSBL builds SBL's one copy without weights. Its plan numbers every
// function whole, so the copy is instrumented first and the plan made from
// the copy's DAGs: the module is analysed once, not twice, which is most
// of the time and memory a large module takes to instrument.
func buildSBL(orig []byte, opt instrument.Options, popt partition.Options) (*Copies, error) {
	res, err := instrument.Instrument(orig, opt)
	if err != nil {
		return nil, err
	}
	m, err := wasm.DecodeChecked(orig)
	if err != nil {
		return nil, err
	}
	dags := make([]*cfg.DAG, len(res.Funcs))
	popt.StaticOrders = make([]*numbering.TreeOrder, len(res.Funcs))
	for i, f := range res.Funcs {
		dags[i], popt.StaticOrders[i] = f.DAG, f.StaticOrder()
	}
	start := time.Now()
	plan, err := partition.Make(m, dags, profile.SBL, 1, popt)
	if err != nil {
		return nil, err
	}
	return &Copies{Plan: plan, Copy: []*instrument.Result{res}, Funcs: res.Funcs, PlanSeconds: time.Since(start).Seconds()}, nil
}

// fewerHits returns the P3 copies p3 unless the PBL copies pbl would make
// no more hits on the run whose edge frequencies are freq; then pbl, as
// P3's copies (FellBack set).
func fewerHits(p3, pbl *Copies, freq [][]float64) (*Copies, error) {
	mine, err1 := maxHits(p3, freq)
	whole, err2 := maxHits(pbl, freq)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	if whole > mine {
		p3.PBL = pbl
		return p3, nil
	}
	plan := *pbl.Plan
	plan.Strategy = profile.P3
	fell := *pbl
	fell.Plan, fell.PlanSeconds, fell.FellBack = &plan, p3.PlanSeconds, true
	return &fell, nil
}

// split reports whether a plan splits any function.
func split(p *partition.Plan) bool {
	for i := range p.Funcs {
		if p.Funcs[i].Profitable() {
			return true
		}
	}
	return false
}

// maxHits is the largest of the copies' hits on the run whose edge
// frequencies are freq.
func maxHits(cs *Copies, freq [][]float64) (float64, error) {
	var mx float64
	for _, res := range cs.Copy {
		h, err := res.HitsOfFrequencies(freq)
		if err != nil {
			return 0, err
		}
		mx = max(mx, h)
	}
	return mx, nil
}

// BuildPlan instruments the copies of a plan made earlier (read from a
// manifest), checking that it fits the module.
func BuildPlan(orig []byte, plan *partition.Plan, opt instrument.Options) (*Copies, error) {
	analysis, m, dags, err := analyze(orig, opt)
	if err != nil {
		return nil, err
	}
	if err := plan.Check(dags); err != nil {
		return nil, fmt.Errorf("the plan does not fit this module: %w", err)
	}
	return instrumentCopies(orig, m, plan, analysis, opt)
}

// analyze finds every function's DAG with one pass that inserts no
// probes: planning needs the DAGs, and each copy rebuilds the same ones.
func analyze(orig []byte, opt instrument.Options) (*instrument.Result, *wasm.Module, []*cfg.DAG, error) {
	opt.Mode = func(*instrument.Func) instrument.Mode { return instrument.Mode{Kind: partition.None} }
	analysis, err := instrument.Instrument(orig, opt)
	if err != nil {
		return nil, nil, nil, err
	}
	m, err := wasm.DecodeChecked(orig)
	if err != nil {
		return nil, nil, nil, err
	}
	dags := make([]*cfg.DAG, len(analysis.Funcs))
	for i, f := range analysis.Funcs {
		dags[i] = f.DAG
	}
	return analysis, m, dags, nil
}

// instrumentCopies instruments each copy of plan, made from analysis: the
// copies share its graphs, DAGs and numberings (instrument.Options.Analysis).
func instrumentCopies(orig []byte, m *wasm.Module, plan *partition.Plan, analysis *instrument.Result, opt instrument.Options) (*Copies, error) {
	cs := &Copies{Plan: plan, Funcs: analysis.Funcs}
	for c := range plan.Copies {
		copt := copyOptions(m, plan, c, opt)
		copt.Analysis = analysis
		res, err := instrument.Instrument(orig, copt)
		if err != nil {
			return nil, fmt.Errorf("copy %d: %w", c, err)
		}
		cs.Copy = append(cs.Copy, res)
	}
	return cs, nil
}

// copyOptions is opt with the mode of each function in copy c of plan.
func copyOptions(m *wasm.Module, plan *partition.Plan, c int, opt instrument.Options) instrument.Options {
	cp := &plan.Copies[c]
	opt.Mode = func(f *instrument.Func) instrument.Mode {
		def := int(f.Index - m.NumImportedFuncs)
		mode, edges := cp.Mode(def)
		fi := &plan.Funcs[def]
		md := instrument.Mode{Kind: mode, Freq: fi.Freq}
		switch mode {
		case partition.None:
			md.Freq = nil
		case partition.Selective:
			md.Interesting = partition.EdgeSet(edges, len(f.DAG.Edges))
		case partition.Sliced:
			md.Slices, md.Slots, md.Loop, md.Loops, md.Spread = fi.Slices, cp.Slots(def), fi.Loop, fi.Loops, fi.Spread
		}
		return md
	}
	return opt
}

// runCopies runs every copy once on the same input, in waves of at most
// jobs copies each compiled, run and released before the next wave is
// compiled (so memory holds at most jobs compiled copies), and checks
// that they all printed and exited alike. Copy 0's output goes to
// cfg.Stdout and cfg.Stderr as it comes; every copy's is compared
// with the others' as it comes, by chunk digests (outputCheck), and a
// divergence is reported as soon as it shows. Each copy writes to its own copy of every writable mount, so
// copies cannot disturb each other; copy 0 uses the real directories, so
// the host sees the effects of one run.
//
// A reason received on stop interrupts the run: every copy still running
// has its counts read as they stand (readLive), all at once, and
// runCopies returns without waiting for them, with the interruption.
//
// wazero's compiled code cannot be preempted: a goroutine running a
// program holds its thread until the program calls out. So that the
// interruption can be taken at all, runCopies keeps a thread (GOMAXPROCS)
// for Go beside the copies running at once. And a garbage collection
// waits for every goroutine to stop, the programs' included: one started
// by a copy compiling while another computes would hold everything up,
// the interruption too. So no copy compiles while another runs, and
// runCopies collects before a wave starts, and while it runs collects
// only when the heap has grown by runHeadroom (GOGC off, a memory limit),
// which starting a few copies does not reach (collector);
// at the interruption the collector goes off for good, as the copies run
// on, and the waves not started are not: their copies are reported not
// started.
//
// With every > 0, snapshot is called every that often while the copies
// run, with every copy's counts read as they stand in the same way, the
// interruption's reason profile.SnapshotReason; the copies run on.
//
// progs, if not nil, are the copies compiled before (a Worker's), which
// runCopies neither compiles nor closes. Unless alone, runCopies leaves
// the threads and the collector alone, since other Workers' runs may be
// running beside it: an interruption is then taken when no collection
// is waiting for a program.
func runCopies(ctx context.Context, cs *Copies, progs []*CopyProgram, alone bool, cfg runner.Config, jobs int, progress func(string, ...any), stop <-chan string, every time.Duration, snapshot func([]*CopyRun, *profile.Interruption), region *Region, engine Engine) ([]*CopyRun, *profile.Interruption, error) {
	k := len(cs.Copy)
	cfgs := make([]runner.Config, k)
	var stdoutCheck, stderrCheck *outputCheck
	closers := make([][]io.Closer, k)
	if k == 1 {
		// Nothing to compare: the one copy runs as the program would.
		cfgs[0] = cfg
	} else {
		var stdin []byte
		if cfg.Stdin != nil {
			var err error
			if stdin, err = io.ReadAll(cfg.Stdin); err != nil {
				return nil, nil, fmt.Errorf("read standard input: %w", err)
			}
		}
		if err := checkTempOutside(cfg.Dirs, os.TempDir()); err != nil {
			return nil, nil, err
		}
		if err := checkRoom(cfg.Dirs, k-1, os.TempDir()); err != nil {
			return nil, nil, err
		}
		var tmpDirs []string
		defer func() {
			for _, d := range tmpDirs {
				tempfiles.RemoveAll(d)
			}
		}()
		diverged := func(err error) { progress("%v", err) }
		stdoutCheck, stderrCheck = newOutputCheck("stdout", k, diverged), newOutputCheck("stderr", k, diverged)
		for c := range cs.Copy {
			cc := cfg
			cc.Stdin = bytes.NewReader(stdin)
			sout, serr := stdoutCheck.writer(c), stderrCheck.writer(c)
			cc.Stdout, cc.Stderr = sout, serr
			closers[c] = []io.Closer{sout, serr}
			cc.Dirs = append([]runner.Mount(nil), cfg.Dirs...)
			if c == 0 {
				if cfg.Stdout != nil {
					cc.Stdout = io.MultiWriter(cfg.Stdout, cc.Stdout)
				}
				if cfg.Stderr != nil {
					cc.Stderr = io.MultiWriter(cfg.Stderr, cc.Stderr)
				}
			}
			if c > 0 {
				for i, d := range cc.Dirs {
					if d.ReadOnly {
						continue
					}
					tmp, err := tempfiles.MkdirTemp("", "pathprof-copy-")
					if err != nil {
						return nil, nil, err
					}
					tmpDirs = append(tmpDirs, tmp)
					if err := copyTree(d.HostDir, tmp); err != nil {
						return nil, nil, fmt.Errorf("copy %s for copy %d: %w", d.HostDir, c, err)
					}
					cc.Dirs[i].HostDir = tmp
				}
			}
			cfgs[c] = cc
		}
	}
	// Copies are compiled and run in waves of at most jobs copies: a wave
	// is compiled, then run, then released before the next is compiled,
	// so that memory holds at most jobs compiled copies whatever k is.
	// Nothing compiles while a copy runs: compiling allocates much, and a
	// collection while a copy computes would wait for it to call out.
	// Progs compiled before (a Worker's) run jobs at a time as one wave.
	slots := min(max(jobs, 1), k)
	owned := progs == nil
	if owned {
		progs = make([]*CopyProgram, k)
	}
	compileErrs := make([]error, k)
	// shells keep each copy's region follower for liveRegions, which
	// must not keep an owned copy's code alive once it has run.
	shells := make([]*CopyProgram, k)
	var regions []*regionRun
	if owned {
		regions = regionRuns(region, cs)
	}
	for c := range shells {
		shells[c] = &CopyProgram{}
		switch {
		case !owned:
			shells[c].region = progs[c].region
		case regions != nil:
			shells[c].region = regions[c]
		}
	}
	interrupted := false
	gc := &collector{alone: alone}
	if (stop != nil || every > 0) && alone && !ranOn.Load() {
		if n := slots + 1; runtime.GOMAXPROCS(0) < n {
			old := runtime.GOMAXPROCS(n)
			defer func() {
				if !interrupted { // a change stops the world, copies included
					runtime.GOMAXPROCS(old)
				}
			}()
		}
		gc.managed = true
	}
	runs := make([]*CopyRun, k)
	lives := make([]*runner.Live, k)
	readers := make([]counters.LiveReader, k)
	finished := make([]chan struct{}, k)
	for c := range cs.Copy {
		lives[c], finished[c] = &runner.Live{}, make(chan struct{})
		cfgs[c].Live = lives[c]
	}
	runOne := func(c int) {
		defer close(finished[c])
		if k > 1 {
			progress(runningCopy, c+1, k)
		}
		if compileErrs[c] != nil {
			// A failed compilation (a missing import) is the run's error.
			runs[c] = &CopyRun{Err: compileErrs[c], Counts: counters.Counts{}, res: cs.Copy[c]}
		} else {
			runs[c] = progs[c].Run(ctx, cfgs[c])
			if owned {
				progs[c].Close(context.WithoutCancel(ctx))
				progs[c] = nil
			}
		}
		for _, w := range closers[c] {
			w.Close()
		}
	}
	// setupErr is a wave's compile error that fails the whole run (a
	// missing import): it is set before done is closed.
	var setupErr error
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		for _, wave := range waves(k, slots) {
			if owned {
				if !gc.compiling() {
					return // interrupted: the copies not started stay so
				}
				compileWave(ctx, cs, wave, progs, compileErrs, cfgs, regions, engine)
				for _, c := range wave {
					if runner.IsSetupError(compileErrs[c]) {
						for _, c := range wave {
							if progs[c] != nil {
								progs[c].Close(context.WithoutCancel(ctx))
							}
						}
						setupErr = compileErrs[c]
						return
					}
				}
			}
			if !gc.running() {
				return
			}
			var wg sync.WaitGroup
			if owned {
				for _, c := range wave {
					wg.Go(func() { runOne(c) })
				}
			} else {
				// A Worker's copies are compiled already: all of them
				// are one wave, run slots at a time.
				sem := make(chan struct{}, slots)
				for c := range k {
					wg.Go(func() {
						sem <- struct{}{}
						defer func() { <-sem }()
						runOne(c)
					})
				}
			}
			wg.Wait()
			if !owned {
				break
			}
		}
	}()
	var tick <-chan time.Time
	var last int64 // what the last snapshot allocated
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
wait:
	for {
		select {
		case <-done:
			break wait
		case reason := <-stop:
			interrupted = true
			ranOn.Store(true)
			gc.stop()
			runs, in := readLive(cs, runs, lives, readers, finished, reason, start)
			liveRegions(shells, runs)
			return runs, in, nil
		case <-tick:
			// Room for twice what the last snapshot allocated.
			gc.headroom(max(runHeadroom/2, 2*last))
			before := heapAllocated()
			live, in := readLive(cs, runs, lives, readers, finished, profile.SnapshotReason, start)
			liveRegions(shells, live)
			snapshot(live, in)
			last = heapAllocated() - before
			gc.headroom(runHeadroom / 2)
		}
	}
	gc.restore()
	if setupErr != nil {
		return nil, nil, setupErr
	}
	if k > 1 {
		if err := errors.Join(stdoutCheck.finish(), stderrCheck.finish()); err != nil {
			return nil, nil, err
		}
	}
	for c := 1; c < k; c++ {
		if runs[c].Result.ExitCode != runs[0].Result.ExitCode {
			return nil, nil, fmt.Errorf("copy %d exited with %d, copy 0 with %d: the run is not deterministic", c, runs[c].Result.ExitCode, runs[0].Result.ExitCode)
		}
	}
	return runs, nil, nil
}

// ranOn is set once an interruption returned while a program may run on
// (runCopies does not wait for it): from then on the process must not stop
// the world (a collection, runtime.ReadMemStats), which would wait for that
// program to call out, so the collector stays off.
var ranOn atomic.Bool

// runningCopy is the progress line of a copy that starts.
const runningCopy = "running copy %d of %d"

// compileCopies compiles copy c of cs into progs[c] with cfgs[c] for
// engine, in waves of jobs copies (compileWave), and returns each copy's
// compile error. With release, each wave is closed once compiled, and
// the next compiled in its place: only whether each compiles is kept.
func compileCopies(ctx context.Context, cs *Copies, progs []*CopyProgram, cfgs []runner.Config, jobs int, region *Region, engine Engine, release bool) []error {
	k := len(cs.Copy)
	errs := make([]error, k)
	regions := regionRuns(region, cs)
	for i, wave := range waves(k, min(max(jobs, 1), k)) {
		if release && i > 0 {
			runtime.GC() // unmaps the last wave's code
		}
		compileWave(ctx, cs, wave, progs, errs, cfgs, regions, engine)
		if release {
			for _, c := range wave {
				if progs[c] != nil {
					progs[c].Close(ctx)
					progs[c] = nil
				}
			}
		}
	}
	return errs
}

// waves splits copies 0 to k-1 into consecutive waves of at most slots
// copies.
func waves(k, slots int) [][]int {
	var ws [][]int
	for first := 0; first < k; first += slots {
		var wave []int
		for c := first; c < min(first+slots, k); c++ {
			wave = append(wave, c)
		}
		ws = append(ws, wave)
	}
	return ws
}

// regionRuns returns each copy's follower of region, or nil without one.
func regionRuns(region *Region, cs *Copies) []*regionRun {
	if region == nil {
		return nil
	}
	rs := make([]*regionRun, len(cs.Copy))
	for c := range rs {
		rs[c] = newRegionRun(region, cs.Copy[c])
	}
	return rs
}

// compileWave compiles the copies of wave at once, copy c into progs[c]
// with cfgs[c] (and regions[c], when there is a region) for engine, its
// error in errs[c]. The cores are shared out among them as compilation
// workers: SBL's one copy compiles on every core, not one.
func compileWave(ctx context.Context, cs *Copies, wave []int, progs []*CopyProgram, errs []error, cfgs []runner.Config, regions []*regionRun, engine Engine) {
	var wg sync.WaitGroup
	for i, c := range wave {
		wg.Go(func() {
			cfg := cfgs[c]
			var rr *regionRun
			if regions != nil {
				rr = regions[c]
				cfg.Stubs, cfg.Listener = rr.r.withMarkers(cfg.Stubs), rr
			}
			cctx := ctx
			if n := compileWorkers(cores, len(wave), i); n > 1 {
				cctx = experimental.WithCompilationWorkers(ctx, n)
			}
			progs[c], errs[c] = compileCopy(cctx, cs.Copy[c], cfg, engine)
			if errs[c] == nil {
				progs[c].region = rr
			}
		})
	}
	wg.Wait()
}

// cores is how many goroutines the process runs at once by default: the
// machine's cores, or fewer when it is limited to fewer.
var cores = runtime.GOMAXPROCS(0)

// compileWorkers is how many compilation workers the i-th of n copies
// compiled at once gets out of cores: an equal share, the first copies
// one more while the cores do not divide evenly, and at least one.
func compileWorkers(cores, n, i int) int {
	w := cores / n
	if i < cores%n {
		w++
	}
	return max(w, 1)
}

// collector keeps the garbage collector off while interruptible copies
// run and on while they compile (runCopies says why): a wave collects,
// then turns the collector off with a memory limit (running), and turns
// it back on after (compiling, restore). Once the run is interrupted
// (stop), it leaves the collector as it is for good, and no wave starts.
type collector struct {
	// managed is set when the collector is to be kept off while copies
	// run; otherwise only the code of a wave is collected before the
	// next compiles, and that only when alone (no other Worker's
	// program runs, which a collection would wait for).
	managed, alone bool

	mu         sync.Mutex
	stopped    bool
	off        bool
	waves      int
	limit      int64
	oldLimit   int64
	oldPercent int
}

// compiling is called before a wave compiles, and reports false once the
// run is interrupted. It frees the code of the last wave, which runs no
// more, so that the next is compiled in its place.
func (g *collector) compiling() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return false
	}
	g.turnOn()
	if g.waves++; g.waves > 1 && g.alone {
		runtime.GC()
	}
	return true
}

// running is called before a wave runs, and reports false once the run
// is interrupted.
func (g *collector) running() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return false
	}
	if !g.managed || g.off {
		return true
	}
	runtime.GC()
	// The collection just run ends a heap start; its settings come back
	// now, before these are made, not later over them.
	heapstart.End()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	g.oldPercent = debug.SetGCPercent(-1)
	g.limit = int64(ms.Sys-ms.HeapReleased) + runHeadroom
	g.oldLimit = debug.SetMemoryLimit(g.limit)
	g.off = true
	return true
}

// headroom keeps need free below the memory limit while the collector is
// off (keepHeadroom).
func (g *collector) headroom(need int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.off {
		g.limit = keepHeadroom(g.limit, need)
	}
}

// stop is called when the run is interrupted: the copies that run then
// run on, so the collector stays off, without a limit.
func (g *collector) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	if g.off {
		debug.SetMemoryLimit(math.MaxInt64)
	}
}

// restore turns the collector back on when the copies have all run.
func (g *collector) restore() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.stopped {
		g.turnOn()
	}
}

func (g *collector) turnOn() {
	if g.off {
		debug.SetMemoryLimit(g.oldLimit)
		debug.SetGCPercent(g.oldPercent)
		g.off = false
	}
}

// runHeadroom is how much the heap may grow while interruptible copies
// run before a garbage collection (runCopies).
const runHeadroom = 64 << 20

// keepHeadroom raises the memory limit, if need be, so that at least
// need is left above what the process holds now (then need plus
// runHeadroom/2), and returns the limit. A snapshot's garbage cannot be
// collected while the copies compute (a collection would wait for every
// program to call out, the next snapshot and an interruption too), so it
// stays until the run ends; without the raise it would bring that
// collection on. It reads runtime/metrics, which, unlike
// runtime.ReadMemStats, does not stop the world.
func keepHeadroom(limit, need int64) int64 {
	ms := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(ms)
	held := int64(ms[0].Value.Uint64() - ms[1].Value.Uint64())
	if held+need > limit {
		limit = held + need + runHeadroom/2
		debug.SetMemoryLimit(limit)
	}
	return limit
}

// heapAllocated is how much the heap has allocated since the process started.
func heapAllocated() int64 {
	ms := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(ms)
	return int64(ms[0].Value.Uint64())
}

// errInterrupted is the error of a copy whose counts were read while it
// ran.
var errInterrupted = errors.New("interrupted: counts read while the program ran")

// readLive reads every copy's counts as they stand, one copy right after
// the other: those of a running copy from its memory (readers[c], which
// keeps its copies of the counter area for the next snapshot),
// those of a finished copy from its run (runs[c], set once finished[c] is
// closed). A copy that is neither running nor about to finish had not
// started.
func readLive(cs *Copies, runs []*CopyRun, lives []*runner.Live, readers []counters.LiveReader, finished []chan struct{}, reason string, start time.Time) ([]*CopyRun, *profile.Interruption) {
	at := time.Now()
	out := make([]*CopyRun, len(lives))
	var idle []int
	for c, l := range lives {
		r := &CopyRun{res: cs.Copy[c], Err: errInterrupted, Result: runner.Result{ExitCode: 1, RunTime: at.Sub(start)}}
		err := l.Read(func(mods map[string]api.Module) error {
			r.Counts, r.ReadErr = readers[c].Read(mods)
			return nil
		})
		if err != nil {
			idle = append(idle, c)
			continue
		}
		if r.Counts == nil {
			r.Counts = counters.Counts{}
		}
		out[c] = r
	}
	// A copy between the end of its program and the end of its run
	// finishes in a moment; one waiting for its wave does not.
	expired := make(chan struct{})
	wait := time.AfterFunc(100*time.Millisecond, func() { close(expired) })
	defer wait.Stop()
	for _, c := range idle {
		select {
		case <-finished[c]:
		case <-expired:
		}
		select {
		case <-finished[c]:
			out[c] = runs[c]
		default:
		}
		if out[c] == nil {
			out[c] = &CopyRun{res: cs.Copy[c], Counts: counters.Counts{}, Err: errors.New("not started when the run was interrupted"), Result: runner.Result{ExitCode: 1}}
		}
	}
	return out, &profile.Interruption{Reason: reason, Time: at.UTC().Format(time.RFC3339), Seconds: at.Sub(start).Seconds(), Approximate: len(lives) > 1}
}

// copyResult is one copy's run as a profile takes it in, from a CopyRun
// or from a part file.
type copyResult struct {
	exitCode uint32
	seconds  float64
	err      string // the run's error, "" if none
	readErr  string // why the counters could not be read, "" if they were
	counts   counters.Counts
	calls    map[uint32]uint64
	// interrupted is set when the counts were read while the copy ran:
	// the copies' counts then need not agree.
	interrupted bool
}

// MergeRuns makes the profile of one run of each copy (runs[c] is copy
// c's): every copy's counted paths regenerated and merged, and every
// run's facts and probe hits. A run that failed marks the profile
// incomplete. The profile's Module is left to the caller but for its code
// offset; its exit code is copy 0's.
func MergeRuns(cs *Copies, runs []*CopyRun) (*profile.Profile, error) {
	if len(runs) != len(cs.Copy) {
		return nil, fmt.Errorf("%d runs of %d copies", len(runs), len(cs.Copy))
	}
	p := &profile.Profile{Format: profile.Format, Version: profile.Version, Module: profile.Module{CodeOffset: cs.Copy[0].CodeOffset},
		Strategy: cs.Plan.Strategy, Copies: len(cs.Copy), Complete: true, ExitCode: runs[0].Result.ExitCode}
	results := make([]*copyResult, len(runs))
	for c, r := range runs {
		results[c] = &copyResult{exitCode: r.Result.ExitCode, seconds: r.Result.RunTime.Seconds(), counts: r.Counts, calls: r.Calls,
			interrupted: errors.Is(r.Err, errInterrupted)}
		if r.Err != nil {
			results[c].err = r.Err.Error()
		}
		if r.ReadErr != nil {
			results[c].readErr = r.ReadErr.Error()
		}
	}
	if err := merge(p, cs, results); err != nil {
		return nil, err
	}
	return p, nil
}

// merge adds to p the runs of the copies (results[c] is copy c's, nil if
// it is missing) and their merged functions, and marks p incomplete where
// a run failed or is missing. Runs are named by their copy only when
// there are several.
func merge(p *profile.Profile, cs *Copies, results []*copyResult) error {
	incomplete := func(c int, why string) {
		if len(results) > 1 {
			why = fmt.Sprintf("copy %d: %s", c, why)
		}
		p.Complete = false
		p.Incomplete = joinReason(p.Incomplete, why)
	}
	var parts [][]profile.Function
	var calls []map[uint32]uint64
	approx := false
	for c, r := range results {
		if r == nil {
			p.Complete = false
			p.Incomplete = joinReason(p.Incomplete, fmt.Sprintf("copy %d missing", c))
			continue
		}
		switch {
		case r.interrupted:
			approx = true // the caller says why the profile is incomplete
		case r.err != "":
			incomplete(c, r.err)
		}
		if r.readErr != "" {
			incomplete(c, "counters: "+r.readErr)
		}
		fs, _, err := cs.Copy[c].Functions(r.counts)
		if err != nil {
			return fmt.Errorf("copy %d: %w", c, err)
		}
		p.Runs = append(p.Runs, profile.Run{Copy: c, Seconds: r.seconds, ExitCode: r.exitCode, Error: r.err})
		parts = append(parts, fs)
		calls = append(calls, r.calls)
	}
	if !approx {
		if err := checkCalls(calls); err != nil {
			return err
		}
	}
	var err error
	if p.Functions, err = mergeFunctions(parts, cs.Shared(), approx); err != nil {
		return err
	}
	// A selective copy also runs probes on the paths it does not count:
	// its hits come from the merged, exact profile; those of the calls
	// it shares out, from its own counts.
	for i := range p.Runs {
		if p.Runs[i].ProbeHits, err = runHits(cs.Copy[p.Runs[i].Copy], p.Functions, parts[i], calls[i]); err != nil {
			return err
		}
	}
	return nil
}

// mergeFunctions unions the copies' profiles into one. A path that two
// copies both report must have the same count in both: the copies ran the
// same deterministic program on the same input. The functions in shared
// have their calls shared out among copies (partition.FuncInfo.Slices):
// their copies' counts add up. With approx, the copies' counts were read
// while they ran, each at its own point of the program: a path two copies
// count takes the larger count.
func mergeFunctions(parts [][]profile.Function, shared map[uint32]bool, approx bool) ([]profile.Function, error) {
	byIndex := map[uint32]*profile.Function{}
	var order []uint32
	type origin struct{ copy, at int }
	seen := map[uint32]map[uint64]origin{} // function -> id -> where it is
	for c, fs := range parts {
		for _, f := range fs {
			m := byIndex[f.Index]
			if m == nil {
				cp := f
				cp.Paths = nil
				m = &cp
				byIndex[f.Index] = m
				order = append(order, f.Index)
				seen[f.Index] = map[uint64]origin{}
			}
			for _, p := range f.Paths {
				if o, ok := seen[f.Index][p.ID]; ok {
					q := &m.Paths[o.at]
					switch {
					case shared[f.Index]:
						q.Count += p.Count
					case approx:
						q.Count = max(q.Count, p.Count)
					case q.Count != p.Count:
						return nil, fmt.Errorf("function %d path %d: copy %d counted %d, copy %d counted %d: the run is not deterministic", f.Index, p.ID, o.copy, q.Count, c, p.Count)
					}
					continue
				}
				seen[f.Index][p.ID] = origin{c, len(m.Paths)}
				m.Paths = append(m.Paths, p)
			}
		}
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	out := make([]profile.Function, 0, len(order))
	for _, i := range order {
		f := byIndex[i]
		sort.Slice(f.Paths, func(a, b int) bool { return f.Paths[a].ID < f.Paths[b].ID })
		if f.Paths == nil {
			f.Paths = []profile.Path{}
		}
		out = append(out, *f)
	}
	return out, nil
}

// Shared lists the functions, by index in the module, whose calls the
// plan shares out among copies: the merge adds up their counts.
func (cs *Copies) Shared() map[uint32]bool {
	out := map[uint32]bool{}
	for def, fi := range cs.Plan.Funcs {
		if fi.Slices > 0 && def < len(cs.Funcs) {
			out[cs.Funcs[def].Index] = true
		}
	}
	return out
}

// SharedSummary says what the plan shares out among copies, as "the calls
// of 2 functions and the loop iterations of 1 function", or "" if nothing.
func (cs *Copies) SharedSummary() string {
	var calls, loops int
	for _, fi := range cs.Plan.Funcs {
		switch {
		case fi.Slices > 0 && fi.Loop != 0:
			loops++
		case fi.Slices > 0:
			calls++
		}
	}
	var parts []string
	if calls > 0 {
		parts = append(parts, "the calls of "+funcsWord(calls))
	}
	if loops > 0 {
		parts = append(parts, "the loop iterations of "+funcsWord(loops))
	}
	return strings.Join(parts, " and ")
}

// checkCalls checks that the copies that share out a function's calls
// counted as many calls (calls holds each copy's counters, nil where they
// are unknown): they ran the same deterministic program, and their slots
// number the calls alike only then.
func checkCalls(calls []map[uint32]uint64) error {
	first := map[uint32]int{}
	for c, m := range calls {
		for _, f := range slices.Sorted(maps.Keys(m)) {
			o, ok := first[f]
			if !ok {
				first[f] = c
				continue
			}
			if calls[o][f] != m[f] {
				return fmt.Errorf("function %d: copy %d counted %d calls, copy %d counted %d: the run is not deterministic", f, o, calls[o][f], c, m[f])
			}
		}
	}
	return nil
}

// Analysis is a module's functions and DAGs, without probes.
type Analysis struct {
	Result *instrument.Result
	SHA256 string
}

// Analyze finds every function's DAG, as planning and EdgeFrequencies need.
func Analyze(orig []byte) (*Analysis, error) {
	res, _, _, err := analyze(orig, instrument.Options{})
	if err != nil {
		return nil, err
	}
	return &Analysis{Result: res, SHA256: hashHex(orig)}, nil
}
