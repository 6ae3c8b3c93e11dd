package numbering

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/dagtest"
)

// Reverse ids against brute-force enumeration: a bijection onto
// [0, paths), regeneration, contiguous ranges per last edge, the
// Ball-Larus id of each, and probes placed from Forward counting them.
func TestReverseRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	iters := iterations(5000)
	var checked, paths int
	for it := range iters {
		d, n, rv, all, ok := randomReverse(t, r)
		if !ok {
			continue
		}
		fw := rv.Forward()
		seen := make([]bool, len(all))
		ends := map[int32][]int64{}
		for _, p := range all {
			id := pathSum(fw, p)
			if id < 0 || id >= int64(len(all)) || seen[id] {
				t.Fatalf("DAG %d: path %v has reverse id %d (of %d, or twice)", it, p, id, len(all))
			}
			seen[id] = true
			got, kind, err := rv.Regenerate(uint64(id))
			if err != nil || !slices.Equal(got, p) || kind != KindOf(d, p) {
				t.Fatalf("DAG %d: reverse id %d regenerates to %v (%v), want %v", it, id, got, err, p)
			}
			bl, _, _, err := rv.BallLarus(uint64(id))
			if err != nil || int64(bl) != pathSum(n, p) {
				t.Fatalf("DAG %d: reverse id %d: Ball-Larus id %d (%v), want %d", it, id, bl, err, pathSum(n, p))
			}
			last := p[len(p)-1]
			ends[last] = append(ends[last], id)
		}
		for x, ids := range ends {
			lo, cnt := rv.Range(x)
			slices.Sort(ids)
			if int64(len(ids)) != cnt || ids[0] != lo || ids[len(ids)-1] != lo+cnt-1 {
				t.Fatalf("DAG %d: paths ending with edge %d have ids %v, Range says [%d, %d)", it, x, ids, lo, lo+cnt)
			}
		}
		if _, _, err := rv.Regenerate(uint64(len(all))); err == nil {
			t.Fatalf("DAG %d: id %d past the end regenerates", it, len(all))
		}
		inc, err := Chords(d, fw, randWeights(r, d))
		if err != nil {
			t.Fatal(err)
		}
		plan, err := Place(d, fw, inc, PlaceOptions{NoCountFolding: true})
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, d, fw, inc, plan, PlaceOptions{NoCountFolding: true}, all, r)
		checked++
		paths += len(all)
	}
	if checked < iters*9/10 {
		t.Fatalf("only %d of %d DAGs checked", checked, iters)
	}
	t.Logf("%d DAGs, %d paths", checked, paths)
}

// Between against brute-force enumeration: the reverse ids of the paths
// from each edge out of the entry to each edge into the exit, or false
// when they are more than the limit.
func TestReverseBetween(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	iters := iterations(3000)
	var pairs, capped int
	for it := range iters {
		d, _, rv, all, ok := randomReverse(t, r)
		if !ok {
			continue
		}
		want := map[[2]int32][]int64{}
		for _, p := range all {
			k := [2]int32{p[0], p[len(p)-1]}
			want[k] = append(want[k], pathSum(rv.Forward(), p))
		}
		for _, y := range d.Out[cfg.Entry] {
			for _, x := range d.In[cfg.Exit] {
				w := want[[2]int32{y, x}]
				slices.Sort(w)
				limit := 1 + r.IntN(10)
				got, ok := rv.Between(y, x, limit)
				switch {
				case len(w) > limit && ok:
					t.Fatalf("DAG %d: %d paths from edge %d to edge %d, Between(%d) gives %v", it, len(w), y, x, limit, got)
				case len(w) > limit:
					capped++
				case !ok || !slices.Equal(got, w):
					t.Fatalf("DAG %d: paths from edge %d to edge %d have ids %v, Between gives %v (%v)", it, y, x, w, got, ok)
				}
				pairs++
			}
		}
	}
	if capped == 0 || capped == pairs {
		t.Fatalf("%d of %d pairs over the limit: the limit is not tested both ways", capped, pairs)
	}
	t.Logf("%d pairs, %d over the limit", pairs, capped)
}

// randomReverse makes a random DAG, numbers it both ways and lists its
// paths; ok is false for a DAG of more than 20,000 paths.
func randomReverse(t *testing.T, r *rand.Rand) (d *cfg.DAG, n *Numbering, rv *Reverse, all [][]int32, ok bool) {
	t.Helper()
	d = randDAG(r, 12)
	n, err := Number(d)
	if err != nil {
		t.Fatal(err)
	}
	if all, ok = dagtest.Paths(d, cfg.Entry, 20000); !ok {
		return d, n, nil, nil, false
	}
	if rv, err = NumberReverse(d, n); err != nil {
		t.Fatalf("NumberReverse: %v", err)
	}
	return d, n, rv, all, true
}

// TestZeroAtEntryForwardReverse checks that ZeroAtEntry leaves out the
// same r = 0 whether the probes count forward or reverse ids (a planner
// prices a function by the first, the instrumenter places the second),
// that it leaves out nothing else, and that the reverse probes still
// count every path's reverse id with the register 0 at the entry and
// garbage after a dummy entry edge.
func TestZeroAtEntryForwardReverse(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var checked, dropped, kept int
	for range iterations(3000) {
		d, n, _, all, ok := randomReverse(t, r)
		if !ok {
			continue
		}
		var freq []float64
		if r.IntN(2) == 0 {
			freq = make([]float64, len(d.Edges))
			for i := range freq {
				freq[i] = float64(r.IntN(5))
			}
		}
		w, err := WeightsFor(d, freq)
		if err != nil {
			t.Fatal(err)
		}
		o, err := NewTreeOrder(d, w)
		if err != nil {
			t.Fatal(err)
		}
		drops := func(reverse bool) ([]bool, *Reverse, *Placement) {
			var ops [2][]Op
			var rv *Reverse
			var plan *Placement
			for j, zero := range []bool{false, true} {
				opt := PlaceOptions{NoCountFolding: true, ZeroAtEntry: zero}
				var err error
				if reverse {
					rv, plan, _, err = PlaceReverse(d, n, freq, opt)
				} else {
					plan, err = PlaceInOrder(d, n, o, opt)
				}
				if err != nil {
					t.Fatal(err)
				}
				ops[j] = plan.Ops
			}
			out := make([]bool, len(d.Edges))
			for i := range out {
				switch a, b := ops[0][i], ops[1][i]; {
				case a == b:
				case a == Op{Kind: Init} && b.Kind == None:
					out[i] = true
				default:
					t.Fatalf("edge %d: %v without ZeroAtEntry, %v with it\nDAG %v", i, a, b, d.Edges)
				}
			}
			return out, rv, plan
		}
		fwd, _, _ := drops(false)
		rev, rv, plan := drops(true)
		if !slices.Equal(fwd, rev) {
			t.Fatalf("r = 0 left out forward on %v, reverse on %v\nDAG %v", fwd, rev, d.Edges)
		}
		for i, x := range rev {
			if x {
				dropped++
				if d.Edges[i].Kind == cfg.EdgeDummyEntry {
					t.Fatalf("edge %d, a dummy entry edge, lost its r = 0", i)
				}
			}
			if d.Edges[i].Kind == cfg.EdgeDummyEntry && plan.Ops[i].Kind == Init {
				kept++
			}
		}
		view := rv.Forward()
		for _, p := range all {
			zero := d.Edges[p[0]].Kind != cfg.EdgeDummyEntry
			counted, err := simulate(plan.Ops, p, int64(r.Uint64()), zero)
			if err != nil {
				t.Fatalf("path %v: %v\nops %v", p, err, plan.Ops)
			}
			if id := pathSum(view, p); len(counted) != 1 || counted[0] != id {
				t.Fatalf("path %v (reverse id %d) counted %v\nops %v", p, id, counted, plan.Ops)
			}
		}
		checked++
	}
	if checked < 100 || dropped == 0 || kept == 0 {
		t.Fatalf("%d DAGs, %d r = 0 left out, %d kept on dummy entry edges", checked, dropped, kept)
	}
	t.Logf("%d DAGs, %d r = 0 left out, %d kept on dummy entry edges", checked, dropped, kept)
}

// TestCheckedOnce: a numbering made by Number or NumberCut places probes
// on its own DAG without checking it again, and on any other DAG, even
// one of the same shape, only after the check, which a malformed one
// fails.
func TestCheckedOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for it := range iterations(200) {
		d := randDAG(r, 12)
		n, err := Number(d)
		if err != nil {
			continue
		}
		if n.checked != d {
			t.Fatalf("DAG %d: Number did not record its DAG", it)
		}
		if _, _, _, err := PlaceReverse(d, n, nil, PlaceOptions{NoCountFolding: true}); err != nil {
			t.Fatalf("DAG %d: %v", it, err)
		}
		bad := *d
		bad.Edges = slices.Clone(d.Edges)
		if len(bad.Edges) == 0 {
			continue
		}
		bad.Edges[0].To = bad.Edges[0].From // a self loop
		if _, _, _, err := PlaceReverse(&bad, n, nil, PlaceOptions{NoCountFolding: true}); err == nil {
			t.Fatalf("DAG %d: a malformed copy of the numbered DAG was not checked", it)
		}
		if cd, cn, _, err := numberCut(d, max(2, n.Paths()/2)); err == nil && cn.checked != cd {
			t.Fatalf("DAG %d: numberCut's numbering does not record its DAG", it)
		}
	}
}
