package profiler

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/counters"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/noderun"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasmtest"
	"github.com/pathprof/pathprof/profile"
)

// TestStrategiesEqualSBL checks that the merged PBL and P3 profiles equal
// the SBL profile exactly, for k = 2, 4 and 8, on every program of the
// tracer test.
func TestStrategiesEqualSBL(t *testing.T) {
	ctx := context.Background()
	for _, p := range oraclePrograms(t) {
		if testing.Short() && p.Name != "calc" {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			orig := readModule(t, p)
			var want bytes.Buffer
			sbl, err := Profile(ctx, orig, Options{ModulePath: p.Path, Run: p.Config(t, &want)})
			if err != nil {
				t.Fatal(err)
			}
			// sameAsSBL profiles with opt and checks that the run printed
			// and exited as SBL's did and that the profile is SBL's.
			sameAsSBL := func(label string, opt Options) *profile.Profile {
				t.Helper()
				var got bytes.Buffer
				opt.Jobs, opt.ModulePath, opt.Run = 2, p.Path, p.Config(t, &got)
				prof, err := Profile(ctx, orig, opt)
				if err != nil {
					t.Fatalf("%s: %v", label, err)
				}
				if got.String() != want.String() || prof.ExitCode != sbl.ExitCode {
					t.Fatalf("%s: output or exit code differs", label)
				}
				if ok, diff := sbl.Equal(prof); !ok {
					t.Fatalf("%s: merged profile differs from SBL: %s", label, diff)
				}
				return prof
			}
			for _, strategy := range []profile.Strategy{profile.PBL, profile.P3} {
				for _, k := range []int{2, 4, 8} {
					prof := sameAsSBL(fmt.Sprintf("%s k=%d", strategy, k), Options{Strategy: strategy, Copies: k})
					if err := prof.Validate(); err != nil {
						t.Fatalf("%s k=%d: %v", strategy, k, err)
					}
					t.Logf("%s k=%d: %s", strategy, k, hitsLine(sbl, prof))
				}
			}
			// Planned with the profile's frequencies, P3 may split any
			// function, table-reachable ones (every Go function) too,
			// and every strategy places its probes by them.
			w := edgeFrequencies(t, orig, sbl)
			for _, strategy := range []profile.Strategy{profile.SBL, profile.P3} {
				prof := sameAsSBL(fmt.Sprintf("weighted %s", strategy), Options{Strategy: strategy, Copies: 4, Partition: partition.Options{Weights: w}})
				if prof.Strategy != strategy || strategy == "sbl" && len(prof.Runs) != 1 {
					t.Fatalf("weighted %s: profile of strategy %s with %d runs", strategy, prof.Strategy, len(prof.Runs))
				}
				t.Logf("weighted %s: %s", strategy, hitsLine(sbl, prof))
			}
		})
	}
}

func hitsLine(sbl, p *profile.Profile) string {
	var slowest uint64
	for _, r := range p.Runs {
		slowest = max(slowest, r.ProbeHits)
	}
	return "slowest copy's hits " + pct(slowest, sbl.Runs[0].ProbeHits) + " of SBL's"
}

func pct(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	x := float64(a) * 100 / float64(b)
	return string(rune('0'+int(x)/100%10)) + string(rune('0'+int(x)/10%10)) + string(rune('0'+int(x)%10)) + "%"
}

// TestHitsComputedFromProfile checks the hit counts computed from one exact
// profile against copies that count their own probe hits at run time. The
// run-time count also includes the sequences on paths that never complete
// (in the frames still live when the program exits), so it may exceed the
// computed figure by a few. Copies that share out calls or loops (P3 with
// the profile) are checked with the hits computed from their own counts;
// from the profile alone, and from edge frequencies, theirs are estimates,
// which must agree with each other.
func TestHitsComputedFromProfile(t *testing.T) {
	for _, name := range []string{"calc", "wordfreq", "grid"} {
		p := cProgram(t, name)
		orig, exact, freq := exactRun(t, p)
		// Each strategy planned without the profile, and with it: then
		// the probes are placed by its frequencies too.
		for _, variant := range []string{"sbl", "pbl", "p3", "sbl+", "pbl+", "p3+"} {
			var popt partition.Options
			s, weighted := strings.CutSuffix(variant, "+")
			if weighted {
				popt.Weights = freq
			}
			strategy := profile.Strategy(s)
			k := 4
			if strategy == "sbl" {
				k = 1
			}
			cs, err := Build(orig, strategy, k, instrument.Options{CountHits: true}, popt)
			if err != nil {
				t.Fatal(err)
			}
			for c, res := range cs.Copy {
				computed, err := res.HitsOf(exact.Functions)
				if err != nil {
					t.Fatal(err)
				}
				fromFreq, err := res.HitsOfFrequencies(freq)
				if err != nil || math.Abs(fromFreq-float64(computed)) > 0.5 {
					t.Errorf("%s %s copy %d: %v hits from edge frequencies (%v), %d from paths", name, strategy, c, fromFreq, err, computed)
				}
				label := fmt.Sprintf("%s %s copy %d", name, strategy, c)
				own, calls, direct := runCounting(t, label, p.Config(t, &bytes.Buffer{}), res)
				if res.Sliced() {
					// Shared calls or loops: exact from the copy's own
					// counts only.
					if computed, err = res.HitsOfRun(exact.Functions, own, calls); err != nil {
						t.Fatal(err)
					}
				}
				checkHits(t, label, direct, computed)
				t.Logf("%s %s copy %d: run time %d, computed %d", name, strategy, c, direct, computed)
			}
		}
	}
}

// TestOutputKindDoesNotMatter checks that where the program's output goes
// (a character device, a buffer) does not change its paths: wasi-libc
// buffers stdout by line on a character device and fully otherwise.
func TestOutputKindDoesNotMatter(t *testing.T) {
	ctx := context.Background()
	p := oraclePrograms(t)[0]
	orig := readModule(t, p)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	cfg := p.Config(t, nil)
	cfg.Stdout = devnull
	a, err := Profile(ctx, orig, Options{ModulePath: p.Path, Run: cfg})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Profile(ctx, orig, Options{ModulePath: p.Path, Run: p.Config(t, &bytes.Buffer{})})
	if err != nil {
		t.Fatal(err)
	}
	if ok, diff := a.Equal(b); !ok {
		t.Fatalf("the profile depends on where stdout goes: %s", diff)
	}
}

// TestCopiesDirectory goes through instrument, exec and merge as separate
// steps and gets the SBL profile.
func TestCopiesDirectory(t *testing.T) {
	ctx := context.Background()
	p := oraclePrograms(t)[0]
	orig := readModule(t, p)
	sbl, err := Profile(ctx, orig, Options{ModulePath: p.Path, Run: p.Config(t, &bytes.Buffer{})})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := Build(orig, "p3", 3, instrument.Options{}, partition.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := WriteDir(dir, p.Path, orig, cs, cs.WeightedBy(false, nil), ""); err != nil {
		t.Fatal(err)
	}
	man, _, rebuilt, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var parts []*Part
	for c, res := range rebuilt.Copy {
		var out bytes.Buffer
		run := RunCopy(ctx, res, p.Config(t, &out))
		if err := run.Failure(); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, NewPart(man, c, run, outputSum(out.Bytes())))
	}
	merged, err := MergeParts(man, rebuilt, parts)
	if err != nil {
		t.Fatal(err)
	}
	if ok, diff := sbl.Equal(merged); !ok {
		t.Fatalf("merged parts differ from SBL: %s", diff)
	}
	if w := merged.Weights; w == nil || w.Source != profile.WeightsEstimate {
		t.Errorf("merged parts planned by the estimate say they were planned by %v", w)
	}
	// A part of another plan is refused; a missing copy makes the profile incomplete.
	bad := *parts[1]
	bad.CopySHA256 = "00"
	if _, err := MergeParts(man, rebuilt, []*Part{parts[0], &bad, parts[2]}); err == nil {
		t.Error("a part of another plan was merged")
	}
	if p, err := MergeParts(man, rebuilt, parts[:2]); err != nil || p.Complete {
		t.Errorf("a missing copy: %v, complete %v", err, p != nil && p.Complete)
	}
	odd := *parts[2]
	odd.OutputSHA256 = "11"
	if _, err := MergeParts(man, rebuilt, []*Part{parts[0], parts[1], &odd}); err == nil {
		t.Error("copies with different output were merged")
	}
}

// TestWeightedP3NeverAbovePBL: planned with a profile, P3's slowest copy
// never makes more hits on that run than PBL's, falling back to PBL's
// copies when its splits would.
func TestWeightedP3NeverAbovePBL(t *testing.T) {
	fell, kept := 0, 0
	for _, p := range oraclePrograms(t) {
		if !slices.Contains([]string{"calc", "sort", "grid", "vm", "wordfreq"}, p.Name) {
			continue
		}
		orig, exact, freq := exactRun(t, p)
		for _, k := range []int{2, 4, 8} {
			slowest := map[profile.Strategy]uint64{}
			var p3 *Copies
			for _, strategy := range []profile.Strategy{profile.PBL, profile.P3} {
				cs, err := Build(orig, strategy, k, instrument.Options{}, partition.Options{Weights: freq})
				if err != nil {
					t.Fatal(err)
				}
				for _, res := range cs.Copy {
					h, err := res.HitsOf(exact.Functions)
					if err != nil {
						t.Fatal(err)
					}
					slowest[strategy] = max(slowest[strategy], h)
				}
				p3 = cs
			}
			if slowest["p3"] > slowest["pbl"] {
				t.Errorf("%s k=%d: slowest P3 copy %d hits, PBL's %d", p.Name, k, slowest["p3"], slowest["pbl"])
			}
			if p3.FellBack {
				fell++
				if split(p3.Plan) || p3.Plan.Strategy != profile.P3 {
					t.Errorf("%s k=%d: fell back to a plan that splits", p.Name, k)
				}
			} else if split(p3.Plan) {
				kept++
			}
			t.Logf("%s k=%d: P3 %d, PBL %d hits; fell back %v", p.Name, k, slowest["p3"], slowest["pbl"], p3.FellBack)
		}
	}
	t.Logf("%d plans kept their splits, %d fell back", kept, fell)
	// Placed by the profile, whole functions cost about one sequence per
	// path, and the classes of a split still share the sequences at the
	// ends of loop iterations and calls: on these programs the planner
	// finds one split worth proposing (sort at k = 4), and the exact hits
	// then reject it.
	if kept+fell == 0 {
		t.Error("no weighted P3 plan proposed a split")
	}
}

// TestFewerHits: the choice between P3's and PBL's copies by exact hits.
func TestFewerHits(t *testing.T) {
	p := cProgram(t, "grid")
	orig, exact, freq := exactRun(t, p)
	// Planned by static probe counts, P3 splits grid's functions and its
	// slowest copy makes fewer hits than PBL's (95% against 98% of
	// SBL's); fewerHits judges them by the profile's frequencies.
	pbl, err := Build(orig, "pbl", 4, instrument.Options{}, partition.Options{Static: true})
	if err != nil {
		t.Fatal(err)
	}
	p3, err := Build(orig, "p3", 4, instrument.Options{}, partition.Options{Static: true})
	if err != nil {
		t.Fatal(err)
	}
	if !split(p3.Plan) {
		t.Fatal("grid's P3 plan at k = 4 no longer splits: pick another case")
	}
	got, err := fewerHits(p3, pbl, freq)
	if err != nil || got != p3 {
		t.Fatalf("P3's better copies not kept (%v)", err)
	}
	// Copies with as many hits as PBL's lose to them.
	got, err = fewerHits(pbl, pbl, freq)
	if err != nil || !got.FellBack || got.Plan.Strategy != profile.P3 || pbl.Plan.Strategy != profile.PBL || split(got.Plan) {
		t.Fatalf("fell back %v, strategy %s (PBL's plan now %s), %v", got.FellBack, got.Plan.Strategy, pbl.Plan.Strategy, err)
	}
	for c := range got.Copy {
		a, _ := got.Copy[c].HitsOf(exact.Functions)
		b, _ := pbl.Copy[c].HitsOf(exact.Functions)
		if a != b {
			t.Fatalf("copy %d: %d hits, PBL's %d", c, a, b)
		}
	}
	// The manifest records the fallback, and reading it back keeps it.
	for _, cs := range []*Copies{got, p3} {
		dir := t.TempDir()
		man, err := WriteDir(dir, p.Path, orig, cs, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		rman, _, rcs, err := ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if man.FellBack != cs.FellBack || rman.FellBack != cs.FellBack || rcs.FellBack != cs.FellBack {
			t.Errorf("fell back %v: written %v, read %v, copies read %v", cs.FellBack, man.FellBack, rman.FellBack, rcs.FellBack)
		}
	}
}

// cProgram is one of the C programs of the tests.
func cProgram(t *testing.T, name string) program {
	t.Helper()
	for _, p := range testprogs.CRuns(t) {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no C program %s", name)
	return program{}
}

// exactRun reads a program, profiles one run with SBL and returns the
// module, the exact profile and its DAG edge frequencies.
func exactRun(t *testing.T, p program) ([]byte, *profile.Profile, [][]float64) {
	t.Helper()
	orig := readModule(t, p)
	exact, err := Profile(context.Background(), orig, Options{ModulePath: p.Path, Run: p.Config(t, &bytes.Buffer{})})
	if err != nil {
		t.Fatal(err)
	}
	return orig, exact, edgeFrequencies(t, orig, exact)
}

// edgeFrequencies is the DAG edge frequencies of a profile of orig.
func edgeFrequencies(t *testing.T, orig []byte, p *profile.Profile) [][]float64 {
	t.Helper()
	a, err := Analyze(orig)
	if err != nil {
		t.Fatal(err)
	}
	freq, err := a.Result.EdgeFrequencies(p.Functions)
	if err != nil {
		t.Fatal(err)
	}
	return freq
}

// runCounting runs one copy built with CountHits with cfg and returns
// what it counted, its call counters and the hits it counted; label names
// the run in a failure.
func runCounting(t *testing.T, label string, cfg runner.Config, res *instrument.Result) (part []profile.Function, calls map[uint32]uint64, hits uint64) {
	t.Helper()
	cfg.AfterRun = func(ctx context.Context, mods map[string]api.Module) error {
		hits = mods[runner.ProgramKey].ExportedGlobal(instrument.HitsGlobal).Get()
		return nil
	}
	run := RunCopy(context.Background(), res, cfg)
	if err := run.Failure(); err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	part, _, err := run.Functions()
	if err != nil {
		t.Fatal(err)
	}
	return part, run.Calls, hits
}

// runSliced runs a copy that shares out calls or loops, counting its
// hits, and checks the hits computed from what it counted (its part and
// call counters, which it returns) against the count at run time.
func runSliced(t *testing.T, p program, exact *profile.Profile, res *instrument.Result, label string) ([]profile.Function, map[uint32]uint64) {
	t.Helper()
	if !res.Sliced() {
		t.Fatalf("%s shares out nothing", label)
	}
	fs, calls, direct := runCounting(t, p.Name, p.Config(t, &bytes.Buffer{}), res)
	computed, err := res.HitsOfRun(exact.Functions, fs, calls)
	if err != nil {
		t.Fatal(err)
	}
	checkHits(t, label, direct, computed)
	estimate, err := res.HitsOf(exact.Functions)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d hits, estimated %d", label, computed, estimate)
	return fs, calls
}

// checkSlotCalls fails unless, for every function whose calls res shares
// out, the calls the copy profiled (its paths from the entry, fs) are
// those of the n calls (calls) that instrument.SliceOfCall puts in the
// copy's slots, less a few cut short at the program's exit.
func checkSlotCalls(t *testing.T, label string, res *instrument.Result, fs []profile.Function, calls map[uint32]uint64) {
	t.Helper()
	for _, f := range res.Funcs {
		if f.Mode.Slices == 0 || f.Mode.Loop != 0 {
			continue
		}
		var want uint64
		for n := uint64(1); n <= calls[f.Index]; n++ {
			if slices.Contains(f.Mode.Slots, instrument.SliceOfCall(n, f.Mode.Slices)) {
				want++
			}
		}
		var got uint64
		for _, pf := range fs {
			if pf.Index != f.Index {
				continue
			}
			for _, p := range pf.Paths {
				_, kind, err := numbering.Regenerate(f.Num, f.DAG, p.ID)
				if err != nil {
					t.Fatal(err)
				}
				if kind == numbering.EntryToExit || kind == numbering.EntryToBack {
					got += p.Count
				}
			}
		}
		if got > want || want-got > 8 {
			t.Errorf("%s: %s: %d of %d calls profiled, want %d (slots %v of %d)", label, f.Name, got, calls[f.Index], want, f.Mode.Slots, f.Mode.Slices)
		}
	}
}

// checkHits fails unless a copy's computed hits are what it counted at
// run time, less at most a few paths cut short at the program's exit.
func checkHits(t *testing.T, label string, direct, computed uint64) {
	t.Helper()
	if direct < computed || direct-computed > 64 {
		t.Errorf("%s: %d hits counted at run time, %d computed", label, direct, computed)
	}
}

// checkMerged fails unless the copies' parts merge into the exact profile.
func checkMerged(t *testing.T, label string, exact *profile.Profile, parts [][]profile.Function, shared map[uint32]bool) {
	t.Helper()
	merged, err := mergeFunctions(parts, shared, false)
	if err != nil {
		t.Fatal(err)
	}
	got := *exact
	got.Functions = merged
	if ok, diff := exact.Equal(&got); !ok {
		t.Fatalf("%s: merged counts differ from the exact profile: %s", label, diff)
	}
}

// TestSelectiveCopiesPlacedByProfile runs selective copies whose PSPP
// labels sit on the chords of the profile's tree. Planned with a profile,
// P3 no longer splits these programs (a split's classes cost as much as
// the function), so the test takes P3's plan made by static probe counts,
// which splits, and gives it the profile's frequencies: the merged counts must
// be the exact profile, and each copy's hits computed from it what the
// copy counts at run time.
func TestSelectiveCopiesPlacedByProfile(t *testing.T) {
	selective := 0
	for _, p := range oraclePrograms(t) {
		if !slices.Contains([]string{"grid", "sort", "wordfreq"}, p.Name) {
			continue
		}
		orig, exact, freq := exactRun(t, p)
		static, err := Build(orig, "p3", 4, instrument.Options{}, partition.Options{Static: true})
		if err != nil {
			t.Fatal(err)
		}
		plan := *static.Plan
		plan.Funcs = slices.Clone(plan.Funcs)
		for i := range plan.Funcs {
			if slices.ContainsFunc(freq[i], func(x float64) bool { return x > 0 }) {
				plan.Funcs[i].Freq = freq[i]
			}
		}
		cs, err := BuildPlan(orig, &plan, instrument.Options{CountHits: true})
		if err != nil {
			t.Fatal(err)
		}
		var parts [][]profile.Function
		moved := false
		for c, res := range cs.Copy {
			for _, sf := range plan.Copies[c].Selective {
				if plan.Funcs[sf.Func].Freq != nil {
					selective++
				}
			}
			fs, _, direct := runCounting(t, p.Name, p.Config(t, &bytes.Buffer{}), res)
			parts = append(parts, fs)
			computed, err := res.HitsOf(exact.Functions)
			if err != nil {
				t.Fatal(err)
			}
			checkHits(t, fmt.Sprintf("%s copy %d", p.Name, c), direct, computed)
			before, err := static.Copy[c].HitsOf(exact.Functions)
			if err != nil {
				t.Fatal(err)
			}
			moved = moved || before != computed
			t.Logf("%s copy %d: %d hits placed by the profile, %d placed statically", p.Name, c, computed, before)
		}
		checkMerged(t, p.Name, exact, parts, cs.Shared())
		if !moved {
			t.Errorf("%s: placing by the profile moved no hit", p.Name)
		}
	}
	if selective == 0 {
		t.Fatal("no selective function was placed by the profile")
	}
	t.Logf("%d selective functions placed by the profile", selective)
}

// TestManifestVersion: a manifest whose plan places probes by a profile
// (or an estimate) has version 2, which an older reader refuses, one
// planned by static probe counts version 1;
// both read back into the same copies, and a newer version is refused.
func TestManifestVersion(t *testing.T) {
	p := cProgram(t, "grid")
	orig, _, freq := exactRun(t, p)
	loops := func(cs *Copies) *partition.Plan {
		plan, _ := loopPlan(t, cs, freq)
		for def := range plan.Funcs {
			plan.Funcs[def].Spread = false
		}
		return plan
	}
	several := func(cs *Copies) *partition.Plan { plan, _ := loopsPlan(t, cs, freq); return plan }
	spread := func(cs *Copies) *partition.Plan {
		plan, _ := loopPlan(t, cs, freq)
		for def := range plan.Funcs {
			plan.Funcs[def].Spread = plan.Funcs[def].Loop != 0
		}
		return plan
	}
	calls := func(cs *Copies) *partition.Plan { return slicedPlan(t, cs, freq) }
	for _, tc := range []struct {
		opt  partition.Options
		want int
		plan func(*Copies) *partition.Plan // nil: PBL's
	}{{partition.Options{Static: true}, FilesVersion, nil}, {partition.Options{Weights: freq}, PlacedVersion, nil},
		{partition.Options{Weights: freq}, SlicedVersion, calls}, {partition.Options{Weights: freq}, LoopVersion, loops},
		{partition.Options{Weights: freq}, LoopsVersion, several}, {partition.Options{Weights: freq}, SpreadVersion, spread}} {
		cs, err := Build(orig, "pbl", 2, instrument.Options{}, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		if tc.plan != nil {
			if cs, err = BuildPlan(orig, tc.plan(cs), instrument.Options{}); err != nil {
				t.Fatal(err)
			}
		}
		dir := t.TempDir()
		man, err := WriteDir(dir, p.Path, orig, cs, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if man.Version != tc.want {
			t.Errorf("weights %v: manifest version %d, want %d", tc.opt.Weights != nil, man.Version, tc.want)
		}
		if _, _, _, err := ReadDir(dir); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "manifest.json")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		newer := strings.Replace(string(b), fmt.Sprintf(`"version":%d,`, tc.want), fmt.Sprintf(`"version":%d,`, SpreadVersion+1), 1)
		if err := os.WriteFile(path, []byte(newer), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "newer") {
			t.Errorf("a version %d manifest: %v", SpreadVersion+1, err)
		}
	}
}

// slicedPlan turns a weighted PBL plan into one that shares out the calls
// of the three most called functions that run more than one path per
// call: the first over all copies, one slot each; the second over one
// slot more than copies, so that copy 0 has two; the third over two
// slots, in the last copy and the first.
func slicedPlan(t testing.TB, cs *Copies, freq [][]float64) *partition.Plan {
	t.Helper()
	plan := clonePlan(cs.Plan)
	k := plan.K
	type fn struct {
		def   int
		calls int64
	}
	var fs []fn
	for def, f := range cs.Funcs {
		if freq[def] == nil || f.DAG == nil {
			continue
		}
		calls := partition.Calls(f.DAG, freq[def])
		var runs float64
		for e, de := range f.DAG.Edges {
			if de.To == cfg.Exit {
				runs += freq[def][e]
			}
		}
		if calls >= 2 && runs > float64(calls) {
			fs = append(fs, fn{def, calls})
		}
	}
	slices.SortStableFunc(fs, func(a, b fn) int { return cmp.Compare(b.calls, a.calls) })
	if len(fs) < 3 {
		t.Fatalf("%d functions to slice", len(fs))
	}
	for i, f := range fs[:3] {
		slotCopy := func(j int) int { return j % k }
		if i == 2 {
			slotCopy = func(j int) int { return []int{k - 1, 0}[j] }
		}
		shareOut(plan, f.def, []int{k, k + 1, 2}[i], 0, slotCopy)
	}
	return plan
}

// shareOut makes a function of a plan (cloned by clonePlan) shared
// out in g slots, of its calls or of the iterations of the loop with
// header loop, slot j going to copy slotCopy(j).
func shareOut(plan *partition.Plan, def, g int, loop int32, slotCopy func(int) int) {
	plan.Funcs[def].Slices, plan.Funcs[def].Loop = g, loop
	plan.Funcs[def].Tasks = nil
	for c := range plan.Copies {
		plan.Copies[c].BallLarus = slices.DeleteFunc(slices.Clone(plan.Copies[c].BallLarus), func(d int) bool { return d == def })
	}
	for j := range g {
		c := slotCopy(j)
		plan.Funcs[def].Tasks = append(plan.Funcs[def].Tasks, partition.TaskInfo{Copy: c})
		cp := &plan.Copies[c]
		at, ok := slices.BinarySearchFunc(cp.Sliced, def, func(s partition.SlicedFunc, d int) int { return cmp.Compare(s.Func, d) })
		if !ok {
			cp.Sliced = slices.Insert(slices.Clone(cp.Sliced), at, partition.SlicedFunc{Func: def})
		}
		cp.Sliced[at].Slots = append(slices.Clone(cp.Sliced[at].Slots), j)
	}
}

// clonePlan returns a copy of p whose functions and copies can be changed
// without changing p's.
func clonePlan(p *partition.Plan) *partition.Plan {
	c := *p
	c.Funcs = slices.Clone(c.Funcs)
	c.Copies = slices.Clone(c.Copies)
	return &c
}

// loopPlan turns a PBL plan made with the edge frequencies freq into one
// that shares out the iterations of the most iterated loop of every
// function that has one the instrumenter can share: over k, k+1 or 2
// slots in turn, the slots dealt round the copies, and, every third
// function, two slots to the last copy and the first; every other
// function's iterations are dealt out by a test (Spread).
func loopPlan(t testing.TB, cs *Copies, freq [][]float64) (*partition.Plan, int) {
	t.Helper()
	return eachRan(cs, freq, func(plan *partition.Plan, def int, f *instrument.Func, n int) int {
		k := plan.K
		best, most := int32(0), 0.0
		for _, e := range f.DAG.Edges {
			if e.Kind != cfg.EdgeDummyEntry {
				continue
			}
			if w := freq[def][slices.IndexFunc(f.DAG.Edges, func(x cfg.DAGEdge) bool { return x.Kind == cfg.EdgeDummyEntry && x.To == e.To })]; w > most && f.CanShareLoop(e.To) == nil {
				best, most = e.To, w
			}
		}
		if best == 0 {
			return 0
		}
		slotCopy := func(j int) int { return j % k }
		if n%3 == 2 {
			slotCopy = func(j int) int { return []int{k - 1, 0}[j] }
		}
		shareOut(plan, def, []int{k, k + 1, 2}[n%3], best, slotCopy)
		plan.Funcs[def].Spread = n%2 == 1 // by a test, every other function
		return 1
	})
}

// eachRan calls share with a clone of cs's plan for every function that
// ran by freq and that the plan does not slice yet, with the sum of what
// the earlier calls returned, and returns the plan and that sum.
func eachRan(cs *Copies, freq [][]float64, share func(plan *partition.Plan, def int, f *instrument.Func, n int) int) (*partition.Plan, int) {
	plan := clonePlan(cs.Plan)
	n := 0
	for def, f := range cs.Funcs {
		if freq[def] != nil && f.DAG != nil && plan.Funcs[def].Slices == 0 {
			n += share(plan, def, f, n)
		}
	}
	return plan, n
}

// slicedCopies plans PBL over k copies with the frequencies of a profile
// of orig and builds, with opt, the copies of slicedPlan of that plan.
func slicedCopies(t *testing.T, orig []byte, freq [][]float64, k int, opt instrument.Options) (pbl, cs *Copies) {
	t.Helper()
	pbl, err := Build(orig, "pbl", k, instrument.Options{}, partition.Options{Weights: freq})
	if err != nil {
		t.Fatal(err)
	}
	if cs, err = BuildPlan(orig, slicedPlan(t, pbl, freq), opt); err != nil {
		t.Fatal(err)
	}
	return pbl, cs
}

// TestSlicedCopies runs copies that share out the calls of functions:
// the merged counts are the exact profile, the copies counted as many
// calls, and each copy's hits computed from its own counts and calls are
// what it counts at run time.
func TestSlicedCopies(t *testing.T) {
	for _, name := range []string{"sort", "wordfreq", "records", "grid"} {
		p := cProgram(t, name)
		orig, exact, freq := exactRun(t, p)
		for _, k := range []int{2, 4} {
			_, cs := slicedCopies(t, orig, freq, k, instrument.Options{CountHits: true})
			var parts [][]profile.Function
			var calls []map[uint32]uint64
			for c, res := range cs.Copy {
				label := fmt.Sprintf("%s k=%d copy %d", name, k, c)
				fs, n := runSliced(t, p, exact, res, label)
				if len(n) == 0 {
					t.Fatalf("%s shares out no calls", label)
				}
				checkSlotCalls(t, label, res, fs, n)
				parts = append(parts, fs)
				calls = append(calls, n)
			}
			if err := checkCalls(calls); err != nil {
				t.Fatal(err)
			}
			checkMerged(t, fmt.Sprintf("%s k=%d", name, k), exact, parts, cs.Shared())
			// Without adding up, copies that share a path disagree.
			if _, err := mergeFunctions(parts, nil, false); err == nil {
				t.Errorf("%s k=%d: parts of shared functions merged as a union", name, k)
			}
		}
	}
}

func TestCheckCalls(t *testing.T) {
	ok := []map[uint32]uint64{{3: 10, 5: 2}, nil, {3: 10}}
	if err := checkCalls(ok); err != nil {
		t.Fatal(err)
	}
	bad := []map[uint32]uint64{{3: 10, 5: 2}, {5: 2}, {3: 11}}
	if err := checkCalls(bad); err == nil || !strings.Contains(err.Error(), "not deterministic") {
		t.Fatalf("different call counts: %v", err)
	}
}

// TestSlicedCopiesAnywhere writes sliced copies to a directory, runs copy
// 0 under wazero and copy 1 under node's WASI, whose runner writes the call
// counters beside the counts, and merges the parts, with and without
// node's calls, into the exact profile.
func TestSlicedCopiesAnywhere(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	p := cProgram(t, "wordfreq")
	orig, exact, freq := exactRun(t, p)
	_, cs := slicedCopies(t, orig, freq, 2, instrument.Options{})
	dir := t.TempDir()
	man, err := WriteDir(dir, p.Path, orig, cs, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	man, _, cs, err = ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	run0 := RunCopy(context.Background(), cs.Copy[0], p.Config(t, &out))
	if err := run0.Failure(); err != nil {
		t.Fatal(err)
	}
	calls := run0.Calls
	part0 := NewPart(man, 0, run0, outputSum(out.Bytes()))
	if len(part0.Calls) != 3 {
		t.Fatalf("copy 0's part has %d call counters, want 3", len(part0.Calls))
	}
	nr, err := noderun.Run(context.Background(), cs.Copy[1].Module, cs.Copy[1].Counters, p.Args, p.Config(t, &bytes.Buffer{}).Stdin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(nr.Stdout, out.Bytes()) {
		t.Fatal("copy 1 under node printed something else")
	}
	c1, err := counters.Read(nr.Counters)
	if err != nil {
		t.Fatal(err)
	}
	part1 := NewPart(man, 1, &CopyRun{Result: runner.Result{ExitCode: uint32(nr.ExitCode)}, Counts: c1}, outputSum(nr.Stdout))
	if nr.Calls == nil {
		t.Fatal("node's runner wrote no call counters")
	}
	n1, err := parseCalls(nr.Calls)
	if err != nil {
		t.Fatal(err)
	}
	for f, n := range n1 {
		if calls[f] != n {
			t.Errorf("function %d: %d calls under node, %d under wazero", f, n, calls[f])
		}
	}
	// Merged without node's calls, and with them.
	merged, err := MergeParts(man, cs, []*Part{part0, part1})
	if err != nil {
		t.Fatal(err)
	}
	if ok, diff := exact.Equal(merged); !ok {
		t.Fatalf("merged parts differ from the exact profile: %s", diff)
	}
	part1.setCalls(n1)
	merged, err = MergeParts(man, cs, []*Part{part0, part1})
	if err != nil {
		t.Fatal(err)
	}
	if ok, diff := exact.Equal(merged); !ok {
		t.Fatalf("merged parts differ from the exact profile: %s", diff)
	}
	// Parts whose calls disagree are refused.
	part1.Calls = maps.Clone(part0.Calls)
	for f := range part1.Calls {
		part1.Calls[f]++
		break
	}
	if _, err := MergeParts(man, cs, []*Part{part0, part1}); err == nil || !strings.Contains(err.Error(), "not deterministic") {
		t.Fatalf("parts with different calls: %v", err)
	}
}

// TestUnevenCalls: after a run, copies that share out calls and made more
// hits than PBL's copies would have say so.
func TestUnevenCalls(t *testing.T) {
	orig, exact, freq := exactRun(t, cProgram(t, "grid"))
	pbl, cs := slicedCopies(t, orig, freq, 2, instrument.Options{})
	cs.PBL = pbl
	var whole uint64
	for _, res := range pbl.Copy {
		h, err := res.HitsOf(exact.Functions)
		if err != nil {
			t.Fatal(err)
		}
		whole = max(whole, h)
	}
	for _, hits := range []uint64{whole, whole + 1} {
		run := *exact
		run.Runs = []profile.Run{{Copy: 0, ProbeHits: hits}, {Copy: 1}}
		var said []string
		if err := unevenCalls(cs, &run, func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }); err != nil {
			t.Fatal(err)
		}
		if warned := len(said) == 1 && strings.Contains(said[0], "uneven"); warned != (hits > whole) {
			t.Errorf("slowest copy %d hits, PBL's %d: said %q", hits, whole, said)
		}
	}
}

func TestParseCalls(t *testing.T) {
	got, err := parseCalls([]byte(`{"pathprof_calls_7": "18446744073709551615", "pathprof_calls_12": "3"}`))
	if err != nil || got[7] != math.MaxUint64 || got[12] != 3 || len(got) != 2 {
		t.Fatalf("%v, %v", got, err)
	}
	for _, bad := range []string{`{"pathprof_counters": "1"}`, `{"pathprof_calls_x": "1"}`, `{"pathprof_calls_1": "-1"}`, `[1]`} {
		if _, err := parseCalls([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestLoopSlicedCopies runs copies that share out the iterations of a loop
// in every function that has one the instrumenter can share: the merged
// counts are the exact profile, and each copy's hits computed from its
// own counts are what it counts at run time.
func TestLoopSlicedCopies(t *testing.T) {
	names := []string{"calc", "vm", "sort", "wordfreq", "records", "grid"}
	checkLoopPlans(t, names, len(names), []int{2, 4}, loopPlan)
}

// checkLoopPlans runs, for each C program named and each k, the copies of
// the plan that plan makes of PBL's made with the frequencies of an exact
// run: the merged counts must be the exact profile, and each copy's hits
// computed from its own counts what it counts at run time. A program
// whose plan shares no loop is skipped, but the first need must share one.
func checkLoopPlans(t *testing.T, names []string, need int, ks []int, plan func(testing.TB, *Copies, [][]float64) (*partition.Plan, int)) {
	for i, name := range names {
		p := cProgram(t, name)
		orig, exact, freq := exactRun(t, p)
		for _, k := range ks {
			pbl, err := Build(orig, "pbl", k, instrument.Options{}, partition.Options{Weights: freq})
			if err != nil {
				t.Fatal(err)
			}
			plan, n := plan(t, pbl, freq)
			if n == 0 {
				if i < need {
					t.Fatalf("%s: no loop to share out", name)
				}
				continue
			}
			cs, err := BuildPlan(orig, plan, instrument.Options{CountHits: true})
			if err != nil {
				t.Fatalf("%s k=%d: %v", name, k, err)
			}
			var parts [][]profile.Function
			for c, res := range cs.Copy {
				label := fmt.Sprintf("%s k=%d copy %d, %d loops shared", name, k, c, n)
				wasmtest.Validate(t, label, res.Module)
				fs, calls := runSliced(t, p, exact, res, label)
				if calls != nil {
					t.Fatalf("%s: call counters %v", label, calls)
				}
				parts = append(parts, fs)
			}
			checkMerged(t, fmt.Sprintf("%s k=%d", name, k), exact, parts, cs.Shared())
		}
	}
}

// loopsPlan turns a PBL plan made with the edge frequencies freq into one
// that shares out, in each function cut at loop headers, the iterations of
// as many of its loops as the instrumenter can share together (loops whose
// headers are cuts, none nested in another), over k+1 slots dealt round
// the copies. It returns the plan and the loops shared in functions with
// more than one. At odd k the iterations are dealt out by a test (Spread).
func loopsPlan(t testing.TB, cs *Copies, freq [][]float64) (*partition.Plan, int) {
	t.Helper()
	return eachRan(cs, freq, func(plan *partition.Plan, def int, f *instrument.Func, _ int) int {
		var hs []int32
		for _, e := range f.DAG.Edges {
			if e.Kind == cfg.EdgeDummyEntry && !slices.Contains(hs, e.To) && f.CanShareLoops(append(slices.Clone(hs), e.To)) == nil {
				hs = append(hs, e.To)
			}
		}
		if len(hs) < 2 {
			return 0
		}
		shareOut(plan, def, plan.K+1, hs[0], func(j int) int { return j % plan.K })
		plan.Funcs[def].Loops = hs[1:]
		plan.Funcs[def].Spread = plan.K%2 == 1 // by a test at k = 3
		return len(hs)
	})
}

// TestSeveralLoopsSliced runs copies that share out the iterations of
// several loops of one function, in the functions cut at their loop
// headers: the merged counts are the exact profile, and each copy's hits
// computed from its own counts are what it counts at run time.
func TestSeveralLoopsSliced(t *testing.T) {
	checkLoopPlans(t, []string{"grid", "sort", "records"}, 1, []int{2, 3}, loopsPlan)
}

// TestLoopSlicedCopiesAnywhere writes copies that share out loop
// iterations, some dealt out by a test, to a directory (manifest version
// 6), runs each under node's
// WASI, and merges the parts into the exact profile, each copy's hits
// exact; wasm-validate, when installed, accepts every copy.
func TestLoopSlicedCopiesAnywhere(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	p := cProgram(t, "vm")
	orig, exact, freq := exactRun(t, p)
	pbl, err := Build(orig, "pbl", 3, instrument.Options{}, partition.Options{Weights: freq})
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := loopPlan(t, pbl, freq)
	cs, err := BuildPlan(orig, plan, instrument.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	man, err := WriteDir(dir, p.Path, orig, cs, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	// loopPlan deals out the iterations of every other function by a
	// test: node runs both kinds.
	if !slices.ContainsFunc(plan.Funcs, func(f partition.FuncInfo) bool { return f.Spread }) {
		t.Fatal("no loop's iterations are dealt out by a test")
	}
	wantVersion := SpreadVersion
	if man.Version != wantVersion {
		t.Fatalf("manifest version %d, want %d", man.Version, wantVersion)
	}
	man, _, cs, err = ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if _, err := runner.Run(context.Background(), orig, p.Config(t, &want)); err != nil {
		t.Fatal(err)
	}
	var parts []*Part
	for c, res := range cs.Copy {
		wasmtest.Validate(t, fmt.Sprintf("copy %d", c), res.Module)
		nr, err := noderun.Run(context.Background(), res.Module, res.Counters, p.Args, p.Config(t, &bytes.Buffer{}).Stdin)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(nr.Stdout, want.Bytes()) {
			t.Fatalf("copy %d under node printed something else", c)
		}
		counts, err := counters.Read(nr.Counters)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, NewPart(man, c, &CopyRun{Result: runner.Result{ExitCode: uint32(nr.ExitCode)}, Counts: counts}, outputSum(nr.Stdout)))
	}
	merged, err := MergeParts(man, cs, parts)
	if err != nil {
		t.Fatal(err)
	}
	if ok, diff := exact.Equal(merged); !ok {
		t.Fatalf("merged parts differ from the exact profile: %s", diff)
	}
	// The hits of a part are its own: what wazero counts on the same copy.
	counted, err := BuildPlan(orig, plan, instrument.Options{CountHits: true})
	if err != nil {
		t.Fatal(err)
	}
	for c := range cs.Copy {
		_, _, direct := runCounting(t, p.Name, p.Config(t, &bytes.Buffer{}), counted.Copy[c])
		checkHits(t, fmt.Sprintf("copy %d", c), direct, merged.Runs[c].ProbeHits)
	}
}

// outputSum is the sum of OutputHash over b, as NewPart takes it.
func outputSum(b []byte) []byte {
	h := OutputHash()
	h.Write(b)
	return h.Sum(nil)
}

// TestHedgeSharesLoopNests: planned without a profile, P3 hedges grid's
// main, cut at its loop headers, with its loop nests shared out together,
// one slot per copy, rather than with the one loop the estimate thinks
// heaviest; where the instrumenter cannot share loops together, with one.
func TestHedgeSharesLoopNests(t *testing.T) {
	orig, _, _ := exactRun(t, cProgram(t, "grid"))
	nests := func(popt partition.Options) (loops int) {
		t.Helper()
		cs, err := Build(orig, "p3", 4, instrument.Options{}, popt)
		if err != nil {
			t.Fatal(err)
		}
		if !cs.Estimated {
			t.Fatal("not planned by the estimate")
		}
		for def, fi := range cs.Plan.Funcs {
			if fi.Loop == 0 {
				continue
			}
			for j, task := range fi.Tasks {
				if task.Copy != j {
					t.Fatalf("function %d: slot %d in copy %d", def, j, task.Copy)
				}
			}
			loops = max(loops, 1+len(fi.Loops))
		}
		return loops
	}
	if n := nests(partition.Options{}); n < 2 {
		t.Fatalf("the hedge shares out %d loops of one function, want several", n)
	}
	if n := nests(partition.Options{ShareLoops: func(int, []int32) bool { return false }}); n != 1 {
		t.Fatalf("loops not shareable together: the hedge shares out %d loops of one function, want 1", n)
	}
}

// TestEstimateHedgesDeepNests: planned without a profile, the FFT
// kernel's transform, which two call instructions name and whose
// butterflies are a nest three loops deep, has a loop shared out in k
// slots, one per copy; sort's quick_sort, as deep a nest but recursive,
// does not.
func TestEstimateHedgesDeepNests(t *testing.T) {
	fft, err := os.ReadFile(filepath.Join(testprogs.ModuleRoot(t), "bench", "kernels", "fft.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	sort, err := os.ReadFile(testprogs.CProgramByName(t, "sort").Wasm)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{2, 4, 8} {
		cs, err := Build(fft, profile.P3, k, instrument.Options{}, partition.Options{})
		if err != nil {
			t.Fatal(err)
		}
		oneEach := func(f partition.FuncInfo) bool {
			for j, task := range f.Tasks {
				if task.Copy != j {
					return false
				}
			}
			return true
		}
		if !slices.ContainsFunc(cs.Plan.Funcs, func(f partition.FuncInfo) bool {
			return f.CallSites >= 2 && f.Slices == k && f.Loop != 0 && oneEach(f)
		}) {
			t.Errorf("fft, k = %d: no function of several call sites has a loop shared out in %d slots, one per copy", k, k)
		}
		cs, err = Build(sort, profile.P3, k, instrument.Options{}, partition.Options{})
		if err != nil {
			t.Fatal(err)
		}
		def := slices.IndexFunc(cs.Funcs, func(f *instrument.Func) bool { return f.Name == "quick_sort" })
		if def < 0 {
			t.Fatal("sort has no quick_sort")
		}
		if f := cs.Plan.Funcs[def]; f.Loop != 0 {
			t.Errorf("sort, k = %d: quick_sort's loop %d is shared out in %d slots", k, f.Loop, f.Slices)
		}
	}
}
