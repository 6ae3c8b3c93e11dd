package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/cputime"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/stats"
	"github.com/pathprof/pathprof/profile"
)

// DefaultRuns and QuickRuns are the timed runs per program and build.
const (
	DefaultRuns = 5
	QuickRuns   = 3
)

// Variant is a profiling strategy with its number of copies.
type Variant struct {
	Name   profile.Strategy `json:"name"`
	Copies int              `json:"copies"` // 1 for SBL
}

// Partitioned are the PBL and P3 strategies at k = 2, 4, 8 that --strategies
// measures besides SBL.
var Partitioned = []Variant{{profile.PBL, 2}, {profile.PBL, 4}, {profile.PBL, 8}, {profile.P3, 2}, {profile.P3, 4}, {profile.P3, 8}}

// SBL is sequential Ball-Larus: one copy, every function profiled.
var SBL = Variant{Name: profile.SBL, Copies: 1}

func (s Variant) String() string {
	if s.Copies <= 1 {
		return string(s.Name)
	}
	return fmt.Sprintf("%s-k%d", s.Name, s.Copies)
}

// Options configure Run.
type Options struct {
	// Runs is the number of timed runs of each build; default DefaultRuns,
	// or QuickRuns with Quick.
	Runs int
	// Quick runs only the programs marked quick.
	Quick bool
	// Only runs only the programs with these names.
	Only []string
	// Big also runs the big programs (Program.Big), which are otherwise
	// run only when Only names them.
	Big bool
	// Strategies to measure besides the original; default SBL alone. PBL
	// and P3 (at k = 2, 4, 8) will be columns of their own once they exist.
	Strategies []Variant
	// HitsOnly measures PBL and P3 by their hits alone: the copies are
	// planned and their hits computed from SBL's profile, but they are
	// neither run (so their profiles are not checked against SBL's) nor
	// timed. A sweep of plans then costs one SBL run per program.
	HitsOnly bool
	// PrefixPlans, with Strategies, also plans PBL and P3 by the profile
	// of the run's first tenth (a snapshot of an SBL run taken at a tenth
	// of its time), as a short first run of the program would plan them,
	// and measures those plans' hits (Measure.PrefixHitShare).
	PrefixPlans bool
	// CacheDir is wazero's compilation cache; "" for none.
	CacheDir string
	// Progress receives a line per step; nil for none.
	Progress   io.Writer
	Instrument instrument.Options
}

// RunInfo describes a benchmark run: when, where and how. Report and
// OSPReport start with it.
type RunInfo struct {
	Date time.Time `json:"date"`
	// Command is how the run was started, as the caller says.
	Command string `json:"command,omitempty"`
	// GoVersion is the toolchain pathprof was built with; SuiteGoVersion
	// the one that built the suite's Go programs.
	GoVersion      string `json:"go_version"`
	SuiteGoVersion string `json:"suite_go_version,omitempty"`
	CPUs           int    `json:"cpus"`
	OS             string `json:"os"`
	Arch           string `json:"arch"`
	Runs           int    `json:"runs"`
	// PinnedCPU is the CPU every timed run ran on, if the benchmark could
	// pin its thread to one.
	PinnedCPU *int `json:"pinned_cpu,omitempty"`
	Quick     bool `json:"quick,omitempty"`
}

// newRunInfo describes a run starting now on s with runs timed runs per
// build, its thread pinned to cpu (-1: not pinned).
func newRunInfo(s *Suite, runs int, quick bool, cpu int) RunInfo {
	r := RunInfo{
		Date:           time.Now().UTC().Truncate(time.Second),
		GoVersion:      runtime.Version(),
		SuiteGoVersion: s.GoVersion,
		CPUs:           runtime.NumCPU(),
		OS:             runtime.GOOS,
		Arch:           runtime.GOARCH,
		Runs:           runs,
		Quick:          quick,
	}
	if cpu >= 0 {
		r.PinnedCPU = &cpu
	}
	return r
}

// Info returns r, for code that handles either kind of report.
func (r *RunInfo) Info() *RunInfo { return r }

// writeHeader writes the run's command and date, machine and Go versions,
// as the first lines of a results.md, ending in a line break.
func (r *RunInfo) writeHeader(b *strings.Builder) {
	if r.Command != "" {
		fmt.Fprintf(b, "Command: `%s`  \n", r.Command)
	}
	fmt.Fprintf(b, "Date: %s; %d CPUs, %s/%s, %s", r.Date.Format("2006-01-02 15:04 UTC"), r.CPUs, r.OS, r.Arch, r.GoVersion)
	if r.SuiteGoVersion != "" && r.SuiteGoVersion != r.GoVersion {
		fmt.Fprintf(b, " (suite built with %s)", r.SuiteGoVersion)
	}
	b.WriteString("  \n")
}

// Report is the outcome of a benchmark run.
type Report struct {
	RunInfo
	// HitsOnly: the PBL and P3 copies were planned, not timed, and run
	// only where they share out calls or loop iterations (Options).
	HitsOnly   bool      `json:"hits_only,omitempty"`
	Strategies []Variant `json:"strategies"`
	// Seconds is the wall time of the whole benchmark.
	Seconds  float64         `json:"seconds"`
	Programs []ProgramResult `json:"programs"`
	// Measure is what the ratios of the geometric means compare:
	// MeasureCPU, or wall time for files older than it (empty).
	Measure string `json:"measure,omitempty"`
	// GeoMean is, per strategy (Variant.String), the geometric mean of
	// its ratios (by Measure) over the programs that did not fail.
	GeoMean map[string]float64 `json:"geomean_ratio"`
	// GeoMeanWall is the same over the wall-time ratios, when Measure is
	// not wall time.
	GeoMeanWall map[string]float64 `json:"geomean_wall_ratio,omitempty"`
	// GeoMeanTraining and GeoMeanValidation are the same over the
	// programs of each set (Program.Validation), when the run has
	// programs of both.
	GeoMeanTraining   map[string]float64 `json:"geomean_ratio_training,omitempty"`
	GeoMeanValidation map[string]float64 `json:"geomean_ratio_validation,omitempty"`
	Failed            int                `json:"failed"`
}

// ProgramResult is one program's row.
type ProgramResult struct {
	Name   string `json:"name"`
	Origin string `json:"origin,omitempty"`
	// Validation says the program is in the validation set.
	Validation bool   `json:"validation,omitempty"`
	Wasm       string `json:"wasm"`
	Bytes      int    `json:"bytes"`

	// Static facts of the instrumented module.
	Functions int `json:"functions"`
	Profiled  int `json:"functions_profiled"`
	// PossiblePaths is the exact sum of the profiled functions' acyclic
	// paths (after cuts), in decimal: it can pass 2^64.
	PossiblePaths string `json:"possible_paths"`
	// Dynamic facts of the check run.
	ExecutedPaths  int    `json:"executed_paths"`
	PathExecutions uint64 `json:"path_executions"`
	// HottestPath is how many times the most frequent path ran: the copy
	// that counts it runs at least one sequence each time.
	HottestPath uint64 `json:"hottest_path"`
	ExitCode    uint32 `json:"exit_code"`
	// OutputsMatch says that every instrumented run printed the original's
	// standard output and exited with its code.
	OutputsMatch bool `json:"outputs_match"`

	Original   Timing    `json:"original"`
	Strategies []Measure `json:"strategies"`
	// PlacedSBLHits is, with partitioned strategies, SBL's probe hits on
	// the run when its probes too are placed by the run's edge
	// frequencies, as the partitioned strategies' are: computed, not run.
	PlacedSBLHits uint64 `json:"placed_sbl_hits,omitempty"`
	// PrefixHits is, with Options.PrefixPlans, SBL's probe hits in the
	// snapshot of the run's first tenth that plans by a prefix are made
	// from (all of them when the run ended before the snapshot).
	PrefixHits uint64 `json:"prefix_hits,omitempty"`
	// PeakRSSBytes is the benchmark process's peak resident set while it
	// measured the program (instrumenting, compiling and running every
	// build, copies included), 0 where the kernel does not say.
	PeakRSSBytes uint64 `json:"peak_rss_bytes,omitempty"`
	// Error says why the row failed; its figures are then partial.
	Error string `json:"error,omitempty"`
}

// MeasureCPU names the CPU time of the thread that ran the program
// (runner.Result.CPUTime) as the measure of the ratios. The machines the
// benchmark runs on are shared: wall time grows with whatever else holds
// the CPU, the run's own thread's CPU time does not.
const MeasureCPU = "thread-cpu"

// Timing is one build's timed runs.
type Timing struct {
	CompileSeconds float64 `json:"compile_seconds"`
	// Seconds holds each timed run's instantiation and run time, wall
	// clock (for several copies: the slowest copy's).
	Seconds       []float64 `json:"seconds"`
	MedianSeconds float64   `json:"median_seconds"`
	// CPUSeconds is the CPU time of the thread that ran the program over
	// the same spans; ProcessCPUSeconds the whole process's over each run
	// (its closing included), which adds what ran on other threads
	// meanwhile, such as the garbage collector's workers. None in files
	// older than them.
	CPUSeconds        []float64 `json:"cpu_seconds,omitempty"`
	MedianCPUSeconds  float64   `json:"median_cpu_seconds,omitempty"`
	ProcessCPUSeconds []float64 `json:"process_cpu_seconds,omitempty"`
}

// add appends one timed run's figures.
func (t *Timing) add(o output) {
	t.Seconds = append(t.Seconds, o.runTime.Seconds())
	t.CPUSeconds = append(t.CPUSeconds, o.cpuTime.Seconds())
	t.ProcessCPUSeconds = append(t.ProcessCPUSeconds, o.processCPU.Seconds())
}

// medians sets the medians of the timed runs; the CPU figures are dropped
// where the system did not measure them.
func (t *Timing) medians() {
	t.MedianSeconds = stats.Median(t.Seconds)
	if slices.Contains(t.CPUSeconds, 0) {
		t.CPUSeconds, t.ProcessCPUSeconds = nil, nil
		return
	}
	t.MedianCPUSeconds = stats.Median(t.CPUSeconds)
}

// setRatios sets m's ratios against the original's timed runs.
func (m *Measure) setRatios(orig *Timing) {
	m.WallRatio = m.MedianSeconds / orig.MedianSeconds
	if m.MedianCPUSeconds > 0 && orig.MedianCPUSeconds > 0 {
		m.CPURatio = m.MedianCPUSeconds / orig.MedianCPUSeconds
	}
}

// Measure is one strategy's figures on one program.
type Measure struct {
	Strategy Variant `json:"strategy"`
	Timing
	// WallRatio is the median wall time over the original's median,
	// CPURatio the same for the thread's CPU time (Timing.CPUSeconds; 0
	// where it is not measured). Older files have only the wall ratio,
	// as "ratio".
	WallRatio float64 `json:"ratio"`
	CPURatio  float64 `json:"cpu_ratio,omitempty"`
	// ProbeHits is the instrumentation sequences executed in the check
	// run (for several copies: the slowest copy's).
	ProbeHits         uint64  `json:"probe_hits"`
	InstrumentSeconds float64 `json:"instrument_seconds"`
	// CopyBytes is the size of the instrumented module (for several
	// copies: the largest), counter module included.
	CopyBytes int `json:"copy_bytes,omitempty"`
	// PlanSeconds is P3's or PBL's planning time.
	PlanSeconds float64 `json:"plan_seconds,omitempty"`
	// ProfileEqual says whether the merged profile equals SBL's; unset
	// for SBL itself.
	ProfileEqual *bool `json:"profile_equal_to_sbl,omitempty"`
	// For several copies: each copy's probe hits on the run, computed
	// from SBL's exact profile; HitShare is the slowest copy's hits over
	// SBL's. The plan uses the edge frequencies of SBL's profile.
	// StaticHitShare is the same share for a plan made by static probe
	// counts, as in the P3 paper.
	CopyHits       []uint64 `json:"copy_hits,omitempty"`
	HitShare       float64  `json:"hit_share,omitempty"`
	StaticHitShare float64  `json:"static_hit_share,omitempty"`
	// EstimateHitShare is the share for a plan weighted by the static
	// estimate of the run (package estimate), as a first run is planned.
	EstimateHitShare float64 `json:"estimate_hit_share,omitempty"`
	// PrefixHitShare is the share for a plan made from the profile of
	// the run's first tenth (Options.PrefixPlans).
	PrefixHitShare float64 `json:"prefix_hit_share,omitempty"`
	// SlowestCopy is the copy with most hits, the one timed.
	SlowestCopy int `json:"slowest_copy,omitempty"`
}

// Failures returns the number of programs that failed and of all.
func (r *Report) Failures() (failed, programs int) { return r.Failed, len(r.Programs) }

// Select returns the programs Run would run with opt.
func Select(s *Suite, opt Options) ([]*Program, error) {
	var out []*Program
	for _, name := range opt.Only {
		if _, ok := s.Program(name); !ok {
			return nil, fmt.Errorf("no program %q in the suite", name)
		}
	}
	for i := range s.Programs {
		p := &s.Programs[i]
		if opt.Quick && !p.Quick {
			continue
		}
		if len(opt.Only) > 0 && !slices.Contains(opt.Only, p.Name) {
			continue
		}
		if p.Big && !opt.Big && len(opt.Only) == 0 {
			continue
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, errors.New("no programs selected")
	}
	return out, nil
}

// Run measures the selected programs of the suite. A program that fails
// (a trap, an instrumented run whose output differs) gets a row with its
// error and counts in Report.Failed; the error result is only for a
// benchmark that cannot run at all, or was interrupted.
func Run(ctx context.Context, s *Suite, opt Options) (*Report, error) {
	if opt.Runs <= 0 {
		opt.Runs = DefaultRuns
		if opt.Quick {
			opt.Runs = QuickRuns
		}
	}
	if len(opt.Strategies) == 0 {
		opt.Strategies = []Variant{SBL}
	}
	if opt.Strategies[0] != SBL {
		return nil, fmt.Errorf("the first strategy must be sbl, the reference of the others")
	}
	for _, st := range opt.Strategies[1:] {
		if st.Name != profile.PBL && st.Name != profile.P3 || st.Copies < 1 {
			return nil, fmt.Errorf("strategy %s: want pbl or p3 with at least one copy", st)
		}
	}
	progs, err := Select(s, opt)
	if err != nil {
		return nil, err
	}
	// Every run happens on this goroutine, one after another.
	cpu, restore := pinThread()
	defer restore()
	start := time.Now()
	rep := &Report{
		RunInfo:    newRunInfo(s, opt.Runs, opt.Quick, cpu),
		HitsOnly:   opt.HitsOnly && len(opt.Strategies) > 1,
		Strategies: opt.Strategies,
		GeoMean:    map[string]float64{},
	}
	if cputime.Thread() > 0 {
		rep.Measure = MeasureCPU
	}
	for i, p := range progs {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		b := &benchmark{s: s, p: p, opt: opt, idx: i + 1, total: len(progs)}
		peak := resetPeak()
		r := b.run(ctx)
		if peak {
			r.PeakRSSBytes = peakRSS()
		}
		if r.Error != "" {
			rep.Failed++
			b.progress("FAILED: %s", r.Error)
		}
		rep.Programs = append(rep.Programs, r)
	}
	all := func(*ProgramResult) bool { return true }
	rep.GeoMean = geoMeans(rep, all, rep.Ratio)
	if rep.Measure != "" {
		rep.GeoMeanWall = geoMeans(rep, all, func(m *Measure) float64 { return m.WallRatio })
	}
	if slices.ContainsFunc(rep.Programs, func(r ProgramResult) bool { return r.Validation }) &&
		slices.ContainsFunc(rep.Programs, func(r ProgramResult) bool { return !r.Validation }) {
		rep.GeoMeanTraining = geoMeans(rep, func(r *ProgramResult) bool { return !r.Validation }, rep.Ratio)
		rep.GeoMeanValidation = geoMeans(rep, func(r *ProgramResult) bool { return r.Validation }, rep.Ratio)
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, ctx.Err()
}

// Ratio is m's ratio by the report's measure.
func (r *Report) Ratio(m *Measure) float64 {
	if r.Measure == MeasureCPU {
		return m.CPURatio
	}
	return m.WallRatio
}

// geoMeans is, per strategy, the geometric mean of the ratios of the
// programs in that did not fail; none for a strategy not timed (HitsOnly).
func geoMeans(rep *Report, in func(*ProgramResult) bool, ratio func(*Measure) float64) map[string]float64 {
	g := map[string]float64{}
	for j, st := range rep.Strategies {
		var ratios []float64
		for i := range rep.Programs {
			r := &rep.Programs[i]
			if in(r) && r.Error == "" && j < len(r.Strategies) && ratio(&r.Strategies[j]) > 0 {
				ratios = append(ratios, ratio(&r.Strategies[j]))
			}
		}
		if len(ratios) > 0 {
			g[st.String()] = stats.GeoMean(ratios)
		}
	}
	return g
}

// benchmark is one program's measurement.
type benchmark struct {
	s          *Suite
	p          *Program
	opt        Options
	idx, total int
}

func (b *benchmark) progress(format string, args ...any) {
	if b.opt.Progress != nil {
		fmt.Fprintf(b.opt.Progress, "bench: %s: "+format+"\n", append([]any{b.p.Name}, args...)...)
	}
}

// output is what one run printed and how it ended.
type output struct {
	stdout   []byte
	stderr   *tailWriter
	exitCode uint32
	runTime  time.Duration
	// cpuTime is the run's thread's CPU time, processCPU the process's.
	cpuTime, processCPU time.Duration
}

func (b *benchmark) run(ctx context.Context) (r ProgramResult) {
	p := b.p
	r = ProgramResult{Name: p.Name, Origin: p.Origin, Validation: p.Validation, Wasm: p.Wasm}
	sbl := Measure{Strategy: SBL}
	fail := func(format string, args ...any) ProgramResult {
		r.Error = fmt.Sprintf(format, args...)
		r.Strategies = []Measure{sbl}
		return r
	}
	orig, err := b.read()
	if err != nil {
		return fail("%v", err)
	}
	r.Bytes = len(orig)

	start := time.Now()
	res, err := instrument.Instrument(orig, b.opt.Instrument)
	if err != nil {
		return fail("instrument: %v", err)
	}
	sbl.InstrumentSeconds = time.Since(start).Seconds()
	sbl.CopyBytes = len(res.Module) + len(res.Counters)
	possible := new(big.Int)
	for _, f := range res.Funcs {
		if f.Placement != nil {
			r.Profiled++
			possible.Add(possible, big.NewInt(f.Placement.NumPaths))
		}
	}
	r.Functions = len(res.Funcs)
	r.PossiblePaths = possible.String()
	b.progress("instrumented %d of %d functions in %.2fs", r.Profiled, r.Functions, sbl.InstrumentSeconds)

	name := filepath.Base(filepath.FromSlash(p.Wasm))
	origProg, err := b.compile(ctx, "original", orig, runner.Config{ProgramName: name, CacheDir: b.opt.CacheDir})
	if err != nil {
		return fail("%v", err)
	}
	defer origProg.Close(context.WithoutCancel(ctx))
	r.Original.CompileSeconds = origProg.CompileTime().Seconds()
	instrProg, err := b.compileCopy(ctx, SBL.String(), res, runner.Config{ProgramName: name, CacheDir: b.opt.CacheDir})
	if err != nil {
		return fail("%v", err)
	}
	defer instrProg.Close(context.WithoutCancel(ctx))
	sbl.CompileSeconds = instrProg.CompileTime().Seconds()

	// The check run, untimed, compares outputs, reads the counters and
	// warms up both builds, so that neither pays the first run's page
	// faults in the timed runs.
	want, err := b.runOnce(ctx, origProg, nil)
	if err != nil {
		return fail("original run: %v%s", err, want.tail())
	}
	r.ExitCode = want.exitCode
	if err := b.checkExpected(want); err != nil {
		return fail("original run: %v%s", err, want.tail())
	}
	got, run, err := b.runCounted(ctx, instrProg)
	if err != nil {
		return fail("instrumented run: %v%s", err, got.tail())
	}
	if err := sameOutput(want, got); err != nil {
		return fail("instrumented run: %v", err)
	}
	fs, hits, err := run.Functions()
	if err != nil {
		return fail("%v", err)
	}
	sbl.ProbeHits = hits
	for _, f := range fs {
		r.ExecutedPaths += len(f.Paths)
		for _, pa := range f.Paths {
			r.PathExecutions += pa.Count
			r.HottestPath = max(r.HottestPath, pa.Count)
		}
	}
	b.progress("check run: original %s, sbl %s, outputs match; %d paths executed, %d probe hits",
		ms(want.runTime), ms(got.runTime), r.ExecutedPaths, hits)

	for i := 1; i <= b.opt.Runs; i++ {
		if err := ctx.Err(); err != nil {
			return fail("%v", err)
		}
		o, err := b.runOnce(ctx, origProg, nil)
		if err == nil {
			err = sameOutput(want, o)
		}
		if err != nil {
			return fail("original run %d: %v (the program is not deterministic)", i, err)
		}
		g, err := b.runTimed(ctx, instrProg)
		if err == nil {
			err = sameOutput(want, g)
		}
		if err != nil {
			return fail("instrumented run %d: %v", i, err)
		}
		r.Original.add(o)
		sbl.add(g)
		b.progress("run %d/%d: original %s (cpu %s), sbl %s (cpu %s)", i, b.opt.Runs, ms(o.runTime), ms(o.cpuTime), ms(g.runTime), ms(g.cpuTime))
	}
	r.OutputsMatch = true
	r.Original.medians()
	sbl.medians()
	sbl.setRatios(&r.Original)
	r.Strategies = []Measure{sbl}
	b.progress("median: original %s, sbl %s, ratio %.3f",
		ms(secs(r.Original.MedianSeconds)), ms(secs(sbl.MedianSeconds)), sbl.WallRatio)
	if sbl.CPURatio > 0 {
		b.progress("median cpu: original %s, sbl %s, ratio %.3f",
			ms(secs(r.Original.MedianCPUSeconds)), ms(secs(sbl.MedianCPUSeconds)), sbl.CPURatio)
	}
	if len(b.opt.Strategies) > 1 {
		freq, err := res.EdgeFrequencies(fs)
		if err != nil {
			return fail("%v", err)
		}
		// The plans place their probes by these frequencies; SBL placed
		// by them too tells that gain from the partitioning's.
		placed, err := profiler.Build(orig, profile.SBL, 1, b.opt.Instrument, partition.Options{Weights: freq})
		if err != nil {
			return fail("sbl placed by its profile: %v", err)
		}
		h, err := copyHits(placed, fs)
		if err != nil {
			return fail("sbl placed by its profile: %v", err)
		}
		r.PlacedSBLHits = h[0]
		b.progress("sbl placed by its profile: %.1f%% of its hits", 100*float64(h[0])/float64(max(sbl.ProbeHits, 1)))
		var prefix [][]float64
		if b.opt.PrefixPlans {
			if prefix, r.PrefixHits, err = b.prefix(ctx, orig, res, got.runTime); err != nil {
				return fail("the run's first tenth: %v", err)
			}
			b.progress("the run's first tenth: %.1f%% of SBL's hits", 100*float64(r.PrefixHits)/float64(max(sbl.ProbeHits, 1)))
		}
		for _, st := range b.opt.Strategies[1:] {
			m, err := b.copies(ctx, orig, name, st, fs, sbl.ProbeHits, freq, prefix, origProg, want)
			r.Strategies = append(r.Strategies, m)
			if err != nil {
				return fail("%s: %v", st, err)
			}
		}
	}
	return r
}

// prefixShare is the part of a run, by time, whose profile plans by a
// prefix are made from (Options.PrefixPlans).
const prefixShare = 0.1

// prefix profiles the program again with SBL and keeps the counts as they
// stood at prefixShare of runTime (the check run's): the profile a short
// first run would give. It returns their edge frequencies on res's DAGs,
// which plan PBL and P3 as a profile does, and SBL's hits in them. A run
// that ends before gives its whole profile.
func (b *benchmark) prefix(ctx context.Context, orig []byte, res *instrument.Result, runTime time.Duration) ([][]float64, uint64, error) {
	cfg, cleanup, err := b.s.runConfig(b.p)
	if err != nil {
		return nil, 0, err
	}
	defer cleanup()
	cfg.Stdout, cfg.Stderr, cfg.CacheDir = io.Discard, io.Discard, b.opt.CacheDir
	var snap *profile.Profile
	whole, err := profiler.Profile(ctx, orig, profiler.Options{Run: cfg, Instrument: b.opt.Instrument,
		SnapshotEvery: max(time.Duration(float64(runTime)*prefixShare), time.Millisecond),
		Snapshot: func(p *profile.Profile) error {
			// A snapshot taken before the program ran holds no count.
			if snap == nil && slices.ContainsFunc(p.Functions, func(f profile.Function) bool { return len(f.Paths) > 0 }) {
				snap = p
			}
			return nil
		}})
	if snap == nil {
		if whole == nil {
			return nil, 0, err
		}
		snap = whole
	}
	freq, err := res.EdgeFrequencies(snap.Functions)
	if err != nil {
		return nil, 0, err
	}
	hits, err := res.HitsOf(snap.Functions)
	return freq, hits, err
}

// copyHits is every copy's probe hits on the run whose exact profile is
// exact.
func copyHits(cs *profiler.Copies, exact []profile.Function) ([]uint64, error) {
	hits := make([]uint64, len(cs.Copy))
	for c, res := range cs.Copy {
		h, err := res.HitsOf(exact)
		if err != nil {
			return nil, err
		}
		hits[c] = h
	}
	return hits, nil
}

// copies measures a partitioned strategy on the program: plans it with the
// SBL profile's edge frequencies, computes every copy's hits from that
// exact profile, runs every copy once to check its output and that the
// merged profile equals SBL's, and times the slowest copy against the
// original.
func (b *benchmark) copies(ctx context.Context, orig []byte, name string, st Variant, exact []profile.Function, sblHits uint64,
	freq, prefix [][]float64, origProg *runner.Program, want output) (Measure, error) {
	m := Measure{Strategy: st}
	start := time.Now()
	cs, err := profiler.Build(orig, st.Name, st.Copies, b.opt.Instrument, partition.Options{Weights: freq})
	if err != nil {
		return m, err
	}
	m.InstrumentSeconds = time.Since(start).Seconds()
	m.PlanSeconds = cs.PlanSeconds
	for _, c := range cs.Copy {
		m.CopyBytes = max(m.CopyBytes, len(c.Module)+len(c.Counters))
	}
	setSlowest := func() {
		var slowest uint64
		for c, h := range m.CopyHits {
			if h > slowest {
				slowest, m.SlowestCopy = h, c
			}
		}
		m.ProbeHits = slowest
		if sblHits > 0 {
			m.HitShare = float64(slowest) / float64(sblHits)
		}
	}
	// The plans made without the profile: weighted by the static
	// estimate, as a first run is, and by static probe counts, as in the
	// paper; and, when asked, by the run's first tenth. Only their hits.
	type plan struct {
		share *float64
		popt  partition.Options
		what  string
	}
	plans := []plan{{&m.EstimateHitShare, partition.Options{}, "estimated plan"}, {&m.StaticHitShare, partition.Options{Static: true}, "static plan"}}
	if prefix != nil {
		plans = append(plans, plan{&m.PrefixHitShare, partition.Options{Weights: prefix}, "plan by the first tenth"})
	}
	for _, plan := range plans {
		other, err := profiler.Build(orig, st.Name, st.Copies, b.opt.Instrument, plan.popt)
		if err != nil {
			return m, fmt.Errorf("%s: %v", plan.what, err)
		}
		hits, _, err := b.planHits(ctx, other, name, fmt.Sprintf("%s %s", st, plan.what), exact, want, true)
		if err != nil {
			return m, fmt.Errorf("%s: %v", plan.what, err)
		}
		if sblHits > 0 {
			*plan.share = float64(slices.Max(hits)) / float64(sblHits)
		}
	}
	report := func() {
		line := fmt.Sprintf("%s: planned in %.2fs, instrumented in %.2fs; slowest copy %d has %.1f%% of SBL's hits (estimated plan %.1f%%, static plan %.1f%%",
			st, m.PlanSeconds, m.InstrumentSeconds, m.SlowestCopy, 100*m.HitShare, 100*m.EstimateHitShare, 100*m.StaticHitShare)
		if prefix != nil {
			line += fmt.Sprintf(", plan by the first tenth %.1f%%", 100*m.PrefixHitShare)
		}
		b.progress("%s)", line)
	}
	hits, checked, err := b.planHits(ctx, cs, name, st.String(), exact, want, b.opt.HitsOnly)
	if err != nil {
		return m, err
	}
	if checked {
		m.ProfileEqual = &checked
	}
	m.CopyHits = hits
	setSlowest()
	report()
	if b.opt.HitsOnly {
		return m, nil
	}
	// Compiled again (from the cache): one copy's code at a time.
	slowProg, err := b.compileCopy(ctx, fmt.Sprintf("%s copy %d", st, m.SlowestCopy), cs.Copy[m.SlowestCopy], runner.Config{ProgramName: name, CacheDir: b.opt.CacheDir})
	if err != nil {
		return m, err
	}
	defer slowProg.Close(context.WithoutCancel(ctx))
	var origT Timing
	for i := 1; i <= b.opt.Runs; i++ {
		o, err := b.runOnce(ctx, origProg, nil)
		if err != nil {
			return m, err
		}
		g, err := b.runTimed(ctx, slowProg)
		if err == nil {
			err = sameOutput(want, g)
		}
		if err != nil {
			return m, fmt.Errorf("copy %d run %d: %v", m.SlowestCopy, i, err)
		}
		origT.add(o)
		m.add(g)
	}
	origT.medians()
	m.medians()
	m.setRatios(&origT)
	b.progress("%s: profiles equal; slowest copy ratio %.3f (cpu %.3f)", st, m.WallRatio, m.CPURatio)
	return m, nil
}

// planHits is every copy's probe hits on the run whose exact profile is
// exact: computed from it, unless the copies share out calls or loop
// iterations, whose hits are exact only from their own counts. Those
// copies run, and so do all copies unless hitsOnly: each must print what
// the original printed (want), and their merged profile must equal exact
// (checked says they ran).
func (b *benchmark) planHits(ctx context.Context, cs *profiler.Copies, name, what string, exact []profile.Function, want output, hitsOnly bool) (hits []uint64, checked bool, err error) {
	sliced := slices.ContainsFunc(cs.Copy, (*instrument.Result).Sliced)
	if hitsOnly && !sliced {
		hits, err = copyHits(cs, exact)
		return hits, false, err
	}
	runs := make([]*profiler.CopyRun, len(cs.Copy))
	for c := range cs.Copy {
		prog, err := b.compileCopy(ctx, fmt.Sprintf("%s copy %d", what, c), cs.Copy[c], runner.Config{ProgramName: name, CacheDir: b.opt.CacheDir})
		if err != nil {
			return nil, false, err
		}
		got, run, err := b.runCounted(ctx, prog)
		prog.Close(context.WithoutCancel(ctx))
		if err == nil {
			err = sameOutput(want, got)
		}
		if err != nil {
			return nil, false, fmt.Errorf("copy %d: %v%s", c, err, got.tail())
		}
		runs[c] = run
	}
	merged, err := profiler.MergeRuns(cs, runs)
	if err != nil {
		return nil, false, err
	}
	if eq, diff := (&profile.Profile{Functions: exact}).Equal(&profile.Profile{Functions: merged.Functions}); !eq {
		return nil, false, fmt.Errorf("merged profile differs from SBL's: %s", diff)
	}
	if !sliced {
		hits, err = copyHits(cs, exact)
		return hits, true, err
	}
	hits = make([]uint64, len(merged.Runs))
	for c, r := range merged.Runs {
		hits[c] = r.ProbeHits
	}
	return hits, true, nil
}

// read reads the program's module and says so.
func (b *benchmark) read() ([]byte, error) {
	orig, err := os.ReadFile(b.s.Path(b.p.Wasm))
	if err == nil {
		b.progress("program %d/%d, %.1f MB", b.idx, b.total, float64(len(orig))/1e6)
	}
	return orig, err
}

func (b *benchmark) compile(ctx context.Context, what string, wasm []byte, cfg runner.Config) (*runner.Program, error) {
	start := time.Now()
	prog, err := runner.Compile(ctx, wasm, cfg)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", what, err)
	}
	if d := time.Since(start); d > time.Second {
		b.progress("compiled %s in %.1fs", what, d.Seconds())
	}
	return prog, nil
}

// compileCopy is compile for an instrumented copy, with its counter
// module.
func (b *benchmark) compileCopy(ctx context.Context, what string, copy *instrument.Result, cfg runner.Config) (*profiler.CopyProgram, error) {
	start := time.Now()
	prog, err := profiler.CompileCopy(ctx, copy, cfg)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", what, err)
	}
	if d := time.Since(start); d > time.Second {
		b.progress("compiled %s in %.1fs", what, d.Seconds())
	}
	return prog, nil
}

// runOnce runs prog once with a fresh configuration (see runWith), after
// as its AfterRun.
func (b *benchmark) runOnce(ctx context.Context, prog *runner.Program, after func(context.Context, map[string]api.Module) error) (output, error) {
	return b.runWith(ctx, func(cfg runner.Config) (runner.Result, error) {
		cfg.AfterRun = after
		return prog.Run(ctx, cfg)
	})
}

// runCounted runs an instrumented copy once with a fresh configuration
// and reads its counts back; a run that fails or whose counts cannot be
// read is an error.
func (b *benchmark) runCounted(ctx context.Context, prog *profiler.CopyProgram) (output, *profiler.CopyRun, error) {
	var run *profiler.CopyRun
	o, err := b.runWith(ctx, func(cfg runner.Config) (runner.Result, error) {
		run = prog.Run(ctx, cfg)
		return run.Result, run.Failure()
	})
	return o, run, err
}

// runTimed runs an instrumented copy once with a fresh configuration,
// without reading its counts back, which would count in its run time.
func (b *benchmark) runTimed(ctx context.Context, prog *profiler.CopyProgram) (output, error) {
	return b.runWith(ctx, func(cfg runner.Config) (runner.Result, error) { return prog.RunUncounted(ctx, cfg) })
}

// runWith calls run once with a fresh configuration (fresh temporary
// mounts, stdin from the start) that keeps the program's output. The
// garbage collector runs first so that one run's garbage is not collected
// during the next.
func (b *benchmark) runWith(ctx context.Context, run func(runner.Config) (runner.Result, error)) (output, error) {
	out := output{stderr: &tailWriter{max: 2000}}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	cfg, cleanup, err := b.s.runConfig(b.p)
	if err != nil {
		return out, err
	}
	defer cleanup()
	var stdout bytes.Buffer
	cfg.Stdout, cfg.Stderr = &stdout, out.stderr
	runtime.GC()
	proc := cputime.Process()
	res, err := run(cfg)
	out.processCPU = cputime.Process() - proc
	out.stdout, out.exitCode, out.runTime, out.cpuTime = stdout.Bytes(), res.ExitCode, res.RunTime, res.CPUTime
	return out, err
}

func (b *benchmark) checkExpected(o output) error {
	if c := b.p.ExpectExitCode; c != nil && o.exitCode != *c {
		return fmt.Errorf("exit code %d, the suite expects %d", o.exitCode, *c)
	}
	if b.p.ExpectStdout != "" {
		want, err := os.ReadFile(b.s.Path(b.p.ExpectStdout))
		if err != nil {
			return err
		}
		if i := diffAt(want, o.stdout); i >= 0 {
			return fmt.Errorf("standard output differs from %s at byte %d (%d bytes, want %d)", b.p.ExpectStdout, i, len(o.stdout), len(want))
		}
	}
	return nil
}

func sameOutput(want, got output) error {
	if got.exitCode != want.exitCode {
		return fmt.Errorf("exit code %d, the original exited with %d%s", got.exitCode, want.exitCode, got.tail())
	}
	if i := diffAt(want.stdout, got.stdout); i >= 0 {
		return fmt.Errorf("standard output differs from the original's at byte %d (%d bytes, the original printed %d)", i, len(got.stdout), len(want.stdout))
	}
	return nil
}

// diffAt returns the first offset at which a and b differ, or -1.
func diffAt(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return n
	}
	return -1
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/1e6) }

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// tailWriter keeps the last max bytes written, for error messages.
type tailWriter struct {
	max int
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*w.max {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailWriter) bytes() []byte {
	if w == nil {
		return nil
	}
	if len(w.buf) <= w.max {
		return w.buf
	}
	return w.buf[len(w.buf)-w.max:]
}

// tail is the end of what the program wrote to stderr, or else to stdout
// (where Go test binaries report failures), to append to an error message.
func (o output) tail() string {
	what, b := "stderr", o.stderr.bytes()
	if len(bytes.TrimSpace(b)) == 0 {
		what, b = "stdout", o.stdout
		if len(b) > 2000 {
			b = b[len(b)-2000:]
		}
	}
	b = bytes.TrimRight(b, "\n")
	if len(b) == 0 {
		return ""
	}
	return "; the program's " + what + " ends:\n" + string(b)
}
