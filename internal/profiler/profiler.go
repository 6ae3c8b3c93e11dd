// Package profiler runs the profiling pipeline for one module and input:
// plan and instrument the copies (Build), run each (CopyProgram, the run
// step), read the counters back, regenerate the paths and merge them into
// the profile file (MergeRuns, MergeParts).
package profiler

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pathprof/pathprof/internal/history"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/profile"
)

// Options configure a profiling run.
type Options struct {
	// Strategy is SBL, PBL or P3; "" means SBL. Copies is k (1 for SBL)
	// and Jobs how many copies are compiled and run at once (default:
	// as many as there are cores).
	Strategy profile.Strategy
	Copies   int
	Jobs     int
	// Partition tunes P3 planning. Its Weights, if set, also place every
	// strategy's probes, SBL's included, on the edges that ran least;
	// Weights says where they come from, for the profile (default: a
	// profile the user gave).
	Partition partition.Options
	Weights   *profile.Weights
	// History, if set, holds previous profiles: a PBL or P3 run given no
	// weights is planned by the previous profile of its module (or of an
	// earlier build at its path) when there is one, and Profile keeps
	// every complete profile of a whole run there for the next one.
	History *history.Store
	// ModulePath is recorded in the profile, and Label as the name of
	// its run.
	ModulePath string
	Label      string
	// Run configures the program's run (arguments, environment, stdin,
	// mounts, output, compilation cache, progress).
	Run runner.Config
	// Progress receives a line per slow step; nil for none.
	Progress   io.Writer
	Instrument instrument.Options
	// Interrupt, if set, stops the run when it receives a reason
	// ("SIGINT", "timeout"): the copies' counts are read as they stand,
	// and Profile returns the profile marked interrupted without waiting
	// for the program, which runs on in the background with the garbage
	// collector off (runCopies says why): a caller that interrupts a run
	// is expected to exit soon after.
	Interrupt <-chan string
	// SnapshotEvery, if not 0, has Snapshot called that often while the
	// copies run with the profile as it stands: every copy's counts read
	// at the same moment, as at an interruption, and the profile marked
	// interrupted with profile.SnapshotReason. The run goes on.
	SnapshotEvery time.Duration
	Snapshot      func(*profile.Profile) error
	// Region, if set, limits the profile to a region of interest
	// (region.go); its markers are stubbed.
	Region *Region
	// Engine runs the copies; "" is wazero. Under node the counts are
	// read only when a copy has finished, so a run is neither
	// snapshotted nor read when interrupted.
	Engine Engine
	// UncoveredFrom, if set, is an earlier profile of the module: the
	// copy then counts only the paths it did not cover (UncoveredCopies;
	// SBL only), and the profile lists those it newly covered.
	UncoveredFrom *profile.Profile
	// UncoveredName names UncoveredFrom in the profile.
	UncoveredName string
}

// Profile profiles one run of the module: it builds the strategy's copies
// (SBL's one copy is the k = 1 case), runs each on the same input and
// merges their counts. It returns the profile even when a run fails (trap,
// missing import): it is then marked incomplete and err says why. The
// program's exit code is in the profile.
func Profile(ctx context.Context, orig []byte, opt Options) (*profile.Profile, error) {
	pr, err := Prepare(orig, opt)
	if err != nil {
		return nil, err
	}
	p, err := pr.run(ctx, nil, opt.Label, opt.Run, opt.Interrupt)
	if p != nil && opt.UncoveredFrom != nil {
		MarkUncovered(p, opt.UncoveredFrom, opt.UncoveredName)
	}
	if err == nil {
		pr.Keep(p)
	}
	return p, err
}

// Weights says what the copies' plan was weighted by (nil for SBL).
func (pr *Prepared) Weights() *profile.Weights { return pr.weights }

// Keep keeps p, a profile of runs of pr's copies, in the history store
// when there is one, for the next run to plan by: only a complete
// profile of whole runs, since the plan reads its counts as the run's.
func (pr *Prepared) Keep(p *profile.Profile) {
	if pr.opt.History == nil || !p.Complete || p.Region != nil || p.UncoveredFrom != nil {
		return
	}
	if err := pr.opt.History.Save(p, historyFuncs(pr.cs.Funcs)); err != nil {
		pr.opt.progress("the profile is not kept for later runs: %v", err)
	}
}

// Prepared is a module's copies, planned and instrumented once, to
// profile any number of runs (Profile, Worker).
type Prepared struct {
	cs      *Copies
	opt     Options
	module  profile.Module
	weights *profile.Weights // what the plan was weighted by
}

// Prepare plans and instruments the copies of opt's strategy for orig,
// saying so on opt.Progress.
func Prepare(orig []byte, opt Options) (*Prepared, error) {
	if opt.Strategy == "" {
		opt.Strategy = profile.SBL
	}
	k := opt.Copies
	if opt.Strategy == profile.SBL {
		k = 1
	}
	if k < 1 {
		return nil, fmt.Errorf("%s needs at least one copy", opt.Strategy)
	}
	opt.Copies = k
	progress := opt.progress
	if opt.History != nil && opt.Strategy != profile.SBL && opt.Partition.Weights == nil && !opt.Partition.Static {
		w, src, err := previousWeights(orig, opt.ModulePath, opt.History)
		switch {
		case err != nil:
			progress("the previous profile in %s is not used: %v", opt.History.Dir, err)
		case w != nil:
			opt.Partition.Weights, opt.Weights = w, src
			progress("planning by %s", src)
		}
	}
	start := time.Now()
	if opt.Strategy == profile.SBL {
		progress("instrumenting %s (%d bytes)", opt.ModulePath, len(orig))
	} else {
		progress("planning %s over %s and instrumenting them", opt.Strategy, copiesWord(k))
	}
	var cs *Copies
	var err error
	if opt.UncoveredFrom != nil {
		if opt.Strategy != profile.SBL {
			return nil, fmt.Errorf("--uncovered-from plans one copy: %s does not go with it", opt.Strategy)
		}
		cs, err = UncoveredCopies(orig, opt.UncoveredFrom, opt.Instrument)
	} else {
		cs, err = Build(orig, opt.Strategy, k, opt.Instrument, opt.Partition)
	}
	if err != nil {
		return nil, err
	}
	if opt.Strategy == profile.SBL {
		profiled, selective := 0, 0
		for _, f := range cs.Copy[0].Funcs {
			if f.Placement != nil {
				profiled++
			}
			if f.Sel != nil {
				selective++
			}
		}
		progress("instrumented %d of %d functions in %.2fs", profiled, len(cs.Copy[0].Funcs), time.Since(start).Seconds())
		if opt.UncoveredFrom != nil {
			progress("%s covered every path of %d functions, which get no probes; %d count only where it left paths uncovered",
				opt.UncoveredName, cs.Covered, selective)
		}
	} else {
		progress("built %s in %.2fs", copiesWord(k), time.Since(start).Seconds())
	}
	if cs.Estimated {
		progress("planned by %s", &profile.Weights{Source: profile.WeightsEstimate})
	}
	if cs.FellBack {
		progress("p3's splits would make more probe hits than pbl's on the weights' run: the copies are pbl's")
	}
	if what := cs.SharedSummary(); what != "" {
		progress("%s are shared out among the copies", what)
	}
	sum := sha256.Sum256(orig)
	mod := profile.Module{Path: opt.ModulePath, SHA256: hex.EncodeToString(sum[:]), Size: len(orig), CodeOffset: cs.Copy[0].CodeOffset}
	pr := &Prepared{cs: cs, opt: opt, module: mod, weights: cs.WeightedBy(opt.Partition.Weights != nil, opt.Weights)}
	return pr, nil
}

// WeightedBy says what the plan of cs was weighted by, for the profile:
// weighted says that it was given weights, and src, if not nil, where
// they came from (default: a profile the user gave). It is nil for SBL.
func (cs *Copies) WeightedBy(weighted bool, src *profile.Weights) *profile.Weights {
	switch {
	case cs.Plan.Strategy == profile.SBL:
		return nil
	case cs.Estimated:
		return &profile.Weights{Source: profile.WeightsEstimate}
	case !weighted:
		return &profile.Weights{Source: profile.WeightsStatic}
	case src != nil:
		return src
	default:
		return &profile.Weights{Source: profile.WeightsProfile}
	}
}

// progress writes a progress line, if o.Progress is set.
func (o *Options) progress(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "pathprof: "+format+"\n", args...)
	}
}

// Empty is a profile of the prepared module with no runs and no
// counts, for a run that made no profile.
func (pr *Prepared) Empty() *profile.Profile {
	return &profile.Profile{Format: profile.Format, Version: profile.Version, Module: pr.module,
		Strategy: pr.cs.Plan.Strategy, Copies: len(pr.cs.Copy), Runs: []profile.Run{}, Functions: []profile.Function{}}
}

// Copies returns the prepared copies.
func (pr *Prepared) Copies() *Copies { return pr.cs }

// Worker is a Prepared module's copies compiled once, to run one input
// after another. Workers run beside each other: each has its own
// compiled copies. When there are more copies than run at once (Jobs),
// a Worker holds none: each run compiles them in waves and releases each
// wave before the next, as Profile's run does, so that a Worker holds at
// most Jobs compiled copies whatever k is; a compilation cache then makes
// each compilation after the first a load.
type Worker struct {
	pr    *Prepared
	progs []*CopyProgram // nil when each run compiles the copies
	// Alone says that no program runs beside this worker's: its runs then
	// keep the collector off while their programs compute, as a single
	// profile's run does, so that a stop is taken at once. (A collection
	// waits for every running program to call out.)
	Alone bool
}

// Compile compiles the copies with the compile-time fields of cfg (such
// as the compilation cache), which each run of the Worker must give
// alike. A copy that does not compile (a missing import) is an error:
// every run would fail alike. A Worker whose runs compile the copies
// (Worker) has them compiled here once all the same, wave by wave, to
// find that error, and to fill the cache.
func (pr *Prepared) Compile(ctx context.Context, cfg runner.Config) (*Worker, error) {
	k := len(pr.cs.Copy)
	jobs := pr.jobs()
	w := &Worker{pr: pr, progs: make([]*CopyProgram, k)}
	cfgs := make([]runner.Config, k)
	for c := range cfgs {
		cfgs[c] = cfg
	}
	errs := compileCopies(ctx, pr.cs, w.progs, cfgs, jobs, pr.opt.Region, pr.opt.Engine, k > jobs)
	if err := errors.Join(errs...); err != nil {
		w.Close(ctx)
		return nil, err
	}
	if k > jobs {
		w.progs = nil
	}
	return w, nil
}

// CompilesPerRun reports whether each run of w compiles the copies
// (Worker): w holds no compiled code, so a run stopped while its
// program runs on leaves w free for the next.
func (w *Worker) CompilesPerRun() bool { return w.progs == nil }

// jobs is how many copies run at once: Options.Jobs, or by default as
// many as there are cores (more at once would not finish sooner, and
// each holds its compiled code and memory).
func (pr *Prepared) jobs() int {
	if pr.opt.Jobs >= 1 {
		return pr.opt.Jobs
	}
	return min(len(pr.cs.Copy), cores)
}

// Profile profiles one run, labelled label, with the run-time fields of
// cfg (arguments, environment, standard input and output, mounts), as
// Profile does; its progress lines go to the Prepared's Progress only.
// A reason received on stop interrupts the run (Options.Interrupt).
func (w *Worker) Profile(ctx context.Context, label string, cfg runner.Config, stop <-chan string) (*profile.Profile, error) {
	return w.pr.run(ctx, w, label, cfg, stop)
}

// Close releases the compiled copies.
func (w *Worker) Close(ctx context.Context) {
	for _, p := range w.progs {
		if p != nil {
			p.Close(ctx)
		}
	}
}

// run runs the copies once on cfg's input, as a run of w (nil for one
// run alone, its copies compiled for it), and makes the profile, which
// records the run as its one input.
func (pr *Prepared) run(ctx context.Context, w *Worker, label string, cfg runner.Config, stop <-chan string) (*profile.Profile, error) {
	var progs []*CopyProgram
	alone := true
	if w != nil {
		progs, alone = w.progs, w.Alone
	}
	opt, cs := &pr.opt, pr.cs
	if label == "" {
		label = strings.Join(append([]string{filepath.Base(opt.ModulePath)}, cfg.Args...), " ")
	}
	jobs := pr.jobs()
	if cfg.Progress == nil {
		cfg.Progress = opt.Progress
	}
	var stdin []byte
	if cfg.Stdin != nil {
		var err error
		if stdin, err = io.ReadAll(cfg.Stdin); err != nil {
			return nil, fmt.Errorf("read standard input: %w", err)
		}
		cfg.Stdin = bytes.NewReader(stdin)
	}
	// assemble merges the runs into the profile, marked interrupted by in
	// if not nil, which records the run as its input.
	assemble := func(runs []*CopyRun, in *profile.Interruption) (*profile.Profile, error) {
		p, err := MergeRuns(cs, runs)
		if err != nil {
			return nil, err
		}
		p.Module.Path, p.Module.SHA256, p.Module.Size = pr.module.Path, pr.module.SHA256, pr.module.Size
		p.Weights = pr.weights
		p.Stubs = stubsOf(runs[0])
		if p.Region, err = regionOf(runs, in != nil); err != nil {
			return nil, err
		}
		if in != nil {
			markInterrupted(p, in)
		}
		p.Inputs = []profile.Input{inputOf(p, label, cfg, stdin)}
		for _, r := range runs[0].Result.Returned {
			p.Inputs[0].Invoked = append(p.Inputs[0].Invoked, profile.Invocation{Call: r.Call.String(), Results: r.Results})
		}
		return p, nil
	}
	snapshot := func(runs []*CopyRun, in *profile.Interruption) {
		p, err := assemble(runs, in)
		if err == nil {
			err = opt.Snapshot(p)
		}
		if err != nil {
			opt.progress("snapshot after %.0fs: %v", in.Seconds, err)
		}
	}
	every := opt.SnapshotEvery
	if opt.Snapshot == nil {
		every = 0
	}
	if opt.Engine == EngineNode {
		if every > 0 {
			return nil, errors.New("engine node: runs cannot be snapshotted")
		}
		stop = nil
	}
	progress := opt.progress
	if w != nil {
		// A Worker's run is one of many: a line per copy would drown
		// the lines per run.
		progress = func(format string, args ...any) {
			if format != runningCopy {
				opt.progress(format, args...)
			}
		}
	}
	if k := len(cs.Copy); k > jobs && w == nil {
		// On a machine of few cores the copies queue: a run of k copies
		// then takes as long as several of one copy.
		opt.progress("running %d copies %d at a time, in %d waves", k, jobs, (k+jobs-1)/jobs)
	}
	runs, in, err := runCopies(ctx, cs, progs, alone, cfg, jobs, progress, stop, every, snapshot, opt.Region, opt.Engine)
	if err != nil {
		return nil, err
	}
	p, err := assemble(runs, in)
	if err != nil {
		return nil, err
	}
	if in != nil {
		return p, errors.New(p.Incomplete)
	}
	if err := unevenCalls(cs, p, opt.progress); err != nil {
		return nil, err
	}
	if !p.Complete {
		return p, fmt.Errorf("incomplete profile: %s", p.Incomplete)
	}
	return p, nil
}

// markInterrupted marks p, whose counts were read while the program ran,
// interrupted by in, and says why it is incomplete.
func markInterrupted(p *profile.Profile, in *profile.Interruption) {
	p.Interrupted, p.Complete = in, false
	why := fmt.Sprintf("interrupted by %s after %.2fs: counts read while the program ran", in.Reason, in.Seconds)
	if in.Reason == profile.SnapshotReason {
		why = fmt.Sprintf("snapshot after %.2fs of a run that had not ended when it was written: counts read while the program ran", in.Seconds)
	}
	if in.Approximate {
		why += ", each copy at its own point (approximate)"
	}
	p.Incomplete = joinReason(why, p.Incomplete)
}

// inputOf is the record of the run that p counts, labelled label, of the
// input in cfg and stdin.
func inputOf(p *profile.Profile, label string, cfg runner.Config, stdin []byte) profile.Input {
	return inputRecord(p, label, cfg.Args, InputSHA256(cfg, stdin))
}

// InputSHA256 is the digest of the input in cfg and stdin
// (profile.InputDigest), as a run's profile records it.
func InputSHA256(cfg runner.Config, stdin []byte) string {
	var mounts []string
	for _, d := range cfg.Dirs {
		host := d.HostDir
		if d.Fresh {
			// Made empty for this run: where it is tells nothing of
			// the input, and would make each run's digest differ.
			host = "(fresh)"
		}
		m := host + ":" + d.GuestPath
		switch {
		case d.ReadOnly:
			m += ":ro"
		case strings.HasSuffix(d.GuestPath, ":ro") || strings.HasSuffix(d.GuestPath, ":rw"):
			// As --dir writes it: read-write at /x:ro is not read-only at /x.
			m += ":rw"
		}
		mounts = append(mounts, m)
	}
	return profile.InputDigest(cfg.Args, cfg.Env, mounts, stdin, hostInput(cfg)...)
}

// inputRecord is the record of the run that p counts: its label,
// arguments and input digest, and how the run went.
func inputRecord(p *profile.Profile, label string, args []string, digest string) profile.Input {
	args = slices.Clip(args)
	if args == nil {
		args = []string{}
	}
	in := profile.Input{Label: label, Args: args, InputSHA256: digest,
		Strategy: p.Strategy, Copies: p.Copies, Complete: p.Complete, Incomplete: p.Incomplete, Interrupted: p.Interrupted,
		ExitCode: p.ExitCode, Stubs: p.Stubs, Region: p.Region}
	for _, r := range p.Runs {
		in.Seconds = max(in.Seconds, r.Seconds)
	}
	return in
}

// hostInput is what the host gives the program beyond WASI that changes
// what it does, for the input's digest: stubs that return a value
// ("stub MODULE.NAME=RESULT"), then the calls of --invoke ("invoke
// NAME(ARG, ...)").
func hostInput(cfg runner.Config) []string {
	var host []string
	for _, s := range cfg.Stubs {
		if s.Result != "" {
			host = append(host, "stub "+s.String()+"="+s.Result)
		}
	}
	for _, c := range cfg.Invoke {
		host = append(host, "invoke "+c.String())
	}
	return host
}

// runHits is a copy's probe hits on a run whose exact profile is exact,
// given what the copy counted (own) and its call counters: exact when it
// shares out loops, or calls and its counters are known, else HitsOf's
// figure.
func runHits(res *instrument.Result, exact, own []profile.Function, calls map[uint32]uint64) (uint64, error) {
	if res.Sliced() && (calls != nil || !res.SharesCalls()) {
		return res.HitsOfRun(exact, own, calls)
	}
	return res.HitsOf(exact)
}

func joinReason(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

// copiesWord is "1 copy" or "k copies".
func copiesWord(k int) string {
	if k == 1 {
		return "1 copy"
	}
	return fmt.Sprintf("%d copies", k)
}

// unevenCalls says so when copies that share out calls or loop iterations
// made more hits on the run than PBL's copies would have: the plan took
// the shared calls or iterations to cost about the same, and they were
// uneven.
func unevenCalls(cs *Copies, p *profile.Profile, progress func(string, ...any)) error {
	if cs.PBL == nil || len(cs.Shared()) == 0 {
		return nil
	}
	var mine, whole uint64
	for _, r := range p.Runs {
		mine = max(mine, r.ProbeHits)
	}
	for _, res := range cs.PBL.Copy {
		h, err := res.HitsOf(p.Functions)
		if err != nil {
			return err
		}
		whole = max(whole, h)
	}
	if mine > whole {
		progress("the slowest copy made %d probe hits, PBL's would have made %d: the shared calls or loop iterations were uneven (a profile does not tell how they differ); --strategy pbl plans without sharing", mine, whole)
	}
	return nil
}

// funcsWord is "1 function" or "N functions".
func funcsWord(n int) string {
	if n == 1 {
		return "1 function"
	}
	return fmt.Sprintf("%d functions", n)
}
