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
	"github.com/pathprof/pathprof/profile"
)

// TestRandomLoopSlices shares out the iterations of loops of random
// programs, each loop the instrumenter accepts in turn, over random slots
// and copies: the copies' merged counts must be the SBL profile (which
// TestRandomPrograms checks), and each copy's hits computed from its own
// counts what it counted at run time.
func TestRandomLoopSlices(t *testing.T) {
	shared, refused := 0, 0
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
				checkRandomLoops(t, fmt.Sprintf("seed %d function %d", seed, def), orig, exact, r, def, []int32{h})
			}
		}
	}
	t.Logf("%d loops shared, %d refused", shared, refused)
	if shared < 50 {
		t.Fatalf("only %d loops shared", shared)
	}
}

// TestRandomSeveralLoops shares out together the iterations of as many
// loops as the instrumenter accepts together, in random programs whose
// _start is cut at its loop headers, over random slots and copies: the
// copies' merged counts must be the SBL profile, and each copy's hits
// computed from its own counts what it counted at run time.
func TestRandomSeveralLoops(t *testing.T) {
	tried := 0
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
		checkRandomLoops(t, fmt.Sprintf("seed %d", seed), orig, exact, rand.New(rand.NewPCG(seed, 11)), 0, hs)
	}
	t.Logf("%d programs with several loops shared together", tried)
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
func checkRandomLoops(t *testing.T, label string, orig []byte, exact *profile.Profile, r *rand.Rand, def int, hs []int32) {
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
	label = fmt.Sprintf("%s loops %v (%d slots of %v)", label, hs, g, owner)
	cs, err := BuildPlan(orig, plan, instrument.Options{CountHits: true})
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	var parts [][]profile.Function
	for c, res := range cs.Copy {
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
