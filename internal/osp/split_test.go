// TestCostSplit: where OSP's overhead comes from, build by build
// (run with -osp.split).

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

	"github.com/pathprof/pathprof/internal/cputime"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/stats"
	"github.com/pathprof/pathprof/internal/wasm"
)

var (
	splitFlag = flag.Bool("osp.split", false, "run TestCostSplit: time builds with parts of the code at path ends, to split OSP's cost")
	splitRuns = flag.Int("osp.runs", 5, "TestCostSplit: timed runs per build")
	splitOnly = flag.String("osp.only", "", "TestCostSplit: only the programs with these comma-separated names")
	splitSkip = flag.Float64("osp.skip", 0, "TestCostSplit: the whole build's mean skip (0: the default)")
)

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
	{"path registers", func(*wasm.Asm, rec, endSite) []byte { return nil }, 0},
	{"registers stored", func(a *wasm.Asm, r rec, e endSite) []byte {
		a.Idx(wasm.OpLocalGet, e.p).Op(wasm.OpI32Wrap).Idx(wasm.OpGlobalSet, r.g.c)
		return nil
	}, 0},
	{"countdown", func(a *wasm.Asm, r rec, e endSite) []byte {
		countDown(a, r.g.c, e.p)
		return nil
	}, 0},
	{"countdown and test", func(a *wasm.Asm, r rec, e endSite) []byte {
		countDown(a, r.g.c, e.p)
		e.openArm(a)
		a.I32(1<<30).Idx(wasm.OpGlobalSet, r.g.c)
		return e.closeArm(a)
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
		end = cputime.Process()
		if after != nil {
			return after(ctx, mods)
		}
		return nil
	}
	start := cputime.Process()
	return cfg, func() time.Duration { return end - start }
}

// TestCostSplit tells where OSP's overhead comes from, on the test
// programs (the C programs, the Go hello program and the sort package's
// test binary):
//
//	go test ./osp -run TestCostSplit -osp.split -v -timeout 60m
//
// Per program, the original, each build of partProbes and the whole
// sampling build are run once untimed (their outputs must agree), then
// -osp.runs times interleaved; it prints the medians' ratios to the
// original, wall clock and process CPU. The overhead and accuracy of the
// whole build over the benchmark suite are pathprof bench --osp's.
func TestCostSplit(t *testing.T) {
	if !*splitFlag {
		t.Skip("run with -osp.split")
	}
	ctx := context.Background()
	opt := Options{MeanSkip: *splitSkip}
	if err := opt.fill(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Ratios to the original of builds with parts of the code at path ends (medians of %d interleaved runs; wall clock / CPU):\n\n", *splitRuns)
	fmt.Fprint(&b, "| program |")
	for _, pp := range partProbes {
		fmt.Fprintf(&b, " %s |", pp.name)
	}
	fmt.Fprintln(&b, " whole (sampling) |")
	fmt.Fprintln(&b, "| --- |"+strings.Repeat(" --: |", len(partProbes)+1))
	gw := make([][]float64, len(partProbes)+1)
	gc := make([][]float64, len(partProbes)+1)
	for _, p := range benchPrograms(t, true) {
		if *splitOnly != "" && !slices.Contains(strings.Split(*splitOnly, ","), p.Name) {
			continue
		}
		orig, parts := splitProgram(t, ctx, p, opt)
		fmt.Fprintf(&b, "| %s |", p.Name)
		for i, pt := range parts {
			w, c := ratio(pt.wall, orig.wall), ratio(pt.cpu, orig.cpu)
			gw[i], gc[i] = append(gw[i], w), append(gc[i], c)
			fmt.Fprintf(&b, " %.2f / %.2f |", w, c)
		}
		fmt.Fprintln(&b)
	}
	fmt.Fprint(&b, "| **geometric mean** |")
	for i := range gw {
		fmt.Fprintf(&b, " **%.2f / %.2f** |", geoMean(gw[i]), geoMean(gc[i]))
	}
	fmt.Fprintln(&b)
	fmt.Println(b.String())
}

// splitProgram times p's original and, interleaved with it, the builds of
// partProbes and the whole sampling build (last in parts).
func splitProgram(t *testing.T, ctx context.Context, p program, opt Options) (orig partTimes, parts []partTimes) {
	src, ins := readInstrumented(t, p)
	var discard bytes.Buffer
	origProg, err := runner.Compile(ctx, src, p.Config(t, &discard))
	if err != nil {
		t.Fatal(err)
	}
	defer origProg.Close(ctx)
	var want string
	runOrig := func() (runner.Result, time.Duration) {
		var out bytes.Buffer
		cfg, cpu := cpuConfig(p.Config(t, &out))
		res, err := origProg.Run(ctx, cfg)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		want = out.String()
		return res, cpu()
	}
	runOrig()
	// build compiles ins, runs it once to check its output, and returns
	// what runs it again; sample is its mean skip, 0 for runs in which the
	// recorder is never called.
	build := func(name string, ins *Instrumented, sample float64) func() (runner.Result, time.Duration) {
		prog, err := Compile(ctx, ins, ModeSample, p.Config(t, &discard))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { prog.Close(ctx) })
		run := func() (runner.Result, time.Duration) {
			var out bytes.Buffer
			cfg, cpu := cpuConfig(p.Config(t, &out))
			var res runner.Result
			var err error
			if sample > 0 {
				o := opt
				o.MeanSkip = sample
				_, res, err = prog.Sample(ctx, o, cfg)
			} else {
				res, err = prog.prog.Run(ctx, cfg)
			}
			if err != nil {
				t.Fatalf("%s, %s: %v", p.Name, name, err)
			}
			if out.String() != want {
				t.Fatalf("%s, %s: the output differs from the original's", p.Name, name)
			}
			return res, cpu()
		}
		run()
		return run
	}
	var runs []func() (runner.Result, time.Duration)
	for _, pp := range partProbes {
		pins, err := instrumentWith(src, pp.probe, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, build(pp.name, pins, pp.sample))
	}
	runs = append(runs, build("whole", ins, opt.MeanSkip))
	var ow, oc []float64
	pw, pc := make([][]float64, len(runs)), make([][]float64, len(runs))
	for range *splitRuns {
		res, c := runOrig()
		ow, oc = append(ow, float64(res.RunTime)), append(oc, float64(c))
		for i, run := range runs {
			res, c := run()
			pw[i], pc[i] = append(pw[i], float64(res.RunTime)), append(pc[i], float64(c))
		}
	}
	for i := range runs {
		parts = append(parts, partTimes{time.Duration(stats.Median(pw[i])), time.Duration(stats.Median(pc[i]))})
	}
	return partTimes{time.Duration(stats.Median(ow)), time.Duration(stats.Median(oc))}, parts
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func geoMean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}
