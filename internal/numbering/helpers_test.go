package numbering

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/dagtest"
)

// mkDAG fills Out, In and Topo for an edge list.
func mkDAG(nn int, edges []cfg.DAGEdge) *cfg.DAG { return dagtest.New(nn, edges) }

// iterations is n, or a tenth of it under -short.
func iterations(n int) int {
	if testing.Short() {
		return n / 10
	}
	return n
}

// runOp runs a probe's operation on the path register, as an instrumented
// function would, and returns the counter it counts, if any.
func runOp(op Op, reg *int64) (int64, bool) {
	switch op.Kind {
	case Init:
		*reg = op.Value
	case Add:
		*reg += op.Value
	case Count:
		return *reg + op.Value, true
	case CountConst:
		return op.Value, true
	}
	return 0, false
}

// spec is an edge between ranks i < j of a ranked node order (entry first,
// exit last), so that any list of specs is acyclic.
type spec struct {
	i, j  int
	dummy bool
}

// ranked builds a DAG from specs. Internal nodes get the labels of perm, so
// that labels and topological order differ. Edges marked dummy become dummy
// edges when they leave the entry or enter the exit; dummy exit and entry
// edges are then paired up through fake back edges, as the cfg package
// would make them.
func ranked(nn int, perm []int, specs []spec, pairSeed uint64) *cfg.DAG {
	label := dagtest.Ranks(nn, perm)
	var edges []cfg.DAGEdge
	var dx, de []int
	for k, s := range specs {
		e := cfg.DAGEdge{From: label(s.i), To: label(s.j), Kind: cfg.EdgeBr, Orig: int32(k)}
		switch {
		case s.dummy && e.From == cfg.Entry && e.To != cfg.Exit:
			e.Kind, e.Orig = cfg.EdgeDummyEntry, -1
			de = append(de, len(edges))
		case s.dummy && e.To == cfg.Exit && e.From != cfg.Entry:
			e.Kind, e.Orig = cfg.EdgeDummyExit, -1
			dx = append(dx, len(edges))
		}
		edges = append(edges, e)
	}
	if len(dx) == 0 || len(de) == 0 {
		for _, i := range append(dx, de...) {
			edges[i].Kind, edges[i].Orig = cfg.EdgeBr, int32(len(specs)+i)
		}
	} else {
		r := rand.New(rand.NewPCG(pairSeed, 7))
		k := max(len(dx), len(de)) + r.IntN(3)
		for b := range k {
			x, y := r.IntN(len(dx)), r.IntN(len(de))
			if b < len(dx) {
				x = b
			}
			if b < len(de) {
				y = b
			}
			g := int32(10000 + b)
			edges[dx[x]].Back = append(edges[dx[x]].Back, g)
			edges[de[y]].Back = append(edges[de[y]].Back, g)
		}
	}
	return mkDAG(nn, edges)
}

// randDAG makes a random DAG of up to maxNodes nodes, with parallel edges,
// dead ends, unreachable nodes and dummy edges.
func randDAG(r *rand.Rand, maxNodes int) *cfg.DAG {
	nn := 2 + r.IntN(maxNodes-1)
	specs := []spec{{0, 1, false}} // entry -> first block
	for j := 2; j < nn-1; j++ {
		if r.IntN(10) > 0 { // most blocks are reachable
			specs = append(specs, spec{r.IntN(j), j, r.IntN(4) == 0})
		}
	}
	if nn > 2 && r.IntN(5) > 0 {
		specs = append(specs, spec{1 + r.IntN(nn-2), nn - 1, false})
	}
	m := r.IntN(3*nn + 2)
	for range m {
		if len(specs) > 0 && r.IntN(6) == 0 {
			specs = append(specs, specs[r.IntN(len(specs))]) // parallel edge
			continue
		}
		i := r.IntN(nn - 1)
		j := i + 1 + r.IntN(nn-1-i)
		if r.IntN(4) == 0 { // favour the exit, so that more paths complete
			j = nn - 1
		}
		specs = append(specs, spec{i, j, r.IntN(2) == 0})
	}
	return ranked(nn, r.Perm(nn-2), specs, r.Uint64())
}

func pathSum(n *Numbering, p []int32) int64 {
	var s int64
	for _, e := range p {
		s += n.Val[e]
	}
	return s
}

// simulate runs the operations of a path's DAG edges from an undefined
// register holding garbage (0 and defined when zero is set) and returns
// what was counted.
func simulate(ops []Op, path []int32, garbage int64, zero bool) ([]int64, error) {
	r, def := garbage, false
	if zero {
		r, def = 0, true
	}
	var counted []int64
	for _, e := range path {
		op := ops[e]
		if len(counted) > 0 && op.Kind != None {
			return nil, fmt.Errorf("edge %d runs %v after the path was counted", e, op)
		}
		switch op.Kind {
		case Init:
			r, def = op.Value, true
		case Add:
			if !def {
				return nil, fmt.Errorf("edge %d adds to an undefined register", e)
			}
			r += op.Value
		case Count:
			if !def {
				return nil, fmt.Errorf("edge %d counts an undefined register", e)
			}
			counted = append(counted, r+op.Value)
		case CountConst:
			counted = append(counted, op.Value)
		}
	}
	return counted, nil
}

// randWeights picks a weight vector: nil, small integers (many ties), static
// weights, or any of those with an explicit exit->entry weight.
func randWeights(r *rand.Rand, d *cfg.DAG) []float64 {
	var w []float64
	switch r.IntN(3) {
	case 0:
	case 1:
		w = make([]float64, len(d.Edges))
		for i := range w {
			w[i] = float64(r.IntN(4))
		}
	case 2:
		var err error
		if w, err = StaticWeights(d); err != nil {
			panic(err)
		}
	}
	if r.IntN(3) == 0 {
		if w == nil {
			w = make([]float64, len(d.Edges))
			for i := range w {
				w[i] = 1
			}
		}
		w = append(w, float64(r.IntN(4))-1)
	}
	return w
}

// liveNodes are the nodes on some entry-to-exit path.
func liveNodes(d *cfg.DAG, n *Numbering) []bool {
	live := make([]bool, d.NumNodes)
	if n.Paths() == 0 {
		return live
	}
	for _, v := range d.Topo {
		live[v] = n.NumPaths[v] > 0
	}
	return live
}

// checkDAG checks every invariant on one DAG and returns the number of
// paths checked, or -1 when the DAG has too many to enumerate.
func checkDAG(t *testing.T, d *cfg.DAG, weights []float64, seed uint64) int {
	t.Helper()
	n, err := Number(d)
	if err != nil {
		t.Fatalf("Number: %v", err)
	}
	paths, ok := dagtest.Paths(d, cfg.Entry, 20000)
	if !ok {
		return -1
	}
	checkNumbering(t, d, n, paths)
	inc, err := Chords(d, n, weights)
	if err != nil {
		t.Fatalf("Chords: %v", err)
	}
	checkTree(t, d, n, inc, weights)
	for _, p := range paths {
		s := inc.ExitInc
		for _, e := range p {
			if inc.Class[e] == Chord {
				s += inc.Inc[e]
			} else if inc.Inc[e] != 0 {
				t.Fatalf("non-chord edge %d has Inc %d", e, inc.Inc[e])
			}
		}
		if s != pathSum(n, p) {
			t.Fatalf("path %v: chord sum %d, Val sum %d", p, s, pathSum(n, p))
		}
	}
	r := rand.New(rand.NewPCG(seed, 99))
	for _, opt := range []PlaceOptions{{}, {NoCountFolding: true}, {ZeroAtEntry: true}, {NoCountFolding: true, ZeroAtEntry: true}} {
		plan, err := Place(d, n, inc, opt)
		if err != nil {
			t.Fatalf("Place(%+v): %v", opt, err)
		}
		checkPlan(t, d, n, inc, plan, opt, paths, r)
	}
	return len(paths)
}

func checkNumbering(t *testing.T, d *cfg.DAG, n *Numbering, paths [][]int32) {
	t.Helper()
	if int64(len(paths)) != n.Paths() {
		t.Fatalf("%d paths, NumPaths(entry) = %d", len(paths), n.Paths())
	}
	for _, v := range d.Topo {
		ps, _ := dagtest.Paths(d, v, math.MaxInt)
		if int64(len(ps)) != n.NumPaths[v] {
			t.Fatalf("node %d: %d paths, NumPaths %d", v, len(ps), n.NumPaths[v])
		}
	}
	seen := make([]bool, len(paths))
	for _, p := range paths {
		id := pathSum(n, p)
		if id < 0 || id >= int64(len(paths)) || seen[id] {
			t.Fatalf("path %v has id %d (of %d), out of range or taken", p, id, len(paths))
		}
		seen[id] = true
		got, kind, err := Regenerate(n, d, uint64(id))
		if err != nil || !slices.Equal(got, p) {
			t.Fatalf("Regenerate(%d) = %v, %v; want %v", id, got, err, p)
		}
		if want := expectKind(d, p); kind != want {
			t.Fatalf("Regenerate(%d) kind %v, want %v", id, kind, want)
		}
	}
	for _, bad := range []uint64{uint64(len(paths)), uint64(len(paths)) + 3, math.MaxUint64} {
		if _, _, err := Regenerate(n, d, bad); !errors.Is(err, ErrBadID) {
			t.Fatalf("Regenerate(%d) with %d paths: %v", bad, len(paths), err)
		}
	}
	// Most paths first: along each node's live out edges in value order,
	// the successors' counts never grow.
	for _, v := range d.Topo {
		out := slices.Clone(d.Out[v])
		slices.SortStableFunc(out, func(a, b int32) int { return int(n.Val[a] - n.Val[b]) })
		var last int64 = math.MaxInt64
		for _, e := range out {
			p := n.NumPaths[d.Edges[e].To]
			if p > last {
				t.Fatalf("node %d: edge %d (to %d paths) valued after an edge to %d paths", v, e, p, last)
			}
			last = p
		}
	}
}

func expectKind(d *cfg.DAG, p []int32) PathKind {
	first := d.Edges[p[0]].Kind == cfg.EdgeDummyEntry
	last := d.Edges[p[len(p)-1]].Kind == cfg.EdgeDummyExit
	return [2][2]PathKind{{EntryToExit, EntryToBack}, {BackToExit, BackToBack}}[b2i(first)][b2i(last)]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// uedge is an edge of the undirected event-counting graph; index
// len(d.Edges) is exit->entry.
type uedge struct {
	u, v int32
	w    float64
	idx  int
}

func eventGraph(d *cfg.DAG, n *Numbering, weights []float64) ([]uedge, []bool) {
	live := liveNodes(d, n)
	weight := func(i int) float64 {
		if i < len(weights) {
			return weights[i]
		}
		if i == len(d.Edges) {
			return math.Inf(1)
		}
		return 1
	}
	var es []uedge
	for i, e := range d.Edges {
		if live[e.From] && live[e.To] {
			es = append(es, uedge{e.From, e.To, weight(i), i})
		}
	}
	if n.Paths() > 0 {
		es = append(es, uedge{cfg.Exit, cfg.Entry, weight(len(d.Edges)), len(d.Edges)})
	}
	return es, live
}

// checkTree checks that the tree edges form a spanning tree of the live
// nodes, that dead edges are exactly those off every path, and the cycle
// property of maximum spanning trees: every tree edge on a chord's cycle
// weighs at least as much as the chord.
func checkTree(t *testing.T, d *cfg.DAG, n *Numbering, inc *Increments, weights []float64) {
	t.Helper()
	es, live := eventGraph(d, n, weights)
	inGraph := make([]bool, len(d.Edges)+1)
	for _, e := range es {
		inGraph[e.idx] = true
	}
	for i, c := range inc.Class {
		if (c == Dead) == inGraph[i] {
			t.Fatalf("edge %d class %v, on a path: %v", i, c, inGraph[i])
		}
	}
	isTree := func(i int) bool {
		if i == len(d.Edges) {
			return !inc.ExitChord
		}
		return inc.Class[i] == Tree
	}
	nlive := 0
	for _, l := range live {
		if l {
			nlive++
		}
	}
	adj := make([][]uedge, d.NumNodes)
	ntree := 0
	for _, e := range es {
		if isTree(e.idx) {
			ntree++
			adj[e.u] = append(adj[e.u], e)
			adj[e.v] = append(adj[e.v], e)
		}
	}
	if nlive == 0 {
		if ntree != 0 || inc.ExitChord {
			t.Fatalf("no paths but %d tree edges", ntree)
		}
		return
	}
	if ntree != nlive-1 {
		t.Fatalf("%d tree edges for %d live nodes", ntree, nlive)
	}
	// treePath returns the tree edges between a and b (connected and
	// acyclic follow from the count and this succeeding for every node).
	treePath := func(a, b int32) []uedge {
		prev := make([]int, d.NumNodes)
		for i := range prev {
			prev[i] = -2
		}
		prev[a] = -1
		var via = make([]uedge, d.NumNodes)
		queue := []int32{a}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			for _, e := range adj[x] {
				y := e.u
				if y == x {
					y = e.v
				}
				if prev[y] == -2 {
					prev[y] = int(x)
					via[y] = e
					queue = append(queue, y)
				}
			}
		}
		if prev[b] == -2 {
			return nil
		}
		var p []uedge
		for x := b; x != a; x = int32(prev[x]) {
			p = append(p, via[x])
		}
		return p
	}
	for v, l := range live {
		if l && v != cfg.Entry && treePath(cfg.Entry, int32(v)) == nil {
			t.Fatalf("live node %d not spanned", v)
		}
	}
	for _, e := range es {
		if isTree(e.idx) {
			continue
		}
		for _, f := range treePath(e.u, e.v) {
			if f.w < e.w {
				t.Fatalf("chord %d (weight %v) closes a cycle with lighter tree edge %d (%v)", e.idx, e.w, f.idx, f.w)
			}
		}
	}
	// Potentials and increments as defined.
	for _, e := range es {
		if e.idx == len(d.Edges) {
			continue
		}
		diff := inc.Potential[e.u] + n.Val[e.idx] - inc.Potential[e.v]
		if isTree(e.idx) && diff != 0 {
			t.Fatalf("tree edge %d: φ does not follow Val", e.idx)
		}
		if !isTree(e.idx) && diff != inc.Inc[e.idx] {
			t.Fatalf("chord %d: Inc %d, want %d", e.idx, inc.Inc[e.idx], diff)
		}
	}
}

func checkPlan(t *testing.T, d *cfg.DAG, n *Numbering, inc *Increments, plan *Placement, opt PlaceOptions, paths [][]int32, r *rand.Rand) {
	t.Helper()
	if plan.NumPaths != n.Paths() {
		t.Fatalf("plan NumPaths %d, want %d", plan.NumPaths, n.Paths())
	}
	for i, op := range plan.Ops {
		if op.Kind != None && inc.Class[i] == Dead {
			t.Fatalf("dead edge %d has %v", i, op)
		}
		if opt.NoCountFolding && (op.Kind == Count || op.Kind == CountConst) && d.Edges[i].To != cfg.Exit {
			t.Fatalf("count %v on edge %d, not into the exit, without folding", op, i)
		}
	}
	for _, p := range paths {
		id := pathSum(n, p)
		// With ZeroAtEntry a path from the function's entry finds the
		// register 0; one from a dummy entry edge finds garbage.
		zero := opt.ZeroAtEntry && len(p) > 0 && d.Edges[p[0]].Kind != cfg.EdgeDummyEntry
		for range 2 {
			counted, err := simulate(plan.Ops, p, int64(r.Uint64()), zero)
			if err != nil {
				t.Fatalf("path %v: %v\nops %v", p, err, plan.Ops)
			}
			if len(counted) != 1 || counted[0] != id {
				t.Fatalf("path %v (id %d) counted %v\nops %v", p, id, counted, plan.Ops)
			}
		}
		// Folding never costs more probes than the plain placement
		// (r = 0, r += Inc on every chord with a nonzero Inc, count).
		plain, folded := 2, 0
		for _, e := range p {
			if inc.Class[e] == Chord && inc.Inc[e] != 0 {
				plain++
			}
			if plan.Ops[e].Kind != None {
				folded++
			}
		}
		if folded > plain {
			t.Fatalf("path %v runs %d probes, more than the %d of plain placement", p, folded, plain)
		}
	}
	// Probes on Graph edges mirror the DAG operations.
	checkProbes(t, d, plan)
}

// checkProbes checks that the probes on Graph edges are the DAG edges'
// operations, a back edge running its dummy exit edge's before its dummy
// entry edge's.
func checkProbes(t *testing.T, d *cfg.DAG, plan *Placement) {
	t.Helper()
	want := map[int32][]Op{}
	back := map[int32][2]int32{}
	for i, e := range d.Edges {
		switch e.Kind {
		case cfg.EdgeDummyExit, cfg.EdgeDummyEntry:
			k := b2i(e.Kind == cfg.EdgeDummyEntry)
			for _, g := range e.Back {
				b := back[g]
				b[k] = int32(i) + 1
				back[g] = b
			}
		default:
			if plan.Ops[i].Kind != None {
				want[e.Orig] = append(want[e.Orig], plan.Ops[i])
			}
		}
	}
	for g, b := range back {
		for _, e := range b {
			if op := plan.Ops[e-1]; op.Kind != None {
				want[g] = append(want[g], op)
			}
		}
	}
	got := map[int32][]Op{}
	for i, p := range plan.Probes {
		if i > 0 && plan.Probes[i-1].Edge > p.Edge {
			t.Fatalf("probes not sorted: %v", plan.Probes)
		}
		got[p.Edge] = append(got[p.Edge], p.Op)
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("probes %v, want %v", got, want)
	}
}
