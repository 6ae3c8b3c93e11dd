package runs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pathprof/pathprof/internal/heapstart"
	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/profile"
)

// Options configure Profile.
type Options struct {
	// Profile plans the copies every run uses (strategy, copies, the
	// copies run at once in a run as Jobs, the module's path, the
	// progress lines of building them); its Run gives the compile-time
	// fields (such as the compilation cache) and the program's name.
	Profile profiler.Options
	// Workers is how many runs go at once (default 1); each worker
	// compiles the copies once and runs them on one input after another.
	Workers int
	// Timeout stops a run without a timeout of its own after it.
	Timeout time.Duration
	// Output, if set, gives run i its standard output and error; nil
	// writers discard. The writers are not used after the run ends.
	Output func(i int, s *Spec) (stdout, stderr io.Writer)
	// Progress, if set, is called after each run, one call at a time.
	Progress func(Progress)
	// Stop, if it receives a reason, stops the runs: those running keep
	// their counts as they stand (marked interrupted), those not started
	// are recorded as not run.
	Stop <-chan string
}

// Progress is where the runs stand, after the run Last ended.
type Progress struct {
	Done, Failed, Total int
	Elapsed             time.Duration
	// Left estimates the time the other runs will take: the mean time
	// per run so far, over the workers; 0 when all are done.
	Left time.Duration
	Last Result
}

// Result is how one run went.
type Result struct {
	Index int // in the specs
	Label string
	// Err says why the run failed: a trap, an interruption, an exit code
	// other than 0, an input that could not be read; nil if it did not.
	Err      error
	ExitCode uint32
	Seconds  float64
}

// Profile profiles each run of specs with the module orig on
// opt.Workers workers and merges the profiles as they come, in the
// order of no particular run: the merged profile (profile.Merger) is the
// same whichever run ends first. A run that fails is recorded in its
// input, and its counts kept; one that yields no profile at all (its
// input unreadable) is recorded as an input without counts. The error
// is for what stops every run: the copies cannot be built or compiled.
func Profile(ctx context.Context, orig []byte, specs []Spec, opt Options) (*profile.Profile, []Result, error) {
	pr, err := profiler.Prepare(orig, opt.Profile)
	if err != nil {
		return nil, nil, err
	}
	if len(specs) == 0 {
		return nil, nil, errors.New("no runs")
	}
	specs = slices.Clone(specs)
	for i := range specs {
		if specs[i].Label == "" {
			specs[i].Label = fmt.Sprintf("run %d", i+1)
		}
	}
	workers := min(max(opt.Workers, 1), len(specs))
	// The worker's copies compile beside each other, as jobs allow;
	// with a compilation cache the first compiles and the others load.
	ws := make([]*profiler.Worker, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range ws {
		wg.Go(func() { ws[i], errs[i] = pr.Compile(ctx, opt.Profile.Run) })
	}
	wg.Wait()
	for _, w := range ws {
		if w != nil {
			w.Alone = workers == 1
		}
	}
	defer func() {
		for _, w := range ws {
			if w != nil {
				w.Close(context.WithoutCancel(ctx))
			}
		}
	}()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	// A running program holds its thread (runCopies): keep one for Go
	// beside every copy that may run, so that stops are taken.
	k := len(pr.Copies().Copy)
	jobs := opt.Profile.Jobs
	if jobs < 1 {
		jobs = k
	}
	r := &batch{opt: &opt, pr: pr, specs: specs, merger: profile.NewMerger(), results: make([]Result, len(specs)),
		start: time.Now(), workers: workers, stopped: make(chan struct{})}
	if n := workers*min(jobs, k) + 1; runtime.GOMAXPROCS(0) < n {
		old := runtime.GOMAXPROCS(n)
		defer func() {
			if !r.ranAway.Load() { // a change stops the world, programs included
				runtime.GOMAXPROCS(old)
			}
		}()
	}

	stops := make([]chan string, workers)
	for i := range stops {
		stops[i] = make(chan string, 1)
	}
	if opt.Stop != nil {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case reason := <-opt.Stop:
				r.mu.Lock()
				r.reason = reason
				close(r.stopped)
				r.mu.Unlock()
				for _, s := range stops {
					select {
					case s <- reason:
					default: // a timeout is on its way
					}
				}
			case <-done:
			}
		}()
	}
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range specs {
			select {
			case next <- i:
			case <-r.stopped:
				return
			}
		}
	}()
	for wi := range ws {
		wg.Go(func() {
			for i := range next {
				select {
				case <-r.stopped:
					return // the rest are recorded as not run
				default:
				}
				if !r.one(ctx, ws[wi], i, stops[wi]) {
					continue
				}
				r.runaway()
				select {
				case <-r.stopped:
					return
				default:
				}
				// The stopped program runs on in the worker's copies,
				// which cannot run another until it ends: compile
				// afresh, and leave those (they are not closed). A
				// worker whose runs compile their copies is free.
				if ws[wi].CompilesPerRun() {
					continue
				}
				w, err := pr.Compile(ctx, opt.Profile.Run)
				if err != nil {
					r.mu.Lock()
					r.err = cmp.Or(r.err, err)
					r.mu.Unlock()
					ws[wi] = nil
					return
				}
				w.Alone = workers == 1
				ws[wi] = w
			}
		})
	}
	wg.Wait()
	// Runs never started (a stop) are recorded too: nothing is dropped.
	for i := range specs {
		if r.results[i].Label == "" {
			why := fmt.Sprintf("not run: stopped by %s before it started", r.reason)
			r.add(i, nil, errors.New(why))
		}
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	p, err := r.merger.Profile()
	if err != nil {
		return nil, nil, err
	}
	if base := opt.Profile.UncoveredFrom; base != nil {
		profiler.MarkUncovered(p, base, opt.Profile.UncoveredName)
	}
	// Every run had the same copies: the merged profile says what
	// their plan was weighted by, as each run's did.
	p.Weights = pr.Weights()
	pr.Keep(p)
	return p, r.results, nil
}

// batch is the state of Profile's runs that the workers share.
type batch struct {
	opt     *Options
	pr      *profiler.Prepared
	specs   []Spec
	workers int
	start   time.Time
	stopped chan struct{}

	// ranAway is set once a stopped run's program runs on (runaway).
	ranAway atomic.Bool

	mu      sync.Mutex
	reason  string
	merger  *profile.Merger
	results []Result
	done    int
	failed  int
	err     error // a merge error: the profiles do not fit together
}

// runaway turns the garbage collector off for good, once a run was
// stopped while its program runs on: a collection waits for every
// program to call out, which that one may never do (profiler.Options'
// Interrupt says the same of one run).
func (r *batch) runaway() {
	if r.ranAway.Swap(true) {
		return
	}
	heapstart.End() // its settings would come back at a collection
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(math.MaxInt64)
}

// one profiles run i on the worker w, with stop as its interruption, and
// reports whether the run was stopped before it ended.
func (r *batch) one(ctx context.Context, w *profiler.Worker, i int, stop chan string) bool {
	s := &r.specs[i]
	var p *profile.Profile
	cfg, err := s.Config(r.opt.Profile.Run)
	if err == nil {
		if r.opt.Output != nil {
			cfg.Stdout, cfg.Stderr = r.opt.Output(i, s)
		}
		timeout := time.Duration(s.Timeout)
		if timeout == 0 {
			timeout = r.opt.Timeout
		}
		var timer *time.Timer
		if timeout > 0 {
			timer = time.AfterFunc(timeout, func() {
				select {
				case stop <- "timeout":
				default:
				}
			})
		}
		p, err = w.Profile(ctx, s.Label, cfg, stop)
		if timer != nil {
			timer.Stop()
		}
		// A stop that came after the run ended is not this run's.
		if p == nil || p.Interrupted == nil {
			select {
			case reason := <-stop:
				if reason != "timeout" {
					stop <- reason
				}
			default:
			}
		}
	}
	r.add(i, p, err)
	return p != nil && p.Interrupted != nil
}

// add merges run i's profile p (nil if it made none, err saying why)
// and reports progress.
func (r *batch) add(i int, p *profile.Profile, err error) {
	s := &r.specs[i]
	if p == nil {
		p = r.noProfile(s, err)
	}
	res := Result{Index: i, Label: s.Label, Err: err, ExitCode: p.ExitCode}
	if len(p.Inputs) == 1 {
		res.Seconds = p.Inputs[0].Seconds
	}
	if res.Err == nil && p.ExitCode != 0 {
		res.Err = fmt.Errorf("exit code %d", p.ExitCode)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		if err := r.merger.Add(s.Label, s.Label, p); err != nil {
			r.err = err
		}
	}
	r.results[i] = res
	r.done++
	if res.Err != nil {
		r.failed++
	}
	if r.opt.Progress != nil {
		elapsed := time.Since(r.start)
		pg := Progress{Done: r.done, Failed: r.failed, Total: len(r.specs), Elapsed: elapsed, Last: res}
		if left := len(r.specs) - r.done; left > 0 {
			pg.Left = elapsed / time.Duration(r.done) * time.Duration(left)
		}
		r.opt.Progress(pg)
	}
}

// failed is the profile of a run that made none: its input, marked
// incomplete, and no counts.
func (r *batch) noProfile(s *Spec, err error) *profile.Profile {
	p := r.pr.Empty()
	p.Complete, p.Incomplete, p.ExitCode = false, err.Error(), 1
	in := profile.Input{Label: s.Label, Args: append([]string{}, s.Args...), Strategy: p.Strategy, Copies: p.Copies,
		Incomplete: p.Incomplete, ExitCode: 1}
	p.Inputs = []profile.Input{in}
	return p
}
