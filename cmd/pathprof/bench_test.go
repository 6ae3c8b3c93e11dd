package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/bench"
	"github.com/pathprof/pathprof/internal/testprogs"
)

// TestBenchQuick runs pathprof bench --quick on a suite of two small C
// programs, one run each, and checks the table and the raw results; a
// third program whose expected exit code is wrong must fail loudly.
func TestBenchQuick(t *testing.T) {
	calc := testprogs.CProgramByName(t, "calc")
	grid := testprogs.CProgramByName(t, "grid")
	dir := writeSuite(t, []map[string]any{
		{"name": "calc", "wasm": calc.Wasm, "stdin": calc.Stdin, "quick": true,
			"expect_stdout": filepath.Join(filepath.Dir(calc.Wasm), "calc.expected"), "expect_exit_code": calc.WantExitCode},
		{"name": "grid", "wasm": grid.Wasm, "args": grid.Args, "mounts": []string{"@tmp:/tmp"}, "quick": true},
		{"name": "calc-wrong", "wasm": calc.Wasm, "stdin": calc.Stdin, "expect_exit_code": calc.WantExitCode + 7},
	})
	out := filepath.Join(t.TempDir(), "out")
	cache := testprogs.WazeroCacheDir(t)

	var stdout, stderr bytes.Buffer
	code := cmdBench([]string{"--quick", "--suite", dir, "-o", out, "--runs", "1", "--cache", cache}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, bench.MarkdownName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(md, stdout.Bytes()) {
		t.Errorf("results.md differs from what was printed")
	}
	head := "| program | original ms | SBL ms | ratio |"
	if runtime.GOOS == "linux" {
		head = "| program | original CPU ms | SBL CPU ms | ratio | wall ratio |"
	}
	for _, want := range []string{head, "\n| calc | ", "\n| grid | ", "| **geometric mean** |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "calc-wrong") || strings.Contains(string(md), "FAILED") {
		t.Errorf("--quick ran more than the quick programs, or one failed:\n%s", md)
	}
	for _, want := range []string{"bench: calc: run 1/1", "bench: grid: check run"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr.String())
		}
	}
	rep, err := bench.ReadReport(filepath.Join(out, bench.JSONName))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Programs) != 2 || rep.Failed != 0 || rep.Runs != 1 || rep.GeoMean["sbl"] <= 0 {
		t.Fatalf("results.json: %+v", rep)
	}
	for _, p := range rep.Programs {
		sbl := p.Strategies[0]
		if !p.OutputsMatch || p.Error != "" || len(p.Original.Seconds) != 1 || len(sbl.Seconds) != 1 ||
			sbl.ProbeHits == 0 || p.ExecutedPaths == 0 || p.PathExecutions == 0 || p.Profiled == 0 ||
			p.Functions < p.Profiled || p.PossiblePaths == "" || p.PossiblePaths == "0" {
			t.Errorf("%s: %+v", p.Name, p)
		}
		if runtime.GOOS == "linux" && (rep.Measure != bench.MeasureCPU || len(p.Original.CPUSeconds) != 1 || len(sbl.CPUSeconds) != 1 ||
			sbl.CPURatio <= 0 || sbl.WallRatio <= 0 || rep.Ratio(&sbl) != sbl.CPURatio) {
			t.Errorf("%s: CPU time not measured: measure %q, %+v", p.Name, rep.Measure, sbl)
		}
	}

	stdout.Reset()
	stderr.Reset()
	code = cmdBench([]string{"--only", "calc-wrong", "--suite", dir, "-o", out, "--runs", "1", "--cache", cache}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stdout.String(), "| calc-wrong |") || !strings.Contains(stdout.String(), "**calc-wrong FAILED**: original run: exit code 0, the suite expects 7") ||
		!strings.Contains(stderr.String(), "FAILED") {
		t.Fatalf("a failing program: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
}

// TestBenchStrategies runs pathprof bench --strategies on one small C
// program: every partitioned strategy gets its row, share tables and a
// chart with one bar per program and strategy.
func TestBenchStrategies(t *testing.T) {
	grid := testprogs.CProgramByName(t, "grid")
	dir := writeSuite(t, []map[string]any{{"name": "grid", "wasm": grid.Wasm, "args": grid.Args, "mounts": []string{"@tmp:/tmp"}}})
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	code := cmdBench([]string{"--strategies", "--suite", dir, "-o", out, "--runs", "1", "--cache", testprogs.WazeroCacheDir(t), "-q"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	md := stdout.String()
	cols, p3 := "| SBL ms | ratio | PBL k=2 ms | ratio |", "P3 k=8 ms"
	if runtime.GOOS == "linux" {
		cols, p3 = "| SBL CPU ms | ratio | wall ratio | PBL k=2 CPU ms | ratio | wall ratio |", "P3 k=8 CPU ms"
	}
	for _, want := range []string{cols, p3, "Slowest copy's probe hits as a share of SBL's",
		"| **average** |", "](" + bench.ChartName + ")"} {
		if !strings.Contains(md, want) {
			t.Errorf("results lack %q:\n%s", want, md)
		}
	}
	svg, err := os.ReadFile(filepath.Join(out, bench.ChartName))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(svg), `class="bar"`); n != 2*len(bench.Partitioned) {
		t.Errorf("the chart has %d bars, want %d (grid and the average)", n, 2*len(bench.Partitioned))
	}
	rep, err := bench.ReadReport(filepath.Join(out, bench.JSONName))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Programs[0].Strategies[1:] {
		if m.ProfileEqual == nil || !*m.ProfileEqual || m.HitShare <= 0 || len(m.CopyHits) != m.Strategy.Copies {
			t.Errorf("%s: %+v", m.Strategy, m)
		}
	}

	checkFrom(t, out, md, bench.MarkdownName, bench.JSONName, bench.ChartName)

	// --hits-only plans the same copies, with the same hits, and runs none.
	quick := filepath.Join(t.TempDir(), "hits")
	var stdout3 bytes.Buffer
	code = cmdBench([]string{"--strategies", "--hits-only", "--suite", dir, "-o", quick, "--runs", "1", "--cache", testprogs.WazeroCacheDir(t), "-q"}, &stdout3, &stderr)
	if code != 0 {
		t.Fatalf("--hits-only: exit %d\n%s", code, stderr.String())
	}
	hits, err := bench.ReadReport(filepath.Join(quick, bench.JSONName))
	if err != nil {
		t.Fatal(err)
	}
	if !hits.HitsOnly || !strings.Contains(stdout3.String(), "not run") {
		t.Errorf("--hits-only not reported:\n%s", stdout3.String())
	}
	for j, m := range hits.Programs[0].Strategies[1:] {
		full := rep.Programs[0].Strategies[j+1]
		// Copies that share out calls or loops run, for their hits.
		if m.ProfileEqual != nil && !*m.ProfileEqual || m.WallRatio != 0 || m.HitShare != full.HitShare || !slices.Equal(m.CopyHits, full.CopyHits) {
			t.Errorf("--hits-only %s: %+v, full run %+v", m.Strategy, m, full)
		}
	}
	if _, ok := hits.GeoMean[bench.Partitioned[0].String()]; ok {
		t.Error("--hits-only reports a geometric mean for copies it did not run")
	}
	if code := cmdBench([]string{"--hits-only", "--suite", dir, "-o", quick}, &stdout3, &stderr); code != 2 {
		t.Errorf("--hits-only without --strategies: exit %d", code)
	}

	// --prefix-plans plans the copies by a snapshot of the run's first
	// tenth too; a run that ends before it gives its whole profile, which
	// plans as the prior profile does.
	pre := filepath.Join(t.TempDir(), "prefix")
	var stdout4 bytes.Buffer
	code = cmdBench([]string{"--strategies", "--hits-only", "--prefix-plans", "--suite", dir, "-o", pre, "--runs", "1", "--cache", testprogs.WazeroCacheDir(t), "-q"}, &stdout4, &stderr)
	if code != 0 {
		t.Fatalf("--prefix-plans: exit %d\n%s", code, stderr.String())
	}
	pr, err := bench.ReadReport(filepath.Join(pre, bench.JSONName))
	if err != nil {
		t.Fatal(err)
	}
	p := pr.Programs[0]
	if sbl := p.Strategies[0].ProbeHits; p.PrefixHits == 0 || p.PrefixHits > sbl {
		t.Errorf("--prefix-plans: the first tenth made %d hits of SBL's %d", p.PrefixHits, sbl)
	}
	for _, m := range p.Strategies[1:] {
		if m.PrefixHitShare <= 0 || p.PrefixHits == p.Strategies[0].ProbeHits && m.PrefixHitShare != m.HitShare {
			t.Errorf("--prefix-plans %s: %.3f by the first tenth (%d hits of %d), %.3f by the profile", m.Strategy, m.PrefixHitShare, p.PrefixHits, p.Strategies[0].ProbeHits, m.HitShare)
		}
	}
	if !strings.Contains(stdout4.String(), "the run's first tenth") {
		t.Errorf("--prefix-plans: no table:\n%s", stdout4.String())
	}
	if strings.Contains(stdout3.String(), "the run's first tenth") {
		t.Errorf("a table of plans by the first tenth without --prefix-plans:\n%s", stdout3.String())
	}
	if code := cmdBench([]string{"--prefix-plans", "--suite", dir, "-o", pre}, &stdout4, &stderr); code != 2 {
		t.Errorf("--prefix-plans without --strategies: exit %d", code)
	}
}

func TestBenchBadSuite(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, bench.ManifestName), []byte(`{"version": 1, "programs": [{"name": "x"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := cmdBench([]string{"--suite", dir}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), `program "x": no wasm file`) {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
}

// TestBenchOSP runs pathprof bench --osp on two small C programs, one run
// each, with a second memory bound: every program gets its overhead row,
// its scores at both bounds within them and of its samples with no bound
// (which the hot list, never thinned on these short runs, must equal), and
// --from writes the same files again.
func TestBenchOSP(t *testing.T) {
	calc := testprogs.CProgramByName(t, "calc")
	grid := testprogs.CProgramByName(t, "grid")
	dir := writeSuite(t, []map[string]any{
		{"name": "calc", "wasm": calc.Wasm, "stdin": calc.Stdin},
		{"name": "grid", "wasm": grid.Wasm, "args": grid.Args, "mounts": []string{"@tmp:/tmp"}},
	})
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	code := cmdBench([]string{"--osp", "--suite", dir, "-o", out, "--runs", "1", "--sweep", "64K", "--cache", testprogs.WazeroCacheDir(t)}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	md := stdout.String()
	for _, want := range []string{"| program | block entries | samples | original ms | OSP ms | ratio |", "\n| calc | ", "\n| grid | ",
		"| **geometric mean** |", "At `--memory 1048576`: ", "At `--memory 65536`: ", "| calc | 65,536 | 6 |", "| grid | 64 | ",
		"The same samples counted with no bound: ", "| calc | none | 6 |", "| grid | none, every window | 6 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("results lack %q:\n%s", want, md)
		}
	}
	for _, want := range []string{"bench: calc: run 1/1: original", "bench: grid: counted every subpath", "bench: calc: --memory 65536: ",
		"bench: grid: the samples with no bound, every window: "} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr.String())
		}
	}
	rep, err := bench.ReadOSPReport(filepath.Join(out, bench.JSONName))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 0 || len(rep.Programs) != 2 || rep.GeoMean.Wall <= 0 || len(rep.Accuracy) != 2 || rep.Accuracy[0].Lengths != 12 {
		t.Fatalf("results.json: %+v", rep)
	}
	for _, p := range rep.Programs {
		if p.BlockEntries == 0 || p.Samples == 0 || p.Ratio <= 0 || len(p.Scores) != 2 || p.Scores[0].Memory != 1<<20 || p.Scores[1].Memory != 64<<10 {
			t.Errorf("%s: %+v", p.Name, p)
		}
		for _, s := range p.Scores {
			if s.HotListBytes > s.Memory || len(s.Score.Lengths) != 6 || len(s.Tau) != 6 {
				t.Errorf("%s at --memory %d: %+v", p.Name, s.Memory, s)
			}
		}
		if len(p.Unbounded) != 2 || p.Unbounded[0].Every || !p.Unbounded[1].Every {
			t.Fatalf("%s: unbounded scores %+v", p.Name, p.Unbounded)
		}
		for i, l := range p.Scores[0].Score.Lengths {
			if p.Scores[0].Tau[i] == 1 && !reflect.DeepEqual(l, p.Unbounded[0].Score.Lengths[i]) {
				t.Errorf("%s, length %d, τ = 1: the profile scores %+v, its samples with no bound %+v", p.Name, l.Length, l, p.Unbounded[0].Score.Lengths[i])
			}
		}
	}
	if u := rep.UnboundedEvery; u.Lengths != 12 || rep.UnboundedSame.Lengths != 12 {
		t.Errorf("every window with no bound: %+v, the hot list's windows %+v", u, rep.UnboundedSame)
	}

	checkFrom(t, out, md, bench.MarkdownName, bench.JSONName)

	for _, args := range [][]string{{"--memory", "64K"}, {"--osp", "--strategies"}, {"--osp", "--sweep", "0"}} {
		stderr.Reset()
		if code := cmdBench(append(args, "--suite", dir, "-o", out), &stdout, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, code, stderr.String())
		}
	}
}

// writeSuite writes a suite manifest of the given programs into a new
// directory and returns the directory.
func writeSuite(t *testing.T, programs []map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	data, err := json.Marshal(map[string]any{"version": 1, "programs": programs})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, bench.ManifestName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkFrom runs bench --from on the results.json in out: it must print
// md and write the named files of out again, byte for byte.
func checkFrom(t *testing.T, out, md string, names ...string) {
	t.Helper()
	again := filepath.Join(t.TempDir(), "again")
	var stdout, stderr bytes.Buffer
	if code := cmdBench([]string{"--from", filepath.Join(out, bench.JSONName), "-o", again}, &stdout, &stderr); code != 0 {
		t.Fatalf("--from: exit %d\n%s", code, stderr.String())
	}
	for _, name := range names {
		a, err1 := os.ReadFile(filepath.Join(out, name))
		b, err2 := os.ReadFile(filepath.Join(again, name))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("--from wrote a different %s (%v, %v)", name, err1, err2)
		}
	}
	if stdout.String() != md {
		t.Errorf("--from printed a different table")
	}
}
