package osp

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"

	"pathprof/bench"
	"pathprof/runner"
	"pathprof/wasm"
)

var (
	evalFlag    = flag.Bool("osp.eval", false, "run TestEval: overhead, memory and accuracy of OSP on the benchmark programs")
	evalRuns    = flag.Int("osp.runs", 5, "TestEval: timed runs per build")
	evalMemory  = flag.Int("osp.memory", 0, "TestEval: --memory (0: the default)")
	evalSkip    = flag.Float64("osp.skip", 0, "TestEval: mean skip (0: the default)")
	evalCompact = flag.Bool("osp.compact", false, "TestEval: --compact")
	evalOnly    = flag.String("osp.only", "", "TestEval: only the programs with these comma-separated names")
	evalParts   = flag.Bool("osp.parts", true, "TestEval: also time builds with parts of the countdown, to split its cost")
	evalSweep   = flag.String("osp.sweep", "65536,262144", "TestEval: other --memory bounds to score, comma-separated (untimed)")
	evalSuite   = flag.String("osp.suite", "", "TestEval: also the programs of the pathprof bench suite in this directory (pathprof bench --prepare; \"default\": its default directory)")
)

// evalResult is what TestEval measures for one program.
type evalResult struct {
	name              string
	blocks            uint64
	origWall, ospWall time.Duration // medians
	// minRatio is the fastest OSP run over the fastest original run: the
	// machine's noise only ever adds time, so it moves less between
	// evaluations than the medians.
	minRatio        float64
	origCPU, ospCPU time.Duration
	pairRatios      []float64 // per interleaved pair, wall
	prof            *Profile
	score           *Score
	traceTime       time.Duration
	// parts holds the median wall and CPU times of the partial builds,
	// in the order of partProbes.
	parts []partTimes
	// sweep holds the profiles and scores of the other memory bounds.
	sweep []sweepResult
}

type partTimes struct{ wall, cpu time.Duration }

// partProbes are builds with part of the code at path ends, which tell
// where its cost comes from: the path registers alone (nothing at path
// ends); the countdown alone; the countdown and its test, with no call in
// the branch; and the whole code with skips so long that it never
// samples.
var partProbes = []struct {
	name  string
	probe endFunc
	// sample runs the build through Program.Sample with this mean skip;
	// 0 runs it without the recorder being called.
	sample float64
}{
	{"path registers", func(*wasm.Asm, rec, endSite) {}, 0},
	{"registers stored", func(a *wasm.Asm, r rec, e endSite) {
		a.Idx(wasm.OpLocalGet, e.p).Op(wasm.OpI32Wrap).Idx(wasm.OpGlobalSet, r.g.c)
	}, 0},
	{"countdown", func(a *wasm.Asm, r rec, e endSite) {
		countDown(a, r.g.c, e.p)
	}, 0},
	{"countdown and test", func(a *wasm.Asm, r rec, e endSite) {
		countDown(a, r.g.c, e.p)
		e.openArm(a)
		a.I32(1<<30).Idx(wasm.OpGlobalSet, r.g.c)
		e.closeArm(a)
	}, 0},
	{"countdown, no samples", countdownEnd, 1 << 30},
}

// cpuConfig returns cfg with an AfterRun that notes the process's CPU
// time when the program has finished (and, sampling, the worker too),
// after a collection of the garbage of earlier runs; cpu then returns
// the CPU time from the call of cpuConfig to that moment. Like the
// wall-clock RunTime, it leaves out building the profile afterwards; it
// includes the sampling worker's work, on whatever thread it ran.
func cpuConfig(cfg runner.Config) (_ runner.Config, cpu func() time.Duration) {
	runtime.GC()
	after := cfg.AfterRun
	var end time.Duration
	cfg.AfterRun = func(ctx context.Context, mods map[string]api.Module) error {
		end = processCPU()
		if after != nil {
			return after(ctx, mods)
		}
		return nil
	}
	start := processCPU()
	return cfg, func() time.Duration { return end - start }
}

type sweepResult struct {
	memory int
	prof   *Profile
	score  *Score
}

// TestEval measures OSP on the benchmark programs (the C programs, the Go
// hello program and the sort package's test binary) and prints the tables
// of docs/osp.md:
//
//	go test ./osp -run TestEval -osp.eval -v -timeout 60m
//
// Per program: the uninstrumented and the sampling build are each run
// once untimed (their outputs must agree), then -osp.runs times
// interleaved (original, OSP, original, OSP, ...); the medians of the
// runs' times (runner.Result.RunTime: instantiation and execution, not
// compilation) give the ratio. The CPU time of the process is measured
// too: on a shared machine it moves less than the wall clock, and it
// includes the sampling worker's, which runs beside the program.
// Then one traced run counts every subpath exactly and the profile is
// scored against it.
func TestEval(t *testing.T) {
	if !*evalFlag {
		t.Skip("run with -osp.eval")
	}
	ctx := context.Background()
	opt := Options{Memory: *evalMemory, MeanSkip: *evalSkip, Compact: *evalCompact}
	if err := opt.fill(); err != nil {
		t.Fatal(err)
	}
	var results []evalResult
	for _, p := range evalPrograms(t) {
		if *evalOnly != "" && !slices.Contains(strings.Split(*evalOnly, ","), p.Name) {
			continue
		}
		r := evalProgram(t, ctx, p, opt)
		results = append(results, r)
		t.Logf("%s: ratio %.2f (wall), %.2f (cpu); hot list %d bytes; trace %.1fs",
			p.Name, ratio(r.ospWall, r.origWall), ratio(r.ospCPU, r.origCPU), r.prof.Memory.HotListBytes, r.traceTime.Seconds())
	}
	var b strings.Builder
	writeEval(&b, results, opt)
	fmt.Println(b.String())
}

// evalPrograms are the test programs and, with -osp.suite, the bench
// suite's other programs on their inputs.
func evalPrograms(t *testing.T) []program {
	ps := benchPrograms(t, true)
	if *evalSuite == "" {
		return ps
	}
	dir := *evalSuite
	if dir == "default" {
		dir = bench.DefaultDir()
	}
	s, err := bench.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, bp := range s.Programs {
		if slices.ContainsFunc(ps, func(p program) bool { return p.Name == bp.Name }) {
			continue
		}
		p := program{Name: bp.Name, Path: s.Path(bp.Wasm), Args: bp.Args, Env: bp.Env}
		if bp.Stdin != "" {
			p.Stdin = s.Path(bp.Stdin)
		}
		p.Dirs = func(t testing.TB) []runner.Mount {
			dirs, cleanup, err := s.Mounts(&bp)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(cleanup)
			return dirs
		}
		ps = append(ps, p)
	}
	return ps
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func evalProgram(t *testing.T, ctx context.Context, p program, opt Options) evalResult {
	r := evalResult{name: p.Name}
	orig, ins := readInstrumented(t, p)
	var discard bytes.Buffer
	origProg, err := runner.Compile(ctx, orig, p.Config(t, &discard))
	if err != nil {
		t.Fatal(err)
	}
	defer origProg.Close(ctx)
	sample, err := Compile(ctx, ins, ModeSample, p.Config(t, &discard))
	if err != nil {
		t.Fatal(err)
	}
	defer sample.Close(ctx)

	runOrig := func() (string, runner.Result, time.Duration) {
		var out bytes.Buffer
		cfg, cpu := cpuConfig(p.Config(t, &out))
		res, err := origProg.Run(ctx, cfg)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		return out.String(), res, cpu()
	}
	runOSP := func() (string, runner.Result, *Profile, time.Duration) {
		var out bytes.Buffer
		cfg, cpu := cpuConfig(p.Config(t, &out))
		prof, res, err := sample.Sample(ctx, opt, cfg)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		return out.String(), res, prof, cpu()
	}
	want, wres, _ := runOrig()
	if p.Want != "" && want != p.Want {
		t.Fatalf("%s: the original printed something else than expected", p.Name)
	}
	got, gres, _, _ := runOSP()
	if got != want || gres.ExitCode != wres.ExitCode {
		t.Fatalf("%s: the instrumented program printed or exited differently", p.Name)
	}
	// The partial builds, checked like the whole one.
	var parts []func() (runner.Result, time.Duration)
	if *evalParts {
		for _, pp := range partProbes {
			pins, err := instrumentWith(orig, pp.probe, nil)
			if err != nil {
				t.Fatal(err)
			}
			prog, err := Compile(ctx, pins, ModeSample, p.Config(t, &discard))
			if err != nil {
				t.Fatal(err)
			}
			defer prog.Close(ctx)
			run := func() (runner.Result, time.Duration) {
				var out bytes.Buffer
				cfg, cpu := cpuConfig(p.Config(t, &out))
				var res runner.Result
				var err error
				if pp.sample > 0 {
					o := opt
					o.MeanSkip = pp.sample
					_, res, err = prog.Sample(ctx, o, cfg)
				} else {
					res, err = prog.prog.Run(ctx, cfg)
				}
				if err != nil {
					t.Fatalf("%s, %s: %v", p.Name, pp.name, err)
				}
				if out.String() != want {
					t.Fatalf("%s, %s: the output differs", p.Name, pp.name)
				}
				return res, cpu()
			}
			run()
			parts = append(parts, run)
		}
	}
	var ow, sw, oc, sc []float64
	pw, pc := make([][]float64, len(parts)), make([][]float64, len(parts))
	for range *evalRuns {
		_, res, c := runOrig()
		ow, oc = append(ow, float64(res.RunTime)), append(oc, float64(c))
		_, res, r.prof, c = runOSP()
		sw, sc = append(sw, float64(res.RunTime)), append(sc, float64(c))
		r.pairRatios = append(r.pairRatios, sw[len(sw)-1]/ow[len(ow)-1])
		for i, run := range parts {
			res, c := run()
			pw[i], pc[i] = append(pw[i], float64(res.RunTime)), append(pc[i], float64(c))
		}
	}
	for i := range parts {
		r.parts = append(r.parts, partTimes{time.Duration(median(pw[i])), time.Duration(median(pc[i]))})
	}
	r.origWall, r.ospWall = time.Duration(median(ow)), time.Duration(median(sw))
	r.minRatio = slices.Min(sw) / slices.Min(ow)
	r.origCPU, r.ospCPU = time.Duration(median(oc)), time.Duration(median(sc))
	r.blocks = r.prof.Run.BlockEntries
	if r.prof.Memory.HotListBytes > opt.Memory {
		t.Errorf("%s: the hot list took %d bytes, over the bound of %d", p.Name, r.prof.Memory.HotListBytes, opt.Memory)
	}

	trace, err := Compile(ctx, ins, ModeTrace, p.Config(t, &discard))
	if err != nil {
		t.Fatal(err)
	}
	defer trace.Close(ctx)
	start := time.Now()
	var out bytes.Buffer
	ex, _, err := trace.Trace(ctx, opt.Lengths, p.Config(t, &out))
	if err != nil {
		t.Fatalf("%s: trace: %v", p.Name, err)
	}
	r.traceTime = time.Since(start)
	if out.String() != want {
		t.Fatalf("%s: the traced program printed something else", p.Name)
	}
	if ex.Blocks != r.blocks {
		t.Errorf("%s: the traced run had %d block entries, the sampled one %d", p.Name, ex.Blocks, r.blocks)
	}
	if r.score, err = ScoreProfile(ex, r.prof, []int{10, 100}); err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Split(*evalSweep, ",") {
		if f == "" {
			continue
		}
		var m int
		if _, err := fmt.Sscan(f, &m); err != nil {
			t.Fatalf("-osp.sweep: %v", err)
		}
		o := opt
		o.Memory = m
		var out bytes.Buffer
		prof, _, err := sample.Sample(ctx, o, p.Config(t, &out))
		if err != nil {
			t.Fatal(err)
		}
		if prof.Memory.HotListBytes > m {
			t.Errorf("%s: the hot list took %d bytes, over the bound of %d", p.Name, prof.Memory.HotListBytes, m)
		}
		sc, err := ScoreProfile(ex, prof, []int{10, 100})
		if err != nil {
			t.Fatal(err)
		}
		r.sweep = append(r.sweep, sweepResult{m, prof, sc})
	}
	return r
}

// writeEval writes the tables of docs/osp.md.
func writeEval(b *strings.Builder, rs []evalResult, opt Options) {
	compact := ""
	if opt.Compact {
		compact = ", --compact"
	}
	fmt.Fprintf(b, "Settings: --memory %d, --lengths %s, mean skip %g, seed %d%s; %d timed runs per build.\n\n",
		opt.Memory, joinInts(opt.Lengths), opt.MeanSkip, opt.Seed, compact, *evalRuns)
	fmt.Fprintln(b, "| program | block entries | samples | original ms | OSP ms | ratio | ratio (CPU) | ratio of minima | pair ratios | hot list bytes | subpaths kept |")
	fmt.Fprintln(b, "| --- | --: | --: | --: | --: | --: | --: | --: | --- | --: | --: |")
	var wall, cpu, mins []float64
	for _, r := range rs {
		w, c := ratio(r.ospWall, r.origWall), ratio(r.ospCPU, r.origCPU)
		wall, cpu, mins = append(wall, w), append(cpu, c), append(mins, r.minRatio)
		lo, hi := slices.Min(r.pairRatios), slices.Max(r.pairRatios)
		fmt.Fprintf(b, "| %s | %s | %s | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f–%.2f | %s | %d |\n", r.name, group(r.blocks), group(r.prof.Sampling.Samples),
			ms(r.origWall), ms(r.ospWall), w, c, r.minRatio, lo, hi, group(uint64(r.prof.Memory.HotListBytes)), r.prof.Memory.Pairs)
	}
	fmt.Fprintf(b, "| **geometric mean** | | | | | **%.2f** | **%.2f** | **%.2f** | | | |\n\n", geoMean(wall), geoMean(cpu), geoMean(mins))

	if len(rs) > 0 && len(rs[0].parts) > 0 {
		fmt.Fprintln(b, "Where the time goes: ratios to the original of builds with parts of the code at path ends (medians of the same interleaved runs; wall clock, then CPU):")
		fmt.Fprintln(b)
		fmt.Fprint(b, "| program |")
		for _, pp := range partProbes {
			fmt.Fprintf(b, " %s |", pp.name)
		}
		fmt.Fprintln(b, " whole (sampling) |")
		fmt.Fprintln(b, "| --- |"+strings.Repeat(" --: |", len(partProbes)+1))
		gw := make([][]float64, len(partProbes)+1)
		gc := make([][]float64, len(partProbes)+1)
		for _, r := range rs {
			fmt.Fprintf(b, "| %s |", r.name)
			for i, pt := range append(slices.Clone(r.parts), partTimes{r.ospWall, r.ospCPU}) {
				w, c := ratio(pt.wall, r.origWall), ratio(pt.cpu, r.origCPU)
				gw[i], gc[i] = append(gw[i], w), append(gc[i], c)
				fmt.Fprintf(b, " %.2f / %.2f |", w, c)
			}
			fmt.Fprintln(b)
		}
		fmt.Fprint(b, "| **geometric mean** |")
		for i := range gw {
			fmt.Fprintf(b, " **%.2f / %.2f** |", geoMean(gw[i]), geoMean(gc[i]))
		}
		fmt.Fprintln(b)
		fmt.Fprintln(b)
	}
	fmt.Fprintln(b, "Accuracy per length (recall of the true top k among the profile's top k; relative count error over the true top k; the share of the true top 100 found whose exact count is within the 95% error bound, and how many were found):")
	fmt.Fprintln(b)
	fmt.Fprintln(b, "| program | length | distinct | τ | recall@10 | (ties ±1%) | median err@10 | max err@10 | recall@100 | median err@100 | in bound@100 |")
	fmt.Fprintln(b, "| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |")
	for _, r := range rs {
		rows := append(slices.Clone(r.score.Lengths), r.score.Overall)
		for i, g := range rows {
			name, tau := fmt.Sprint(g.Length), ""
			if g.Length == 0 {
				name = "all (×length)"
			} else {
				tau = fmt.Sprintf("%.3g", r.prof.Sampling.ByLength[i].Tau)
			}
			cov := "-"
			if a := g.At[1]; a.InProfile > 0 {
				cov = fmt.Sprintf("%s of %d", percent(a.Covered), a.InProfile)
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.name, name, group(uint64(g.Distinct)), tau,
				percent(g.At[0].Recall), percent(g.At[0].RecallNear), percent(g.At[0].MedianError), percent(g.At[0].MaxError),
				percent(g.At[1].Recall), percent(g.At[1].MedianError), cov)
		}
	}
	fmt.Fprintln(b)
	fmt.Fprintln(b, "Per program and memory bound: the lengths (of 6) whose top 10 is found with recall ≥ 90% and median error < 10%, strictly and with ties within 1% of the 10th's count; the medians over lengths of recall@10 and of the median error@10, the hot list's bytes and τ of the longest length:")
	fmt.Fprintln(b)
	fmt.Fprintln(b, "| program | --memory | lengths meeting both | (ties ±1%) | median recall@10 | median of median err@10 | hot list bytes | τ (longest) |")
	fmt.Fprintln(b, "| --- | --: | --: | --: | --: | --: | --: | --: |")
	var rows, okAll, nearAll int
	for _, r := range rs {
		all := append([]sweepResult{{opt.Memory, r.prof, r.score}}, r.sweep...)
		slices.SortFunc(all, func(a, b sweepResult) int { return a.memory - b.memory })
		for _, sw := range all {
			var rec, errs []float64
			ok, near := 0, 0
			for _, g := range sw.score.Lengths {
				rec, errs = append(rec, g.At[0].Recall), append(errs, g.At[0].MedianError)
				if g.At[0].MedianError < 0.1 && g.At[0].Recall >= 0.9 {
					ok++
				}
				if g.At[0].MedianError < 0.1 && g.At[0].RecallNear >= 0.9 {
					near++
				}
			}
			if sw.memory == opt.Memory {
				rows, okAll, nearAll = rows+len(sw.score.Lengths), okAll+ok, nearAll+near
			}
			bl := sw.prof.Sampling.ByLength
			fmt.Fprintf(b, "| %s | %s | %d | %d | %s | %s | %s | %.3g |\n", r.name, group(uint64(sw.memory)), ok, near,
				percent(median(rec)), percent(median(errs)), group(uint64(sw.prof.Memory.HotListBytes)), bl[len(bl)-1].Tau)
		}
	}
	fmt.Fprintf(b, "\nAt --memory %d: %d of %d lengths meet both, %d with ties within 1%%.\n", opt.Memory, okAll, rows, nearAll)
	fmt.Fprintln(b)
	fmt.Fprintln(b, "| program | exact counting s |")
	fmt.Fprintln(b, "| --- | --: |")
	for _, r := range rs {
		fmt.Fprintf(b, "| %s | %.1f |\n", r.name, r.traceTime.Seconds())
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func geoMean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}
