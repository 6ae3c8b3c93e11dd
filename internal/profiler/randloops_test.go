package profiler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// TestRandomLoopSlices shares out the iterations of loops of random
// programs, each loop the instrumenter accepts in turn, over random slots
// and copies: the copies' merged counts must be the SBL profile (which
// TestRandomPrograms checks), and each copy's hits computed from its own
// counts what it counted at run time.
func TestRandomLoopSlices(t *testing.T) {
	shared, refused, counted := 0, 0, 0
	for seed := range uint64(60) {
		orig := randModule(t, seed)
		exact, a := randRun(t, seed, orig)
		r := rand.New(rand.NewPCG(seed, 9))
		for def, f := range a.Result.Funcs {
			if f.DAG == nil {
				continue
			}
			for h := int32(2); int(h) < len(f.Graph.Blocks); h++ {
				if err := f.CanShareLoop(h); err != nil {
					if slicesHasBack(f, h) {
						refused++
						t.Logf("seed %d function %d: %v", seed, def, err)
					}
					continue
				}
				shared++
				counted += checkRandomLoops(t, fmt.Sprintf("seed %d function %d", seed, def), orig, exact, r, def, []int32{h})
			}
		}
	}
	t.Logf("%d loops shared, %d refused; %d loops beside them counted where left", shared, refused, counted)
	if shared < 50 {
		t.Fatalf("only %d loops shared", shared)
	}
	if counted < 20 {
		t.Fatalf("only %d counted loops beside shared ones", counted)
	}
}

// TestRandomSeveralLoops shares out together the iterations of as many
// loops as the instrumenter accepts together, in random programs whose
// _start is cut at its loop headers, over random slots and copies: the
// copies' merged counts must be the SBL profile, and each copy's hits
// computed from its own counts what it counted at run time.
func TestRandomSeveralLoops(t *testing.T) {
	tried, counted := 0, 0
	for seed := range uint64(60) {
		orig := randModuleCut(t, seed, 19)
		exact, a := randRun(t, seed, orig)
		f := a.Result.Funcs[0]
		var hs []int32
		for h := int32(2); int(h) < len(f.Graph.Blocks); h++ {
			if f.CanShareLoops(append(slices.Clone(hs), h)) == nil {
				hs = append(hs, h)
			}
		}
		if len(hs) < 2 {
			continue
		}
		tried++
		counted += checkRandomLoops(t, fmt.Sprintf("seed %d", seed), orig, exact, rand.New(rand.NewPCG(seed, 11)), 0, hs)
	}
	t.Logf("%d programs with several loops shared together, %d loops beside them counted where left", tried, counted)
	if tried < 20 {
		t.Fatalf("only %d programs with several loops to share", tried)
	}
}

// randRun profiles a random program with SBL and analyses it.
func randRun(t *testing.T, seed uint64, orig []byte) (*profile.Profile, *Analysis) {
	t.Helper()
	exact, err := Profile(context.Background(), orig, Options{Run: runner.Config{}})
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	a, err := Analyze(orig)
	if err != nil {
		t.Fatal(err)
	}
	return exact, a
}

// checkRandomLoops shares out the iterations of the loops hs of function
// def of orig together over random slots and copies: the copies' merged
// counts must be exact, SBL's profile of the run, and each copy's hits
// computed from its own counts what it counted at run time.
func checkRandomLoops(t *testing.T, label string, orig []byte, exact *profile.Profile, r *rand.Rand, def int, hs []int32) (counted int) {
	t.Helper()
	k, g := 2+r.IntN(3), 2+r.IntN(4)
	pbl, err := Build(orig, "pbl", k, instrument.Options{}, partition.Options{Static: true})
	if err != nil {
		t.Fatal(err)
	}
	plan := clonePlan(pbl.Plan)
	owner := make([]int, g)
	for j := range owner {
		owner[j] = r.IntN(k)
	}
	shareOut(plan, def, g, hs[0], func(j int) int { return owner[j] })
	plan.Funcs[def].Loops = hs[1:]
	plan.Funcs[def].Spread = r.IntN(2) == 0
	label = fmt.Sprintf("%s loops %v (%d slots of %v, spread %v)", label, hs, g, owner, plan.Funcs[def].Spread)
	cs, err := BuildPlan(orig, plan, instrument.Options{CountHits: true})
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	var parts [][]profile.Function
	for c, res := range cs.Copy {
		counted += res.Funcs[def].CountedLoops
		part, _, direct := runCounting(t, fmt.Sprintf("%s copy %d", label, c), runner.Config{}, res)
		parts = append(parts, part)
		computed, err := res.HitsOfRun(exact.Functions, part, nil)
		if err != nil {
			t.Fatal(err)
		}
		if computed != direct {
			t.Errorf("%s copy %d: %d hits counted at run time, %d computed", label, c, direct, computed)
		}
	}
	checkMerged(t, label, exact, parts, cs.Shared())
	return counted
}

// slicesHasBack reports whether Graph block h is the target of a back edge.
func slicesHasBack(f *instrument.Func, h int32) bool {
	for _, e := range f.Graph.Blocks[h].In {
		if f.Graph.Edges[e].Back {
			return true
		}
	}
	return false
}

// TestNestingLoopSpread deals out by a test (Spread) over two copies the
// iterations of an outer loop whose even iterations run an inner loop
// six times more than its odd ones: by n mod 2 one copy would count three
// times the other's paths. Each copy must count exactly the paths of the
// iterations instrument.SliceOfIteration gives its slot, the merged counts the SBL
// profile, and each copy's hits computed from its own counts what it
// counted at run time.
func TestNestingLoopSpread(t *testing.T) {
	const iters = 64 // the outer loop's iterations; the last leaves it
	var a wasm.Asm
	const i, j = 0, 1
	a.Block(wasm.OpBlock).Block(wasm.OpLoop)
	a.Idx(wasm.OpLocalGet, i).I32(1).Op(wasm.OpI32Add).Idx(wasm.OpLocalTee, i)
	a.I32(iters).Op(wasm.OpI32GeU).Idx(wasm.OpBrIf, 1)
	// i is n+1 in iteration n: seven inner iterations where n is even,
	// one where it is odd, and i² mod 5 more.
	a.I32(7).I32(1).Idx(wasm.OpLocalGet, i).I32(1).Op(wasm.OpI32And).Op(wasm.OpSelect)
	a.Idx(wasm.OpLocalGet, i).Idx(wasm.OpLocalGet, i).Op(wasm.OpI32Mul).I32(5).Op(wasm.OpI32RemU).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, j)
	a.Block(wasm.OpLoop)
	a.Idx(wasm.OpLocalGet, j).I32(1).Op(wasm.OpI32Sub).Idx(wasm.OpLocalTee, j).Idx(wasm.OpBrIf, 0)
	a.Op(wasm.OpEnd)
	a.Idx(wasm.OpBr, 0)
	a.Op(wasm.OpEnd).Op(wasm.OpEnd).Op(wasm.OpEnd)
	orig := startModuleLocals(t, 2, a.B)
	exact, an := randRun(t, 0, orig)
	f := an.Result.Funcs[0]
	outer := int32(-1)
	for h := int32(2); int(h) < len(f.Graph.Blocks); h++ {
		if slicesHasBack(f, h) {
			if err := f.CanShareLoop(h); err != nil {
				t.Fatal(err)
			}
			outer = h
			break
		}
	}
	pbl, err := Build(orig, "pbl", 2, instrument.Options{}, partition.Options{Static: true})
	if err != nil {
		t.Fatal(err)
	}
	plan := clonePlan(pbl.Plan)
	shareOut(plan, 0, 2, outer, func(j int) int { return j })
	plan.Funcs[0].Spread = true
	cs, err := BuildPlan(orig, plan, instrument.Options{CountHits: true})
	if err != nil {
		t.Fatal(err)
	}
	var want [2]uint64
	for n := range uint64(iters) {
		// An iteration ends a path at each inner back edge and at its
		// own; the last leaves the loop before the inner one.
		paths := uint64(1)
		if i := n + 1; n < iters-1 {
			paths = 1 + i*i%5
			if n%2 == 0 {
				paths += 6
			}
		}
		want[instrument.SliceOfIteration(n, 2)] += paths
	}
	if want[0] > 2*want[1] || want[1] > 2*want[0] {
		t.Fatalf("the slots' paths %v are not spread", want)
	}
	var parts [][]profile.Function
	for c, res := range cs.Copy {
		part, _, direct := runCounting(t, fmt.Sprintf("copy %d", c), runner.Config{}, res)
		parts = append(parts, part)
		var got uint64
		for _, pf := range part {
			for _, p := range pf.Paths {
				got += p.Count
			}
		}
		if got != want[c] {
			t.Errorf("copy %d counted %d paths, want %d (slots' paths %v)", c, got, want[c], want)
		}
		computed, err := res.HitsOfRun(exact.Functions, part, nil)
		if err != nil {
			t.Fatal(err)
		}
		if computed != direct {
			t.Errorf("copy %d: %d hits counted at run time, %d computed", c, direct, computed)
		}
	}
	checkMerged(t, "nesting loop", exact, parts, cs.Shared())
}

// TestPlanSpreadsHeavyIterations: planned by calc's profile at k = 2, P3
// deals the iterations of its Collatz search out by a test, each of them
// running a chain of probes, and the copies' merged counts are the exact
// profile; planned by the estimate, no loop is dealt out so.
func TestPlanSpreadsHeavyIterations(t *testing.T) {
	p := cProgram(t, "calc")
	orig, exact, freq := exactRun(t, p)
	spread := func(cs *Copies) int {
		n := 0
		for _, f := range cs.Plan.Funcs {
			if f.Spread {
				n++
			}
		}
		return n
	}
	guessed, err := Build(orig, profile.P3, 2, instrument.Options{}, partition.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := spread(guessed); n != 0 {
		t.Fatalf("planned by the estimate, %d functions deal out iterations by a test", n)
	}
	cs, err := Build(orig, profile.P3, 2, instrument.Options{CountHits: true}, partition.Options{Weights: freq})
	if err != nil {
		t.Fatal(err)
	}
	if n := spread(cs); n == 0 {
		t.Fatal("planned by the profile, no loop's iterations are dealt out by a test")
	}
	var parts [][]profile.Function
	for c, res := range cs.Copy {
		fs, _ := runSliced(t, p, exact, res, fmt.Sprintf("calc copy %d", c))
		parts = append(parts, fs)
	}
	checkMerged(t, "calc", exact, parts, cs.Shared())
}
