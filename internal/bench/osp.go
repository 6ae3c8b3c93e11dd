package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/cputime"
	"github.com/pathprof/pathprof/internal/osp"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/stats"
)

// KindOSP marks an OSPReport's results.json, so that --from can tell it
// from a Report's.
const KindOSP = "osp"

// OSPOptions configure RunOSP.
type OSPOptions struct {
	// Runs is the number of timed runs of each build; default DefaultRuns,
	// or QuickRuns with Quick.
	Runs int
	// Quick runs only the programs marked quick.
	Quick bool
	// Only runs only the programs with these names.
	Only []string
	// Sampling are the sampled runs' settings; zero fields take osp's
	// defaults.
	Sampling osp.Options
	// Sweep are other memory bounds at which every program is sampled
	// again, untimed, and scored.
	Sweep []int
	// CacheDir is wazero's compilation cache; "" for none.
	CacheDir string
	// Progress receives a line per step; nil for none.
	Progress io.Writer
}

// OSPReport is the outcome of RunOSP: per program, the overhead of
// sampling and the accuracy of the hot subpaths against the exact counts
// of the same run.
type OSPReport struct {
	Kind string `json:"kind"`
	RunInfo
	Sampling OSPSettings `json:"sampling"`
	Sweep    []int       `json:"sweep,omitempty"`
	// Seconds is the wall time of the whole benchmark.
	Seconds  float64      `json:"seconds"`
	Programs []OSPProgram `json:"programs"`
	// GeoMean holds the geometric means of the programs' ratios, over
	// those that did not fail.
	GeoMean OSPMeans `json:"geomean"`
	// Accuracy totals the lengths that meet the accuracy target, per
	// memory bound (the report's first, then the sweep's).
	Accuracy []OSPAccuracy `json:"accuracy"`
	// UnboundedSame and UnboundedEvery total the same for the samples
	// counted with no bound (OSPProgram.Unbounded; Memory 0): the hot
	// list's windows, and every window of each sample.
	UnboundedSame  OSPAccuracy `json:"unbounded_same"`
	UnboundedEvery OSPAccuracy `json:"unbounded_every"`
	Failed         int         `json:"failed"`
}

// OSPSettings are the sampling settings of a report.
type OSPSettings struct {
	Memory   int     `json:"memory"`
	Lengths  []int   `json:"lengths"`
	MeanSkip float64 `json:"mean_skip"`
	Seed     uint64  `json:"seed"`
	Compact  bool    `json:"compact,omitempty"`
	Concise  bool    `json:"concise,omitempty"`
}

// OSPMeans are geometric means of OSP's time over the original's.
type OSPMeans struct {
	Wall   float64 `json:"wall"`
	CPU    float64 `json:"cpu"`
	Minima float64 `json:"minima"`
}

// OSP's targets: a geometric mean of the overhead of at most
// TargetOverhead, and the true top 10 of a length found with recall at
// least TargetRecall and median relative count error below TargetError.
const (
	TargetOverhead = 1.15
	TargetRecall   = 0.9
	TargetError    = 0.1
)

// OSPAccuracy counts, at one memory bound, the lengths (of all programs
// that did not fail) whose true top 10 meets the target, strictly and
// counting near ties (osp.NearTie) as hits; Short is the same for the
// lengths up to 16.
type OSPAccuracy struct {
	Memory    int `json:"memory"`
	Lengths   int `json:"lengths"`
	Meet      int `json:"meet"`
	MeetNear  int `json:"meet_near"`
	Short     int `json:"short_lengths"`
	ShortMeet int `json:"short_meet"`
	ShortNear int `json:"short_meet_near"`
}

// OSPProgram is one program's row.
type OSPProgram struct {
	Name   string `json:"name"`
	Origin string `json:"origin,omitempty"`
	Wasm   string `json:"wasm"`
	Bytes  int    `json:"bytes"`
	// Blocks is the number of basic blocks of the module.
	Blocks            int     `json:"blocks"`
	InstrumentSeconds float64 `json:"instrument_seconds"`
	// BlockEntries and Samples are the sampled run's.
	BlockEntries uint64 `json:"block_entries"`
	Samples      uint64 `json:"samples"`
	Original     Timing `json:"original"`
	Sampled      Timing `json:"sampled"`
	// OriginalCPU and SampledCPU are the process's CPU seconds of each
	// timed run, with the sampling worker's.
	OriginalCPU []float64 `json:"original_cpu_seconds"`
	SampledCPU  []float64 `json:"sampled_cpu_seconds"`
	// Ratio is the sampled median over the original's, CPURatio the same
	// for CPU time (0 where it is not measured), MinRatio the fastest
	// sampled run over the fastest original (noise only ever adds time,
	// so it moves less).
	Ratio    float64 `json:"ratio"`
	CPURatio float64 `json:"cpu_ratio"`
	MinRatio float64 `json:"min_ratio"`
	// TraceSeconds is how long counting every subpath exactly took.
	TraceSeconds float64 `json:"trace_seconds"`
	// Scores holds the score at the report's memory bound, then at each
	// bound of the sweep.
	Scores []OSPScore `json:"scores"`
	// Unbounded scores the run's samples counted with no memory bound
	// (osp.Unbounded), in an untimed run after the timed ones that
	// takes the same samples: the hot list's windows, then every window
	// of each sample. A length the profile misses and the first finds
	// is the bound's miss; one that only the second finds, the windows';
	// one that neither finds, the samples'.
	Unbounded []OSPUnbounded `json:"unbounded,omitempty"`
	Error     string         `json:"error,omitempty"`
}

// OSPUnbounded is the score of a run's samples counted with no bound.
type OSPUnbounded struct {
	// Every is true for every window of each sample, false for the
	// windows the hot list is offered.
	Every bool      `json:"every"`
	Score osp.Score `json:"score"`
}

// OSPScore is a sampled profile's score against the exact counts.
type OSPScore struct {
	Memory       int       `json:"memory"`
	HotListBytes int       `json:"hot_list_bytes"`
	Pairs        int       `json:"pairs"`
	Tau          []float64 `json:"tau"` // per length
	Score        osp.Score `json:"score"`
}

// meets returns how many lengths meet the target, strictly and with near
// ties, among those up to maxLen.
func (s *OSPScore) meets(maxLen int) (n, meet, near int) { return meets(&s.Score, maxLen) }

// meets returns how many lengths of sc meet the target, strictly and
// with near ties, among those up to maxLen.
func meets(sc *osp.Score, maxLen int) (n, meet, near int) {
	for _, g := range sc.Lengths {
		if g.Length > maxLen {
			continue
		}
		n++
		at := g.At[0]
		if at.MedianError < TargetError {
			if at.Recall >= TargetRecall {
				meet++
			}
			if at.RecallNear >= TargetRecall {
				near++
			}
		}
	}
	return n, meet, near
}

// RunOSP measures OSP on the selected programs of the suite: per program,
// an untimed check run of the original and of the sampling build (their
// outputs must agree), Runs timed runs of each, interleaved, then one run
// counting every subpath of the sampled lengths exactly, against which the
// profile is scored; then, for each bound of the sweep, a sampled run
// scored the same way. A program that fails gets a row with its error;
// the error result is only for a benchmark that cannot run at all, or was
// interrupted.
func RunOSP(ctx context.Context, s *Suite, opt OSPOptions) (*OSPReport, error) {
	if opt.Runs <= 0 {
		opt.Runs = DefaultRuns
		if opt.Quick {
			opt.Runs = QuickRuns
		}
	}
	filled, err := opt.Sampling.Filled()
	if err != nil {
		return nil, err
	}
	opt.Sampling = filled
	for _, m := range opt.Sweep {
		o := opt.Sampling
		o.Memory = m
		if err := o.Check(); err != nil {
			return nil, fmt.Errorf("sweep: %w", err)
		}
	}
	progs, err := Select(s, Options{Quick: opt.Quick, Only: opt.Only})
	if err != nil {
		return nil, err
	}
	cpu, restore := pinThread()
	defer restore()
	start := time.Now()
	so := opt.Sampling
	rep := &OSPReport{
		Kind:     KindOSP,
		RunInfo:  newRunInfo(s, opt.Runs, opt.Quick, cpu),
		Sampling: OSPSettings{Memory: so.Memory, Lengths: so.Lengths, MeanSkip: so.MeanSkip, Seed: so.Seed, Compact: !so.Plain, Concise: so.Concise},
		Sweep:    opt.Sweep,
	}
	for i, p := range progs {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		b := &ospBenchmark{benchmark: benchmark{s: s, p: p, opt: Options{Progress: opt.Progress, CacheDir: opt.CacheDir}, idx: i + 1, total: len(progs)}, o: opt}
		r := b.run(ctx)
		if r.Error != "" {
			rep.Failed++
			b.progress("FAILED: %s", r.Error)
		}
		rep.Programs = append(rep.Programs, r)
	}
	rep.summarize()
	rep.Seconds = time.Since(start).Seconds()
	return rep, ctx.Err()
}

// Failures returns the number of programs that failed and of all.
func (r *OSPReport) Failures() (failed, programs int) { return r.Failed, len(r.Programs) }

// summarize fills in the geometric means and the accuracy totals.
func (r *OSPReport) summarize() {
	var wall, cpu, mins []float64
	bounds := append([]int{r.Sampling.Memory}, r.Sweep...)
	r.Accuracy = make([]OSPAccuracy, len(bounds))
	for i, m := range bounds {
		r.Accuracy[i].Memory = m
	}
	for _, p := range r.Programs {
		if p.Error != "" {
			continue
		}
		wall, mins = append(wall, p.Ratio), append(mins, p.MinRatio)
		if p.CPURatio > 0 {
			cpu = append(cpu, p.CPURatio)
		}
		for i := range p.Scores {
			r.Accuracy[i].add(&p.Scores[i].Score)
		}
		for _, u := range p.Unbounded {
			a := &r.UnboundedSame
			if u.Every {
				a = &r.UnboundedEvery
			}
			a.add(&u.Score)
		}
	}
	r.GeoMean = OSPMeans{Wall: geoMeanOr0(wall), CPU: geoMeanOr0(cpu), Minima: geoMeanOr0(mins)}
}

// add counts sc's lengths into a.
func (a *OSPAccuracy) add(sc *osp.Score) {
	n, meet, near := meets(sc, 1<<30)
	a.Lengths, a.Meet, a.MeetNear = a.Lengths+n, a.Meet+meet, a.MeetNear+near
	n, meet, near = meets(sc, 16)
	a.Short, a.ShortMeet, a.ShortNear = a.Short+n, a.ShortMeet+meet, a.ShortNear+near
}

// geoMeanOr0 is GeoMean, or 0 where that is NaN (for none), which JSON
// cannot hold.
func geoMeanOr0(xs []float64) float64 {
	if g := stats.GeoMean(xs); g == g {
		return g
	}
	return 0
}

// ReadOSPReport reads a results.json that RunOSP's report wrote.
func ReadOSPReport(path string) (*OSPReport, error) {
	var r OSPReport
	if err := readJSON(path, &r); err != nil {
		return nil, err
	}
	if r.Kind != KindOSP {
		return nil, fmt.Errorf("%s: not the results of pathprof bench --osp", path)
	}
	return &r, nil
}

// ReportKind returns the kind of the results.json at path: KindOSP, or
// "" for a Report's.
func ReportKind(path string) (string, error) {
	var k struct {
		Kind string `json:"kind"`
	}
	err := readJSON(path, &k)
	return k.Kind, err
}

// WriteFiles writes the report into dir as results.md and results.json.
func (r *OSPReport) WriteFiles(dir string) error {
	return writeResults(dir, r.WriteMarkdown, r)
}

// ospBenchmark is one program's measurement.
type ospBenchmark struct {
	benchmark
	o OSPOptions
}

func (b *ospBenchmark) run(ctx context.Context) (r OSPProgram) {
	p := b.p
	r = OSPProgram{Name: p.Name, Origin: p.Origin, Wasm: p.Wasm}
	fail := func(format string, args ...any) OSPProgram {
		r.Error = fmt.Sprintf(format, args...)
		return r
	}
	orig, err := b.read()
	if err != nil {
		return fail("%v", err)
	}
	r.Bytes = len(orig)
	start := time.Now()
	ins, err := osp.Instrument(orig)
	if err != nil {
		return fail("instrument: %v", err)
	}
	r.InstrumentSeconds = time.Since(start).Seconds()
	r.Blocks = len(ins.Blocks)
	b.progress("instrumented in %.2fs: %d blocks", r.InstrumentSeconds, r.Blocks)

	name := filepath.Base(filepath.FromSlash(p.Wasm))
	compileCfg := runner.Config{ProgramName: name, CacheDir: b.opt.CacheDir}
	origProg, err := b.compile(ctx, "original", orig, compileCfg)
	if err != nil {
		return fail("%v", err)
	}
	defer origProg.Close(context.WithoutCancel(ctx))
	r.Original.CompileSeconds = origProg.CompileTime().Seconds()
	start = time.Now()
	sample, err := osp.Compile(ctx, ins, osp.ModeSample, compileCfg)
	if err != nil {
		return fail("compile osp: %v", err)
	}
	defer sample.Close(context.WithoutCancel(ctx))
	r.Sampled.CompileSeconds = time.Since(start).Seconds()

	// The check runs, untimed: the outputs must agree, and both builds
	// are warm for the timed runs.
	want, err := b.runOnce(ctx, origProg, nil)
	if err != nil {
		return fail("original run: %v%s", err, want.tail())
	}
	if err := b.checkExpected(want); err != nil {
		return fail("original run: %v%s", err, want.tail())
	}
	got, prof, err := b.sampleOnce(ctx, sample, b.o.Sampling, nil)
	if err == nil {
		err = sameOutput(want, got)
	}
	if err != nil {
		return fail("sampled run: %v%s", err, got.tail())
	}
	b.progress("check run: original %s, osp %s, outputs match; %d block entries, %d samples",
		ms(want.runTime), ms(got.runTime), prof.Run.BlockEntries, prof.Sampling.Samples)

	var ow, sw []float64
	for i := 1; i <= b.o.Runs; i++ {
		if err := ctx.Err(); err != nil {
			return fail("%v", err)
		}
		var oc, sc cpuSpan
		o, err := b.runWith(ctx, func(cfg runner.Config) (runner.Result, error) {
			oc.start(&cfg)
			return origProg.Run(ctx, cfg)
		})
		if err == nil {
			err = sameOutput(want, o)
		}
		if err != nil {
			return fail("original run %d: %v (the program is not deterministic)", i, err)
		}
		g, pr, err := b.sampleOnce(ctx, sample, b.o.Sampling, &sc)
		if err == nil {
			err = sameOutput(want, g)
		}
		if err != nil {
			return fail("sampled run %d: %v", i, err)
		}
		if pr.Run.BlockEntries != prof.Run.BlockEntries || pr.Sampling.Samples != prof.Sampling.Samples {
			return fail("sampled run %d: %d block entries and %d samples, the check run %d and %d (the run is not deterministic)",
				i, pr.Run.BlockEntries, pr.Sampling.Samples, prof.Run.BlockEntries, prof.Sampling.Samples)
		}
		prof = pr
		ow, sw = append(ow, o.runTime.Seconds()), append(sw, g.runTime.Seconds())
		r.OriginalCPU, r.SampledCPU = append(r.OriginalCPU, oc.seconds()), append(r.SampledCPU, sc.seconds())
		b.progress("run %d/%d: original %s, osp %s", i, b.o.Runs, ms(o.runTime), ms(g.runTime))
	}
	r.Original.Seconds, r.Sampled.Seconds = ow, sw
	r.Original.MedianSeconds, r.Sampled.MedianSeconds = stats.Median(ow), stats.Median(sw)
	r.Ratio = r.Sampled.MedianSeconds / r.Original.MedianSeconds
	if c := stats.Median(r.OriginalCPU); c > 0 {
		r.CPURatio = stats.Median(r.SampledCPU) / c
	}
	r.MinRatio = slices.Min(sw) / slices.Min(ow)
	r.BlockEntries, r.Samples = prof.Run.BlockEntries, prof.Sampling.Samples
	b.progress("median: original %s, osp %s, ratio %.3f (cpu %.3f, minima %.3f)",
		ms(secs(r.Original.MedianSeconds)), ms(secs(r.Sampled.MedianSeconds)), r.Ratio, r.CPURatio, r.MinRatio)

	// The same samples again, untimed, counted with no bound too, to
	// tell the bound's misses from the samples', then the run counting
	// every subpath exactly, against which they are scored.
	trace, err := osp.Compile(ctx, ins, osp.ModeTrace, compileCfg)
	if err != nil {
		return fail("compile osp trace: %v", err)
	}
	defer trace.Close(context.WithoutCancel(ctx))
	rs, err := osp.ScoreRun(ctx, sample, trace, osp.ScoreOptions{
		Sampling:  b.o.Sampling,
		Unbounded: true,
		Run: func(what string, run func(runner.Config) (runner.Result, error)) error {
			start := time.Now()
			out, err := b.runWith(ctx, run)
			if err == nil {
				err = sameOutput(want, out)
			}
			if err != nil {
				return fmt.Errorf("%s: %v%s", what, err, out.tail())
			}
			if what == osp.TracedRun {
				r.TraceSeconds = time.Since(start).Seconds()
				b.progress("counted every subpath in %.1fs", r.TraceSeconds)
			}
			return nil
		},
	})
	if err != nil {
		return fail("%v", err)
	}
	if pr := rs.Profile; pr.Run.BlockEntries != prof.Run.BlockEntries || pr.Sampling.Samples != prof.Sampling.Samples {
		return fail("sampled run counted with no bound: %d block entries and %d samples, the timed runs %d and %d",
			pr.Run.BlockEntries, pr.Sampling.Samples, prof.Run.BlockEntries, prof.Sampling.Samples)
	}
	if err := b.addScore(&r, rs.Profile, rs.Score, b.o.Sampling.Memory); err != nil {
		return fail("%v", err)
	}
	for _, u := range rs.Unbounded {
		dropTop(u.Score)
		r.Unbounded = append(r.Unbounded, OSPUnbounded{Every: u.Every, Score: *u.Score})
		_, meet, near := meets(u.Score, 1<<30)
		what := "the hot list's windows"
		if u.Every {
			what = "every window"
		}
		b.progress("the samples with no bound, %s: %d lengths meet the target (%d with near ties)", what, meet, near)
	}
	ex := rs.Exact
	for _, m := range b.o.Sweep {
		so := b.o.Sampling
		so.Memory = m
		g, pr, err := b.sampleOnce(ctx, sample, so, nil)
		if err == nil {
			err = sameOutput(want, g)
		}
		if err != nil {
			return fail("sampled run at --memory %d: %v", m, err)
		}
		sc, err := osp.ScoreProfile(ex, pr, osp.ScoreTops)
		if err == nil {
			err = b.addScore(&r, pr, sc, m)
		}
		if err != nil {
			return fail("%v", err)
		}
	}
	return r
}

// addScore appends sc, prof's score at memory bound m, to r.
func (b *ospBenchmark) addScore(r *OSPProgram, prof *osp.Profile, sc *osp.Score, m int) error {
	if prof.Memory.HotListBytes > m {
		return fmt.Errorf("at --memory %d the hot list took %d bytes", m, prof.Memory.HotListBytes)
	}
	dropTop(sc)
	s := OSPScore{Memory: m, HotListBytes: prof.Memory.HotListBytes, Pairs: prof.Memory.Pairs, Score: *sc}
	for _, l := range prof.Sampling.ByLength {
		s.Tau = append(s.Tau, l.Tau)
	}
	r.Scores = append(r.Scores, s)
	n, meet, near := s.meets(1 << 30)
	b.progress("--memory %d: %d of %d lengths meet the target (%d with near ties); hot list %d bytes", m, meet, n, near, s.HotListBytes)
	return nil
}

// dropTop drops the true top lists, which would make results.json large;
// the score's figures are what the tables need.
func dropTop(sc *osp.Score) {
	for i := range sc.Lengths {
		for j := range sc.Lengths[i].At {
			sc.Lengths[i].At[j].Top = nil
		}
	}
	for j := range sc.Overall.At {
		sc.Overall.At[j].Top = nil
	}
}

// cpuSpan is the process's CPU time of one run, from its start (after
// runWith's collection) to its AfterRun: like RunTime, it leaves out
// building the profile afterwards, and it includes the sampling worker's
// work.
type cpuSpan struct{ from, to time.Duration }

// start starts the span now and ends it at cfg's AfterRun.
func (s *cpuSpan) start(cfg *runner.Config) {
	cfg.AfterRun = func(context.Context, map[string]api.Module) error {
		s.to = cputime.Process()
		return nil
	}
	s.from = cputime.Process()
}

func (s *cpuSpan) seconds() float64 { return (s.to - s.from).Seconds() }

// sampleOnce runs the sampling build once with a fresh configuration,
// measuring its CPU time in cpu if that is not nil.
func (b *ospBenchmark) sampleOnce(ctx context.Context, prog *osp.Program, so osp.Options, cpu *cpuSpan) (output, *osp.Profile, error) {
	var prof *osp.Profile
	out, err := b.runWith(ctx, func(cfg runner.Config) (runner.Result, error) {
		if cpu != nil {
			cpu.start(&cfg)
		}
		p, res, err := prog.Sample(ctx, so, cfg)
		prof = p
		return res, err
	})
	return out, prof, err
}
