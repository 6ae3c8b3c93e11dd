package partition

// This file reduces a DAG (P3 paper §3.2): its live part, with diamonds
// and triangles collapsed repeatedly.

import (
	"math"

	"github.com/pathprof/pathprof/internal/cfg"
)

// Reduced is the reduced DAG of a cfg.DAG (P3 paper §3.2): its live part,
// with parallel edges merged and every diamond and triangle collapsed into
// a dummy vertex, repeatedly, so that nested if/else structures with
// straight-line arms end up as one vertex.
//
// Node ids below the DAG's NumNodes are the DAG's own nodes; dummy i has id
// DAGNodes+i. Nodes that were absorbed, or that lie on no entry-to-exit
// path, have no edges.
type Reduced struct {
	DAGNodes int // NumNodes of the DAG
	NumNodes int // DAGNodes + len(Dummies)
	Edges    []RedEdge
	Out, In  [][]int32 // edge indices per node, ascending
	// Topo lists the live nodes in topological order, entry first. It is
	// empty when the DAG has no entry-to-exit path.
	Topo    []int32
	Dummies []Dummy
	// Owner gives, per DAG edge, the reduced edge standing for it (>= 0),
	// -(i+1) when it lies inside dummy i, or Dead when it lies on no
	// entry-to-exit path.
	Owner []int32

	dag *cfg.DAG
}

// Dead is the Owner of a DAG edge that lies on no entry-to-exit path: no
// probe of any numbering sits on it, so it belongs to no task.
const Dead = math.MinInt32

// RedEdge is an edge of the reduced DAG.
type RedEdge struct {
	From, To int32
	// Orig lists the DAG edges it stands for, ascending: one, or several
	// that became parallel.
	Orig []int32
}

// Dummy is a vertex that replaced a structure of the DAG.
type Dummy struct {
	Node  int32   // its id in the reduced DAG
	Nodes []int32 // the DAG nodes it replaced, ascending
	Edges []int32 // the DAG edges among them, ascending
}

// Live reports, per DAG edge, whether it lies on an entry-to-exit path.
func Live(d *cfg.DAG) []bool {
	reach, co := d.Reachable(), d.OnPathNodes()
	live := make([]bool, len(d.Edges))
	for i, e := range d.Edges {
		live[i] = reach[e.From] && co[e.To]
	}
	return live
}

// reducer holds the reduced graph while structures collapse. Edge ids are
// DAG edge ids throughout: collapsing retargets an edge or merges it into a
// parallel one, and never creates one.
type reducer struct {
	n0, e0        int
	from, to      []int32
	alive         []bool
	out, in       [][]int32 // may hold dead edges; an alive edge in out[v] leaves v
	outdeg, indeg []int32   // alive edges only
	nodeAlive     []bool
	// Union-find parents. Objects are DAG edges [0, e0) and dummies
	// (e0 + creation index): a merged edge points at the edge it merged
	// into, an edge or dummy swallowed by a dummy at that dummy. Nodes
	// point at the dummy that absorbed them.
	obj   []int32
	node  []int32
	mark  []int32 // per node: generation stamp
	markE []int32 // per node: edge recorded with the stamp
	amark []int32 // per node: generation stamp of acnt
	acnt  []int32 // per node: arms ending there
	gen   int32
	armBy []int32 // scratch for try: the ends of a's arms
}

// Reduce builds the reduced DAG of d.
//
// A diamond is a -> b, a -> c, b -> d, c -> d and a triangle a -> b, a -> d,
// b -> d, where the arms b and c have exactly one in and one out edge. All
// arms of one pair (a, d) collapse together with a and d (a switch whose
// straight-line arms meet again is a diamond with more arms), as long as
// there are two arms, or one arm and the edge a -> d. Edges are counted
// after merging parallel ones: paths that differ only in which of two
// parallel edges they take visit the same blocks, and merging keeps them in
// one task.
//
// Two structures are left alone: one that begins at the entry or ends at
// the exit (their dummy would stand for the entry or exit, and prefixes grow
// from the entry), and one where a has an out edge leaving the structure
// while d has an in edge entering it from elsewhere: a path could then go
// from a around to d, and the dummy would lie on a cycle.
func Reduce(d *cfg.DAG) *Reduced {
	live := Live(d)
	n0, e0 := d.NumNodes, len(d.Edges)
	r := &reducer{
		n0: n0, e0: e0,
		from: make([]int32, e0), to: make([]int32, e0), alive: make([]bool, e0),
		out: make([][]int32, n0), in: make([][]int32, n0),
		outdeg: make([]int32, n0), indeg: make([]int32, n0),
		nodeAlive: make([]bool, n0),
		obj:       make([]int32, e0), node: make([]int32, n0),
		mark: make([]int32, n0), markE: make([]int32, n0),
		amark: make([]int32, n0), acnt: make([]int32, n0),
	}
	// Lists in one backing array per direction, sized by the DAG's: a
	// slice per node would cost an allocation per block.
	outs, ins := make([]int32, 0, e0), make([]int32, 0, e0)
	for v := range n0 {
		k := len(d.Out[v])
		r.out[v] = outs[len(outs) : len(outs) : len(outs)+k]
		outs = outs[:len(outs)+k]
		k = len(d.In[v])
		r.in[v] = ins[len(ins) : len(ins) : len(ins)+k]
		ins = ins[:len(ins)+k]
	}
	for i := range r.obj {
		r.obj[i] = int32(i)
	}
	for i := range r.node {
		r.node[i] = int32(i)
	}
	for _, v := range d.Topo {
		r.gen++
		for _, e := range d.Out[v] {
			if !live[e] {
				continue
			}
			w := d.Edges[e].To
			r.nodeAlive[v], r.nodeAlive[w] = true, true
			if r.mark[w] == r.gen {
				r.obj[e] = r.markE[w]
				continue
			}
			r.mark[w], r.markE[w] = r.gen, e
			r.from[e], r.to[e], r.alive[e] = v, w, true
			r.out[v] = append(r.out[v], e)
			r.in[w] = append(r.in[w], e)
			r.outdeg[v]++
			r.indeg[w]++
		}
	}
	for changed := true; changed; {
		changed = false
		order := r.topo()
		// Reverse topological order collapses inner structures before
		// the ones around them, so most nests go in one pass; a pass
		// that changes nothing ends it.
		for i := len(order) - 1; i >= 0; i-- {
			for x := order[i]; x >= 0; {
				x = r.try(x)
				if x >= 0 {
					changed = true
				}
			}
		}
	}
	return r.finish(d, live)
}

// topo returns the alive nodes in topological order.
func (r *reducer) topo() []int32 {
	if !r.nodeAlive[cfg.Entry] {
		return nil
	}
	return cfg.ReversePostorder(len(r.nodeAlive),
		func(v int32) []int32 { return r.out[v] },
		func(e int32) (int32, bool) { return r.to[e], r.alive[e] })
}

// soleOut returns the one alive out edge of a node with out-degree 1.
func (r *reducer) soleOut(v int32) int32 {
	for _, e := range r.out[v] {
		if r.alive[e] {
			return e
		}
	}
	panic("partition: node without alive out edge")
}

// try collapses the first structure that begins at a, in the order of a's
// out edges, and returns the new dummy, or -1.
func (r *reducer) try(a int32) int32 {
	if a == cfg.Entry || !r.nodeAlive[a] || r.outdeg[a] < 2 {
		return -1
	}
	isArm := func(b int32) bool { return r.indeg[b] == 1 && r.outdeg[b] == 1 }
	// Stamp the targets of a's edges that are not arms, so that the edge
	// a -> d of a triangle is found in constant time.
	r.gen++
	for _, e := range r.out[a] {
		if r.alive[e] && !isArm(r.to[e]) {
			r.mark[r.to[e]], r.markE[r.to[e]] = r.gen, e
		}
	}
	ends := r.armBy[:0]
	for _, e := range r.out[a] {
		if r.alive[e] && isArm(r.to[e]) {
			end := r.to[r.soleOut(r.to[e])]
			if r.amark[end] != r.gen {
				r.amark[end], r.acnt[end] = r.gen, 0
				ends = append(ends, end)
			}
			r.acnt[end]++
		}
	}
	r.armBy = ends
	for _, end := range ends {
		arms := r.acnt[end]
		if end == cfg.Exit {
			continue
		}
		direct := int32(-1)
		if r.mark[end] == r.gen {
			direct = r.markE[end]
		}
		inside := arms
		if direct >= 0 {
			inside++
		}
		if inside < 2 {
			continue
		}
		if r.outdeg[a] != inside && r.indeg[end] != inside {
			continue // a path could leave at a and come back at end
		}
		return r.collapse(a, end, direct)
	}
	return -1
}

// collapse replaces a, end and the arms between them by a new dummy.
func (r *reducer) collapse(a, end, direct int32) int32 {
	dn := int32(len(r.nodeAlive))
	dobj := int32(r.e0) + dn - int32(r.n0)
	r.nodeAlive = append(r.nodeAlive, true)
	r.out = append(r.out, nil)
	r.in = append(r.in, nil)
	r.outdeg = append(r.outdeg, 0)
	r.indeg = append(r.indeg, 0)
	r.node = append(r.node, dn)
	r.obj = append(r.obj, dobj)
	r.mark = append(r.mark, 0)
	r.markE = append(r.markE, 0)
	r.amark = append(r.amark, 0)
	r.acnt = append(r.acnt, 0)

	swallowNode := func(x int32) {
		r.nodeAlive[x] = false
		r.node[x] = dn
		if x >= int32(r.n0) {
			r.obj[int32(r.e0)+x-int32(r.n0)] = dobj
		}
	}
	swallowEdge := func(e int32) {
		r.alive[e] = false
		r.obj[e] = dobj
	}
	swallowNode(a)
	swallowNode(end)
	if direct >= 0 {
		swallowEdge(direct)
	}
	for _, e := range r.out[a] {
		if !r.alive[e] {
			continue
		}
		b := r.to[e]
		if r.indeg[b] != 1 || r.outdeg[b] != 1 {
			continue
		}
		if o := r.soleOut(b); r.to[o] == end {
			swallowNode(b)
			swallowEdge(e)
			swallowEdge(o)
		}
	}

	// In edges: a's, and end's from outside (the ones from inside are
	// dead by now), edges from one source merging; then out edges, end's
	// and a's, edges to one target merging.
	r.attach(dn, [2]int32{a, end}, r.in, r.from, r.to, r.outdeg, r.indeg)
	r.attach(dn, [2]int32{end, a}, r.out, r.to, r.from, r.indeg, r.outdeg)
	return dn
}

// attach moves the alive edges of adj[v] (the in or the out lists), for
// each v of vs in turn, onto the dummy dn: far is the end of an edge away
// from dn, near the end that becomes dn, farDeg and dnDeg the degrees on
// each side. An edge whose far end already has one onto dn merges into
// that one.
func (r *reducer) attach(dn int32, vs [2]int32, adj [][]int32, far, near, farDeg, dnDeg []int32) {
	r.gen++
	for _, v := range vs {
		for _, e := range adj[v] {
			if !r.alive[e] {
				continue
			}
			x := far[e]
			if r.mark[x] == r.gen {
				r.alive[e] = false
				r.obj[e] = r.markE[x]
				farDeg[x]--
				continue
			}
			r.mark[x], r.markE[x] = r.gen, e
			near[e] = dn
			adj[dn] = append(adj[dn], e)
			dnDeg[dn]++
		}
	}
}

func find(p []int32, x int32) int32 {
	for p[x] != x {
		p[x] = p[p[x]]
		x = p[x]
	}
	return x
}

// finish renumbers the surviving edges and dummies.
func (r *reducer) finish(d *cfg.DAG, live []bool) *Reduced {
	n := int32(len(r.nodeAlive))
	dummyIdx := make([]int32, n-int32(r.n0)) // creation index -> final index, or -1
	var nd int32
	for j := range dummyIdx {
		dummyIdx[j] = -1
		if r.nodeAlive[int32(r.n0)+int32(j)] {
			dummyIdx[j] = nd
			nd++
		}
	}
	rename := func(v int32) int32 {
		if v < int32(r.n0) {
			return v
		}
		return int32(r.n0) + dummyIdx[v-int32(r.n0)]
	}
	red := &Reduced{
		DAGNodes: r.n0,
		NumNodes: r.n0 + int(nd),
		Dummies:  make([]Dummy, nd),
		Owner:    make([]int32, r.e0),
		dag:      d,
	}
	edgeIdx := make([]int32, r.e0)
	outN := make([]int, red.NumNodes)
	inN := make([]int, red.NumNodes)
	for e := range r.e0 {
		edgeIdx[e] = -1
		if r.alive[e] {
			edgeIdx[e] = int32(len(red.Edges))
			f, t := rename(r.from[e]), rename(r.to[e])
			red.Edges = append(red.Edges, RedEdge{From: f, To: t})
			outN[f]++
			inN[t]++
		}
	}
	red.Out = make([][]int32, red.NumNodes)
	red.In = make([][]int32, red.NumNodes)
	outs, ins := make([]int32, 0, len(red.Edges)), make([]int32, 0, len(red.Edges))
	for v := range red.NumNodes {
		red.Out[v] = outs[len(outs) : len(outs) : len(outs)+outN[v]]
		outs = outs[:len(outs)+outN[v]]
		red.In[v] = ins[len(ins) : len(ins) : len(ins)+inN[v]]
		ins = ins[:len(ins)+inN[v]]
	}
	for i, e := range red.Edges {
		red.Out[e.From] = append(red.Out[e.From], int32(i))
		red.In[e.To] = append(red.In[e.To], int32(i))
	}
	for j := range red.Dummies {
		red.Dummies[j].Node = int32(r.n0) + int32(j)
	}
	for e := range r.e0 {
		if !live[e] {
			red.Owner[e] = Dead
			continue
		}
		root := find(r.obj, int32(e))
		if root < int32(r.e0) {
			i := edgeIdx[root]
			red.Owner[e] = i
			red.Edges[i].Orig = append(red.Edges[i].Orig, int32(e))
			continue
		}
		j := dummyIdx[root-int32(r.e0)]
		red.Owner[e] = -(j + 1)
		red.Dummies[j].Edges = append(red.Dummies[j].Edges, int32(e))
	}
	for v := range int32(r.n0) {
		if root := find(r.node, v); root != v {
			j := dummyIdx[root-int32(r.n0)]
			red.Dummies[j].Nodes = append(red.Dummies[j].Nodes, v)
		}
	}
	for _, v := range r.topo() {
		red.Topo = append(red.Topo, rename(v))
	}
	return red
}
