package numbering

import (
	"math/rand/v2"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/dagtest"
	"github.com/pathprof/pathprof/internal/wasm"
)

// randomDispatch returns a body shaped like the functions Go's compiler
// makes: one loop around a br_table on local 0 over n cases, each case
// ending in jumps ("i32.const K; local.set 0; br $loop"), some behind an
// if on local 1, or in a return. A jump to a later case is threaded
// (cfg.Options.Thread), one to the same or an earlier case is a back
// edge, and K = n leaves the loop by the br_table's default.
func randomDispatch(r *rand.Rand) *wasm.Code {
	n := 2 + r.IntN(7)
	var a wasm.Asm
	a.Block(wasm.OpBlock).Block(wasm.OpLoop)
	for range n {
		a.Block(wasm.OpBlock)
	}
	labels := make([]uint32, n+1)
	for i := range n {
		labels[i] = uint32(i)
	}
	labels[n] = uint32(n + 1)
	a.Idx(wasm.OpLocalGet, 0).BrTable(labels)
	jump := func(depth uint32) {
		a.I32(int32(r.IntN(n+1))).Idx(wasm.OpLocalSet, 0).Idx(wasm.OpBr, depth)
	}
	for i := range n {
		a.Op(wasm.OpEnd)
		loop := uint32(n - 1 - i) // the loop's depth in case i
		switch r.IntN(5) {
		case 0:
			a.Op(wasm.OpReturn)
		case 1:
			jump(loop)
		default:
			a.Idx(wasm.OpLocalGet, 1).Block(wasm.OpIf)
			jump(loop + 1)
			a.Op(wasm.OpEnd)
			jump(loop)
		}
	}
	a.Op(wasm.OpEnd).Op(wasm.OpEnd).Op(wasm.OpEnd)
	return &wasm.Code{Body: append([]byte{0}, a.B...), ExprOff: 1}
}

// TestThreadedPlacement checks every placement on random dispatch loops
// built with cfg.Options.Thread, against brute-force path enumeration:
// the header's arms that threaded jumps share, and the edges that thread
// them, get no probe whatever the weights (their code runs for both
// kinds of jump), and every path still counts its own id once.
func TestThreadedPlacement(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 7))
	iters := iterations(3000)
	threaded, paths := 0, 0
	for it := range iters {
		g, err := cfg.BuildBody(randomDispatch(r), cfg.Options{Thread: true})
		if err != nil {
			t.Fatalf("body %d: %v", it, err)
		}
		d := g.DAG()
		if d.Fixed == nil {
			continue
		}
		shared := g.SharedArms()
		all, ok := dagtest.Paths(d, cfg.Entry, 20000)
		if !ok {
			continue
		}
		threaded++
		paths += len(all)
		n, err := Number(d)
		if err != nil {
			t.Fatal(err)
		}
		checkNumbering(t, d, n, all)
		free := func(label string, plan *Placement) {
			t.Helper()
			for i, op := range plan.Ops {
				if d.Fixed[i] && op.Kind != None {
					t.Fatalf("body %d, %s: fixed edge %d has %v", it, label, i, op)
				}
			}
			for _, p := range plan.Probes {
				if shared[p.Edge] {
					t.Fatalf("body %d, %s: shared arm %d has %v", it, label, p.Edge, p.Op)
				}
			}
		}
		inc, err := Chords(d, n, randWeights(r, d))
		if err != nil {
			t.Fatal(err)
		}
		for _, opt := range []PlaceOptions{{NoCountFolding: true}, {NoCountFolding: true, ZeroAtEntry: true}} {
			plan, err := Place(d, n, inc, opt)
			if err != nil {
				t.Fatalf("body %d: Place(%+v): %v", it, opt, err)
			}
			free("Place", plan)
			checkPlan(t, d, n, inc, plan, opt, all, r)
		}
		for _, freq := range [][]float64{nil, randFreq(r, d)} {
			rv, plan, _, err := PlaceReverse(d, n, freq, PlaceOptions{NoCountFolding: true, ZeroAtEntry: true})
			if err != nil {
				t.Fatalf("body %d: PlaceReverse: %v", it, err)
			}
			free("PlaceReverse", plan)
			fw := rv.Forward()
			for _, p := range all {
				zero := d.Edges[p[0]].Kind != cfg.EdgeDummyEntry
				got, err := simulate(plan.Ops, p, int64(r.Uint64()), zero)
				if err != nil || len(got) != 1 || got[0] != pathSum(fw, p) {
					t.Fatalf("body %d: path %v (reverse id %d) counted %v (%v)", it, p, pathSum(fw, p), got, err)
				}
			}
		}
		s, err := PSPP(d, randInteresting(r, d, all))
		if err != nil {
			t.Fatal(err)
		}
		plan, err := PlaceSelective(d, s)
		if err != nil {
			t.Fatalf("body %d: PlaceSelective: %v", it, err)
		}
		free("PlaceSelective", plan)
		checkSelectiveCounts(t, d, s, plan, all, r)
		if plan, err = PlaceSelectiveChords(d, s, randWeights(r, d)); err != nil {
			t.Fatalf("body %d: PlaceSelectiveChords: %v", it, err)
		}
		free("PlaceSelectiveChords", plan)
		checkSelectiveCounts(t, d, s, plan, all, r)
	}
	if threaded < iters/2 {
		t.Fatalf("only %d of %d bodies threaded a jump", threaded, iters)
	}
	t.Logf("%d threaded bodies, %d paths", threaded, paths)
}

// randFreq returns random whole edge frequencies for d.
func randFreq(r *rand.Rand, d *cfg.DAG) []float64 {
	f := make([]float64, len(d.Edges))
	for i := range f {
		f[i] = float64(r.IntN(100))
	}
	return f
}
