package numbering

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/dagtest"
)

func TestRandomDAGs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	iters := iterations(10000)
	var checked, paths, empty int
	for it := range iters {
		d := randDAG(r, 12)
		if k := checkDAG(t, d, randWeights(r, d), uint64(it)); k >= 0 {
			checked++
			paths += k
			if k == 0 {
				empty++
			}
		}
	}
	if checked < iters*9/10 || empty == 0 || empty > iters/5 {
		t.Fatalf("%d of %d DAGs small enough to check, %d without paths", checked, iters, empty)
	}
	t.Logf("%d DAGs (%d without paths), %d paths", checked, empty, paths)
}

// A hand-made DAG: the loop of the seed's Figure 6 shape, entry -> A, A -> B,
// A -> C, B -> D, C -> D, D -> exit, with a back edge D -> A (dummies
// entry -> A and D -> exit) and parallel edges B => D.
func TestSmallExample(t *testing.T) {
	const a, b, c, dd = 2, 3, 4, 5
	edges := []cfg.DAGEdge{
		{From: cfg.Entry, To: a, Kind: cfg.EdgeEntry, Orig: 0},
		{From: a, To: b, Kind: cfg.EdgeIfThen, Orig: 1},
		{From: a, To: c, Kind: cfg.EdgeIfElse, Orig: 2},
		{From: b, To: dd, Kind: cfg.EdgeBrIfTaken, Orig: 3},
		{From: b, To: dd, Kind: cfg.EdgeBrIfNot, Orig: 4},
		{From: c, To: dd, Kind: cfg.EdgeFallthrough, Orig: 5},
		{From: dd, To: cfg.Exit, Kind: cfg.EdgeReturn, Orig: 6},
		{From: dd, To: cfg.Exit, Kind: cfg.EdgeDummyExit, Orig: -1, Back: []int32{7}},
		{From: cfg.Entry, To: a, Kind: cfg.EdgeDummyEntry, Orig: -1, Back: []int32{7}},
	}
	d := mkDAG(6, edges)
	n, err := Number(d)
	if err != nil {
		t.Fatal(err)
	}
	if n.Paths() != 12 || n.NumPaths[a] != 6 || n.NumPaths[b] != 4 {
		t.Fatalf("NumPaths %v", n.NumPaths)
	}
	kinds := map[PathKind]int{}
	for id := range uint64(12) {
		_, k, err := Regenerate(n, d, id)
		if err != nil {
			t.Fatal(err)
		}
		kinds[k]++
	}
	want := map[PathKind]int{EntryToExit: 3, EntryToBack: 3, BackToExit: 3, BackToBack: 3}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	if checkDAG(t, d, nil, 1) != 12 {
		t.Fatal("not all paths checked")
	}
	inc, _ := Chords(d, n, nil)
	plan, err := Place(d, n, inc, PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var onBack []Op
	for _, p := range plan.Probes {
		if p.Edge == 7 {
			onBack = append(onBack, p.Op)
		}
	}
	if len(onBack) == 0 || len(onBack) > 2 {
		t.Fatalf("back edge probes %v", onBack)
	}
	t.Logf("ops %v\nprobes %v", plan.Ops, plan.Probes)
}

func TestExitEntryChord(t *testing.T) {
	// With a finite weight exit->entry may become a chord; check that both
	// outcomes occur and keep the sums.
	r := rand.New(rand.NewPCG(5, 6))
	var chord, tree int
	for it := range 500 {
		d := randDAG(r, 8)
		n, err := Number(d)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float64, len(d.Edges)+1)
		for i := range w {
			w[i] = float64(1 + r.IntN(5))
		}
		w[len(d.Edges)] = float64(r.IntN(7))
		inc, err := Chords(d, n, w)
		if err != nil {
			t.Fatal(err)
		}
		if inc.ExitChord {
			chord++
		} else if n.Paths() > 0 {
			tree++
		}
		checkDAG(t, d, w, uint64(it))
		// The default keeps exit->entry in the tree.
		inc, _ = Chords(d, n, nil)
		if inc.ExitChord || inc.ExitInc != 0 {
			t.Fatal("exit->entry is a chord by default")
		}
	}
	if chord == 0 || tree == 0 {
		t.Fatalf("exit->entry chord %d times, tree %d times", chord, tree)
	}
}

// TestSpanningTreeBruteForce compares the tree's weight with the best of
// all spanning trees on tiny graphs.
func TestSpanningTreeBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tried := 0
	for tried < 400 {
		d := randDAG(r, 6)
		n, err := Number(d)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float64, len(d.Edges)+1)
		for i := range w {
			w[i] = float64(r.IntN(7))
		}
		es, live := eventGraph(d, n, w)
		if len(es) > 14 || len(es) == 0 {
			continue
		}
		tried++
		inc, err := Chords(d, n, w)
		if err != nil {
			t.Fatal(err)
		}
		var got float64
		for _, e := range es {
			if e.idx == len(d.Edges) && !inc.ExitChord || e.idx < len(d.Edges) && inc.Class[e.idx] == Tree {
				got += e.w
			}
		}
		nlive := 0
		for _, l := range live {
			if l {
				nlive++
			}
		}
		best := math.Inf(-1)
		for mask := 0; mask < 1<<len(es); mask++ {
			if popcount(mask) != nlive-1 {
				continue
			}
			parent := make([]int32, d.NumNodes)
			for i := range parent {
				parent[i] = int32(i)
			}
			var find func(int32) int32
			find = func(x int32) int32 {
				if parent[x] != x {
					parent[x] = find(parent[x])
				}
				return parent[x]
			}
			ok, sum := true, 0.0
			for i, e := range es {
				if mask&(1<<i) == 0 {
					continue
				}
				a, b := find(e.u), find(e.v)
				if a == b {
					ok = false
					break
				}
				parent[a] = b
				sum += e.w
			}
			if ok {
				best = max(best, sum)
			}
		}
		if got != best {
			t.Fatalf("tree weight %v, best spanning tree %v", got, best)
		}
	}
}

func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

// diamonds builds a chain of k diamonds, optionally with an extra edge to
// the exit from every diamond's top (count(top) = 2*count(next) + 1).
func diamonds(k int, ladder bool) *cfg.DAG {
	var edges []cfg.DAGEdge
	add := func(a, b int32) {
		edges = append(edges, cfg.DAGEdge{From: a, To: b, Kind: cfg.EdgeBr, Orig: int32(len(edges))})
	}
	top := int32(2)
	add(cfg.Entry, top)
	next := int32(3)
	for range k {
		l, rr, bottom := next, next+1, next+2
		next += 3
		add(top, l)
		add(top, rr)
		add(l, bottom)
		add(rr, bottom)
		if ladder {
			add(top, cfg.Exit)
		}
		top = bottom
	}
	add(top, cfg.Exit)
	return mkDAG(int(next), edges)
}

func TestOverflowBoundary(t *testing.T) {
	// 2^63 - 1 paths fit exactly; 2^63 do not.
	d := diamonds(62, true)
	n, err := Number(d)
	if err != nil {
		t.Fatalf("2^63-1 paths: %v", err)
	}
	if n.Paths() != math.MaxInt64 {
		t.Fatalf("paths %d", n.Paths())
	}
	r := rand.New(rand.NewPCG(9, 9))
	for _, id := range []uint64{0, 1, math.MaxInt64 - 1, r.Uint64() >> 1} {
		p, _, err := Regenerate(n, d, id)
		if err != nil || pathSum(n, p) != int64(id) {
			t.Fatalf("Regenerate(%d): %v", id, err)
		}
	}
	inc, err := Chords(d, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Place(d, n, inc, PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		id := r.Uint64N(math.MaxInt64)
		p, _, _ := Regenerate(n, d, id)
		got, err := simulate(plan.Ops, p, int64(r.Uint64()), false)
		if err != nil || len(got) != 1 || got[0] != int64(id) {
			t.Fatalf("path %d counted %v, %v", id, got, err)
		}
	}
	d = diamonds(63, false)
	_, err = Number(d)
	var oe *OverflowError
	if !errors.As(err, &oe) {
		t.Fatalf("2^63 paths: %v", err)
	}
	if want := new(big.Int).Lsh(big.NewInt(1), 63); oe.Paths.Int().Cmp(want) != 0 || oe.Paths.Fits63() {
		t.Fatalf("overflow reports %v paths", oe.Paths)
	}
}

// segments splits a path of the input DAG at the edges Cut replaced and
// maps each piece onto a path of the cut DAG.
func segments(t *testing.T, orig *cfg.DAG, cr *CutResult, p []int32) [][]int32 {
	t.Helper()
	cd := cr.DAG
	newIdx := make([]int32, len(orig.Edges))
	for i := range newIdx {
		newIdx[i] = -1
	}
	for i, o := range cr.EdgeMap {
		if o >= 0 {
			newIdx[o] = int32(i)
		}
	}
	find := func(kind cfg.EdgeKind, at int32, g int32) int32 {
		for i, e := range cd.Edges {
			if e.Kind == kind && (e.From == at || e.To == at) && slices.Contains(e.Back, g) {
				return int32(i)
			}
		}
		t.Fatalf("no dummy %v at %d for Graph edge %d", kind, at, g)
		return -1
	}
	var segs [][]int32
	var cur []int32
	for _, e := range p {
		if newIdx[e] >= 0 {
			cur = append(cur, newIdx[e])
			continue
		}
		oe := orig.Edges[e]
		cur = append(cur, find(cfg.EdgeDummyExit, oe.From, oe.Orig))
		segs = append(segs, cur)
		cur = []int32{find(cfg.EdgeDummyEntry, oe.To, oe.Orig)}
	}
	return append(segs, cur)
}

func checkCut(t *testing.T, d *cfg.DAG, cr *CutResult, limit int64, walks int, r *rand.Rand) {
	t.Helper()
	if err := validate(cr.DAG); err != nil {
		t.Fatalf("cut DAG invalid: %v", err)
	}
	n, err := number(cr.DAG, limit, MostPathsFirst)
	if err != nil {
		t.Fatalf("cut DAG still overflows: %v", err)
	}
	inc, err := Chords(cr.DAG, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Place(cr.DAG, n, inc, PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	on := make([]bool, d.NumNodes)
	for _, e := range cr.Edges {
		on[d.Edges[e].To] = true
	}
	for v, c := range on {
		if c != slices.Contains(cr.Vertices, int32(v)) {
			t.Fatalf("vertex %d cut %v, listed %v", v, c, cr.Vertices)
		}
	}
	orig, err := number(d, math.MaxInt64, MostPathsFirst)
	if err != nil {
		orig = nil // the input may not fit at all: walk without counts
	}
	for range walks {
		// A random complete path of the input DAG.
		var p []int32
		v := int32(cfg.Entry)
		for v != cfg.Exit {
			var live []int32
			for _, e := range d.Out[v] {
				w := d.Edges[e].To
				if orig == nil || orig.NumPaths[w] > 0 {
					live = append(live, e)
				}
			}
			if len(live) == 0 {
				p = nil
				break
			}
			e := live[r.IntN(len(live))]
			p = append(p, e)
			v = d.Edges[e].To
		}
		if p == nil {
			continue
		}
		for _, s := range segments(t, d, cr, p) {
			id := pathSum(n, s)
			back, kind, err := Regenerate(n, cr.DAG, uint64(id))
			if err != nil || !slices.Equal(back, s) || kind != expectKind(cr.DAG, s) {
				t.Fatalf("segment %v id %d regenerates as %v %v, %v", s, id, back, kind, err)
			}
			got, err := simulate(plan.Ops, s, int64(r.Uint64()), false)
			if err != nil || len(got) != 1 || got[0] != id {
				t.Fatalf("segment %v (id %d) counted %v, %v", s, id, got, err)
			}
		}
	}
}

func TestCutDiamonds(t *testing.T) {
	d := diamonds(70, false)
	var oe *OverflowError
	if _, err := Number(d); !errors.As(err, &oe) {
		t.Fatalf("70 diamonds: %v", err)
	}
	cr, err := Cut(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(cr.Vertices) == 0 || len(cr.Vertices) > 4 {
		t.Fatalf("cut at %v", cr.Vertices)
	}
	n, err := Number(cr.DAG)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cut at %v: %d paths", cr.Vertices, n.Paths())
	checkCut(t, d, cr, MaxPaths, 300, rand.New(rand.NewPCG(1, 1)))

	// A DAG that fits is returned as it is.
	small := diamonds(10, true)
	cr, err = Cut(small)
	if err != nil || cr.DAG != small || len(cr.Vertices) != 0 {
		t.Fatalf("Cut of a fitting DAG: %v %v", cr, err)
	}
}

func TestCutWithLoops(t *testing.T) {
	// Diamonds inside a loop: the cut must merge with the existing dummy
	// edges and keep the back edge's own paths apart.
	d0 := diamonds(66, false)
	edges := slices.Clone(d0.Edges)
	last := edges[len(edges)-1].From
	edges = append(edges,
		cfg.DAGEdge{From: last, To: cfg.Exit, Kind: cfg.EdgeDummyExit, Orig: -1, Back: []int32{9000}},
		cfg.DAGEdge{From: cfg.Entry, To: 2, Kind: cfg.EdgeDummyEntry, Orig: -1, Back: []int32{9000}},
	)
	d := mkDAG(d0.NumNodes, edges)
	cr, err := Cut(d)
	if err != nil {
		t.Fatal(err)
	}
	checkCut(t, d, cr, MaxPaths, 300, rand.New(rand.NewPCG(2, 2)))
}

// TestCutRandom cuts random DAGs against small limits, chosen between the
// count left by cutting every vertex that can be cut (so that a cut exists)
// and the DAG's own count.
func TestCutRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var cuts, vertices int
	for cuts < 1500 {
		d := randDAG(r, 12)
		full, _ := number(d, math.MaxInt64, MostPathsFirst)
		all := make([]bool, d.NumNodes)
		for _, v := range d.Topo {
			all[v] = v != cfg.Entry && v != cfg.Exit && full.NumPaths[v] > 0
		}
		most, _ := number(buildCut(d, d.Reachable(), all).DAG, math.MaxInt64, MostPathsFirst)
		if most.Paths() >= full.Paths() {
			continue
		}
		limit := most.Paths() + r.Int64N(full.Paths()-most.Paths())
		cr, err := cut(d, limit)
		if err != nil {
			t.Fatalf("limit %d, everything cut gives %d: %v", limit, most.Paths(), err)
		}
		cuts++
		vertices += len(cr.Vertices)
		checkCut(t, d, cr, limit, 20, r)
		// The cut DAG satisfies every other invariant too.
		if cn, _ := number(cr.DAG, limit, MostPathsFirst); cn.Paths() <= 20000 {
			checkDAG(t, cr.DAG, nil, r.Uint64())
		}
		// Fitting limits leave the DAG alone.
		if cr, err := cut(d, full.Paths()); err != nil || cr.DAG != d {
			t.Fatal("a fitting DAG was cut")
		}
	}
	t.Logf("%d DAGs cut, %.1f vertices each", cuts, float64(vertices)/float64(cuts))
}

func TestEdgeOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for range 300 {
		d := randDAG(r, 10)
		n, err := Number(d, OutOrder)
		if err != nil {
			t.Fatal(err)
		}
		paths, _ := dagtest.Paths(d, cfg.Entry, math.MaxInt)
		checkValues := func() {
			seen := map[int64]bool{}
			for _, p := range paths {
				id := pathSum(n, p)
				got, _, err := Regenerate(n, d, uint64(id))
				if seen[id] || err != nil || !slices.Equal(got, p) {
					t.Fatalf("OutOrder: path %v id %d: %v %v", p, id, got, err)
				}
				seen[id] = true
			}
		}
		checkValues()
		for _, v := range d.Topo {
			var s int64
			for _, e := range d.Out[v] {
				if n.Val[e] != s {
					t.Fatalf("OutOrder: edge %d has %d, want %d", e, n.Val[e], s)
				}
				s += n.NumPaths[d.Edges[e].To]
			}
		}
		drop := func(d *cfg.DAG, out []int32, _ []int64) {
			if len(out) > 1 {
				out[0] = out[1]
			}
		}
		if _, err := Number(d, drop); err == nil && hasFork(d) {
			t.Fatal("an order that is not a permutation was accepted")
		}
	}
}

func hasFork(d *cfg.DAG) bool {
	for _, v := range d.Topo {
		if len(d.Out[v]) > 1 {
			return true
		}
	}
	return false
}

func TestDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for range 200 {
		d := randDAG(r, 12)
		w := randWeights(r, d)
		run := func() (any, any, any) {
			n, _ := Number(d)
			inc, _ := Chords(d, n, w)
			plan, _ := Place(d, n, inc, PlaceOptions{})
			return n, inc, plan
		}
		a1, b1, c1 := run()
		a2, b2, c2 := run()
		if !reflect.DeepEqual(a1, a2) || !reflect.DeepEqual(b1, b2) || !reflect.DeepEqual(c1, c2) {
			t.Fatal("two runs differ")
		}
	}
	d := diamonds(80, false)
	c1, _ := Cut(d)
	c2, _ := Cut(d)
	if !reflect.DeepEqual(c1, c2) {
		t.Fatal("two cuts differ")
	}
}

func TestInvalidInput(t *testing.T) {
	good := diamonds(2, false)
	bad := []func(d *cfg.DAG){
		func(d *cfg.DAG) { d.Topo = d.Topo[1:] },
		func(d *cfg.DAG) { d.Topo[1], d.Topo[2] = d.Topo[2], d.Topo[1] },
		func(d *cfg.DAG) { d.Out[2] = d.Out[2][:1] },
		func(d *cfg.DAG) { d.Edges[1].To = cfg.Entry },
		func(d *cfg.DAG) { d.Edges[1].To = d.Edges[1].From },
		func(d *cfg.DAG) { d.Topo = append(d.Topo, 99) },
		func(d *cfg.DAG) { d.In = d.In[:3] },
	}
	for i, f := range bad {
		d := mkDAG(good.NumNodes, slices.Clone(good.Edges))
		f(d)
		if _, err := Number(d); err == nil {
			t.Errorf("case %d: malformed DAG accepted", i)
		}
	}
	n, _ := Number(good)
	if _, err := Chords(good, n, []float64{1}); err == nil {
		t.Error("wrong number of weights accepted")
	}
	if _, err := Chords(good, n, slices.Repeat([]float64{math.NaN()}, len(good.Edges))); err == nil {
		t.Error("NaN weight accepted")
	}
	// A back edge with only one dummy edge.
	edges := append(slices.Clone(good.Edges), cfg.DAGEdge{From: 2, To: cfg.Exit, Kind: cfg.EdgeDummyExit, Orig: -1, Back: []int32{50}})
	d := mkDAG(good.NumNodes, edges)
	n, _ = Number(d)
	inc, _ := Chords(d, n, nil)
	if _, err := Place(d, n, inc, PlaceOptions{}); err == nil {
		t.Error("unpaired back edge accepted")
	}
}

// TestNoPaths covers DAGs where the exit cannot be reached.
func TestNoPaths(t *testing.T) {
	edges := []cfg.DAGEdge{
		{From: cfg.Entry, To: 2, Kind: cfg.EdgeEntry, Orig: 0},
		{From: 2, To: 3, Kind: cfg.EdgeBr, Orig: 1},
		{From: 2, To: 4, Kind: cfg.EdgeBr, Orig: 2},
	}
	d := mkDAG(5, edges)
	n, err := Number(d)
	if err != nil || n.Paths() != 0 {
		t.Fatalf("%v %v", n, err)
	}
	if _, _, err := Regenerate(n, d, 0); !errors.Is(err, ErrBadID) {
		t.Fatalf("Regenerate: %v", err)
	}
	inc, err := Chords(d, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Place(d, n, inc, PlaceOptions{})
	if err != nil || len(plan.Probes) != 0 {
		t.Fatalf("plan %v, %v", plan, err)
	}
	if w, err := StaticWeights(d); err != nil || len(w) != len(edges) {
		t.Fatalf("StaticWeights: %v %v", w, err)
	}
}

func TestRegenerateDeadEnd(t *testing.T) {
	edges := []cfg.DAGEdge{
		{From: cfg.Entry, To: 2, Kind: cfg.EdgeEntry, Orig: 0},
		{From: 2, To: cfg.Exit, Kind: cfg.EdgeReturn, Orig: 1},
		{From: 2, To: 3, Kind: cfg.EdgeBr, Orig: 2},
	}
	d := mkDAG(4, edges)
	n, err := Number(d)
	if err != nil || n.Paths() != 1 || n.Val[2] != 1 {
		t.Fatalf("%+v %v", n, err)
	}
	if p, _, err := Regenerate(n, d, 0); err != nil || !slices.Equal(p, []int32{0, 1}) {
		t.Fatalf("Regenerate(0) = %v, %v", p, err)
	}
	// A numbering that does not fit the DAG leads into a dead end.
	n.Val[1] = 5
	if _, _, err := Regenerate(n, d, 0); err == nil || errors.Is(err, ErrBadID) {
		t.Fatalf("inconsistent numbering: %v", err)
	}
	n.Val[1] = 0
	n.NumPaths[2] = 3
	n.NumPaths[cfg.Entry] = 3
	if _, _, err := Regenerate(n, d, 2); err == nil {
		t.Fatal("inconsistent counts accepted")
	}
	if _, _, err := Regenerate(n, mkDAG(4, edges[:2]), 0); err == nil {
		t.Fatal("numbering of another DAG accepted")
	}
}

func TestStaticWeights(t *testing.T) {
	// entry -> h; h -> a, h -> b (b ends in unreachable); a -> h back
	// edge; h -> exit.
	const h, a, b = 2, 3, 4
	edges := []cfg.DAGEdge{
		{From: cfg.Entry, To: h, Kind: cfg.EdgeEntry, Orig: 0},
		{From: h, To: a, Kind: cfg.EdgeBrIfNot, Orig: 1},
		{From: h, To: b, Kind: cfg.EdgeBrIfTaken, Orig: 2},
		{From: h, To: cfg.Exit, Kind: cfg.EdgeBr, Orig: 3},
		{From: a, To: cfg.Exit, Kind: cfg.EdgeDummyExit, Orig: -1, Back: []int32{4}},
		{From: cfg.Entry, To: h, Kind: cfg.EdgeDummyEntry, Orig: -1, Back: []int32{4}},
	}
	d := mkDAG(5, edges)
	w, err := StaticWeights(d)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 4, 0, 4, 4, 7}
	if !slices.Equal(w, want) {
		t.Fatalf("weights %v, want %v", w, want)
	}
	n, _ := Number(d)
	inc, _ := Chords(d, n, w)
	// The loop's edges, heaviest, stay free of probes; the light entry
	// edge takes one.
	if inc.Class[5] != Tree || inc.Class[1] != Tree || inc.Class[0] != Chord || inc.Class[2] != Dead {
		t.Fatalf("classes %v", inc.Class)
	}
}

// TestProfileWeights: placed by a profile, the arms of a loop's diamond
// that ran most carry no increment, the increment goes on the arm that
// ran least or onto the sequences at the path's ends, and the static
// estimate only breaks ties.
func TestProfileWeights(t *testing.T) {
	// entry -> h; h -> a | b | c; a, b, c -> j; j -> h back edge; h -> exit.
	const h, a, b, c, j = 2, 3, 4, 5, 6
	edges := []cfg.DAGEdge{
		{From: cfg.Entry, To: h, Kind: cfg.EdgeEntry, Orig: 0},
		{From: h, To: a, Kind: cfg.EdgeBrTable, Orig: 1},
		{From: h, To: b, Kind: cfg.EdgeBrTable, Orig: 2},
		{From: h, To: c, Kind: cfg.EdgeBrTable, Orig: 3},
		{From: a, To: j, Kind: cfg.EdgeBr, Orig: 4},
		{From: b, To: j, Kind: cfg.EdgeBr, Orig: 5},
		{From: c, To: j, Kind: cfg.EdgeBr, Orig: 6},
		{From: h, To: cfg.Exit, Kind: cfg.EdgeBr, Orig: 7},
		{From: j, To: cfg.Exit, Kind: cfg.EdgeDummyExit, Orig: -1, Back: []int32{8}},
		{From: cfg.Entry, To: h, Kind: cfg.EdgeDummyEntry, Orig: -1, Back: []int32{8}},
	}
	d := mkDAG(7, edges)
	n, err := Number(d)
	if err != nil {
		t.Fatal(err)
	}
	// c ran most, a least, b never.
	freq := []float64{1, 10, 0, 90, 10, 0, 90, 1, 100, 100}
	w, err := ProfileWeights(d, freq)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range d.Edges {
		ends := e.From == cfg.Entry || e.To == cfg.Exit
		if ends && w[i] >= 1 || !ends && (w[i] < freq[i] || w[i] >= freq[i]+1) {
			t.Fatalf("edge %d (%d->%d) weighs %v", i, e.From, e.To, w[i])
		}
	}
	inc, err := Chords(d, n, w)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Place(d, n, inc, PlaceOptions{NoCountFolding: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []int{3, 6} {
		if plan.Ops[e].Kind != None {
			t.Fatalf("hot arm edge %d has %v; ops %v", e, plan.Ops[e], plan.Ops)
		}
	}
	if plan.Ops[1].Kind == None && plan.Ops[4].Kind == None {
		t.Fatalf("a lighter arm should carry the increment the hot arm does not; ops %v", plan.Ops)
	}
	// Hits of the run: every op that is a sequence of its own, by its
	// edge's frequency. Placed statically the hot arm pays.
	hits := func(p *Placement) (s float64) {
		for i, op := range p.Ops {
			if op.Kind != None && d.Edges[i].Kind != cfg.EdgeDummyEntry {
				s += freq[i]
			}
		}
		return s
	}
	sw, _ := StaticWeights(d)
	sinc, _ := Chords(d, n, sw)
	static, _ := Place(d, n, sinc, PlaceOptions{NoCountFolding: true})
	if hits(plan) >= hits(static) {
		t.Fatalf("placed by the profile %v hits, statically %v", hits(plan), hits(static))
	}
	paths, _ := dagtest.Paths(d, cfg.Entry, 100)
	checkPlan(t, d, n, inc, plan, PlaceOptions{NoCountFolding: true}, paths, rand.New(rand.NewPCG(1, 2)))

	if _, err := ProfileWeights(d, freq[1:]); err == nil {
		t.Fatal("too few frequencies accepted")
	}
	bad := slices.Clone(freq)
	bad[2] = -1
	if _, err := ProfileWeights(d, bad); err == nil {
		t.Fatal("a negative frequency accepted")
	}
}

// TestPlaceFixed checks PlaceOptions.Fixed on random DAGs: edges that
// weigh the most and lie in the spanning tree, not into the exit nor out
// of the entry, nor into a node that leaves another such edge, get no
// operation, and every path is still counted with its id.
func TestPlaceFixed(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	iters := iterations(3000)
	var fixedEdges, checked int
	for range iters {
		d := randDAG(r, 12)
		n, err := Number(d)
		if err != nil {
			t.Fatal(err)
		}
		paths, ok := dagtest.Paths(d, cfg.Entry, 20000)
		if !ok || len(paths) == 0 {
			continue
		}
		fixed := make([]bool, len(d.Edges))
		leaves := make([]bool, d.NumNodes)
		for i, e := range d.Edges {
			if e.From != cfg.Entry && e.To != cfg.Exit && e.Orig >= 0 && !leaves[e.To] && r.IntN(3) == 0 {
				fixed[i] = true
				leaves[e.From] = true
			}
		}
		// A node that leaves a fixed edge may not be the target of one.
		for i, e := range d.Edges {
			if fixed[i] && leaves[e.To] {
				fixed[i] = false
			}
		}
		w := make([]float64, len(d.Edges))
		for i := range w {
			w[i] = float64(r.IntN(4))
			if fixed[i] {
				w[i] = math.Inf(1)
			}
		}
		inc, err := Chords(d, n, w)
		if err != nil {
			t.Fatal(err)
		}
		for i := range fixed {
			// Parallel fixed edges: the tree holds one of them.
			fixed[i] = fixed[i] && inc.Class[i] == Tree
			if fixed[i] {
				fixedEdges++
			}
		}
		opt := PlaceOptions{NoCountFolding: true, Fixed: fixed, ZeroAtEntry: r.IntN(2) == 0}
		plan, err := Place(d, n, inc, opt)
		if err != nil {
			t.Fatalf("Place: %v\nDAG %v\nfixed %v", err, d.Edges, fixed)
		}
		for i, op := range plan.Ops {
			if fixed[i] && op.Kind != None {
				t.Fatalf("fixed edge %d has %v", i, op)
			}
		}
		checkPlan(t, d, n, inc, plan, opt, paths, r)
		checked++
	}
	if checked < iters/2 || fixedEdges < iters/2 {
		t.Fatalf("%d DAGs checked, %d fixed edges", checked, fixedEdges)
	}
	// A fixed edge that must carry an operation is refused.
	d := diamonds(1, false)
	n, err := Number(d)
	if err != nil {
		t.Fatal(err)
	}
	inc, err := Chords(d, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	fixed := make([]bool, len(d.Edges))
	for i, e := range d.Edges {
		fixed[i] = e.To == cfg.Exit
	}
	if _, err := Place(d, n, inc, PlaceOptions{NoCountFolding: true, Fixed: fixed}); err == nil {
		t.Fatal("Place put no count on the fixed edges into the exit")
	}
	if _, err := Place(d, n, inc, PlaceOptions{Fixed: fixed[1:]}); err == nil {
		t.Fatal("Place took fixed marks for the wrong number of edges")
	}
}

// TestCutLoopHeaders checks that a DAG of more than LoopCutPaths paths is
// cut at each of its loop headers that a block leads to, and at nothing
// else when that is enough, while one of fewer paths is left alone: chains
// of diamonds with random loops (a dummy entry edge to a header, a dummy
// exit edge from a latch after it), each cut checked by regenerating and
// counting the pieces of random paths.
func TestCutLoopHeaders(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 18))
	var cut, cutFit, uncut int
	for trial := range iterations(300) {
		k := 10 + r.IntN(60)
		d0 := diamonds(k, r.IntN(3) == 0)
		edges := slices.Clone(d0.Edges)
		tops := []int32{2}
		for i := range k {
			tops = append(tops, int32(5+3*i))
		}
		headers := map[int32]bool{}
		for l := range r.IntN(6) {
			a := r.IntN(len(tops))
			b := a + r.IntN(len(tops)-a)
			back := int32(9000 + l)
			edges = append(edges,
				cfg.DAGEdge{From: tops[b], To: cfg.Exit, Kind: cfg.EdgeDummyExit, Orig: -1, Back: []int32{back}},
				cfg.DAGEdge{From: cfg.Entry, To: tops[a], Kind: cfg.EdgeDummyEntry, Orig: -1, Back: []int32{back}})
			if a > 0 { // tops[0] follows the entry only
				headers[tops[a]] = true
			}
		}
		d := mkDAG(d0.NumNodes, edges)
		cr, err := Cut(d)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		full := d.NumPaths()
		if full.Fits63() && full.Small <= LoopCutPaths {
			if cr.DAG != d || len(cr.Vertices) != 0 {
				t.Fatalf("trial %d: %d paths cut at %v", trial, full.Small, cr.Vertices)
			}
			uncut++
			continue
		}
		cut++
		if full.Fits63() {
			cutFit++
		}
		for h := range headers {
			if !slices.Contains(cr.Vertices, h) {
				t.Fatalf("trial %d: header %d not cut (cut at %v)", trial, h, cr.Vertices)
			}
		}
		byHeaders := make([]bool, d.NumNodes)
		for h := range headers {
			byHeaders[h] = true
		}
		if _, err := Number(buildCut(d, d.Reachable(), byHeaders).DAG); err == nil && len(cr.Vertices) != len(headers) {
			t.Fatalf("trial %d: the headers %v suffice, cut at %v", trial, headers, cr.Vertices)
		}
		checkCut(t, d, cr, MaxPaths, 20, r)
	}
	t.Logf("%d DAGs cut (%d that fit 63 bits), %d left alone", cut, cutFit, uncut)
	if cutFit == 0 || cut == cutFit || uncut == 0 {
		t.Fatalf("%d DAGs cut (%d that fit 63 bits), %d left alone: want each", cut, cutFit, uncut)
	}
}

// TestNumberCutOnce checks NumberCut, which numbers the DAG it cuts once
// and keeps the cut's numbering, against cutting and numbering afresh:
// the same DAG, cut vertices and numbering, on random DAGs against small
// limits and on chains of diamonds with loops against MaxPaths (cut at
// their headers, or to fit 63 bits).
func TestNumberCutOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 32))
	check := func(d *cfg.DAG, limit int64) bool {
		t.Helper()
		gd, gn, gcuts, gerr := numberCut(d, limit)
		cr, err := CutTo(d, limit)
		var want *Numbering
		if err == nil {
			want, err = Number(cr.DAG)
		}
		if fits, ferr := Number(d); ferr == nil && fits.Paths() <= limit && (limit != MaxPaths || fits.Paths() <= LoopCutPaths) {
			cr, want, err = &CutResult{DAG: d}, fits, nil
		}
		if (gerr != nil) != (err != nil) {
			t.Fatalf("limit %d: numberCut %v, CutTo and Number %v", limit, gerr, err)
		}
		if err != nil {
			return false
		}
		if !reflect.DeepEqual(gd, cr.DAG) || !slices.Equal(gcuts, cr.Vertices) || !reflect.DeepEqual(gn, want) {
			t.Fatalf("limit %d: numberCut cut at %v with %d paths, CutTo at %v with %d", limit, gcuts, gn.Paths(), cr.Vertices, want.Paths())
		}
		return len(gcuts) > 0
	}
	var cut int
	for range iterations(2000) {
		d := randDAG(r, 12)
		full, _ := number(d, math.MaxInt64, MostPathsFirst)
		if full.Paths() < 3 {
			continue
		}
		if check(d, 2+r.Int64N(full.Paths()-1)) {
			cut++
		}
	}
	for range iterations(100) {
		k := 10 + r.IntN(60)
		d0 := diamonds(k, r.IntN(3) == 0)
		edges := slices.Clone(d0.Edges)
		for l := range r.IntN(6) {
			a := r.IntN(k + 1)
			b := a + r.IntN(k+1-a)
			back := int32(9000 + l)
			edges = append(edges,
				cfg.DAGEdge{From: int32(2 + 3*b), To: cfg.Exit, Kind: cfg.EdgeDummyExit, Orig: -1, Back: []int32{back}},
				cfg.DAGEdge{From: cfg.Entry, To: int32(2 + 3*a), Kind: cfg.EdgeDummyEntry, Orig: -1, Back: []int32{back}})
		}
		if check(mkDAG(d0.NumNodes, edges), MaxPaths) {
			cut++
		}
	}
	if cut == 0 {
		t.Fatal("nothing was cut")
	}
}
