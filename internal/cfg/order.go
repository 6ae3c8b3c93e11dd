// This file holds the walks other packages share over a DAG and the graphs
// they derive from one: the topological order, the nodes reached from the
// entry and those on entry-to-exit paths, and the edges of a set that lie
// on its entry-to-exit paths.
package cfg

import (
	"slices"
	"sync"
)

// ReversePostorder returns the nodes of a graph of n nodes reachable from
// the entry, in reverse postorder of a depth-first search: a topological
// order when the graph is acyclic. out(v) lists v's out edges in the order
// the search takes them; to(e) is edge e's head, or false for an edge the
// search passes over.
func ReversePostorder(n int, out func(v int32) []int32, to func(e int32) (int32, bool)) []int32 {
	post := depthFirst(n, out, to, nil, true)
	slices.Reverse(post)
	return post
}

// BackEdges calls back with each back edge of a depth-first search from
// the entry of a graph of n nodes (an edge whose head is on the search's
// stack), out and to being as for ReversePostorder. The back edges of a
// reducible graph, as Wasm's control flow is, are the same whatever the
// order of the search.
func BackEdges(n int, out func(v int32) []int32, to func(e int32) (int32, bool), back func(e int32)) {
	depthFirst(n, out, to, back, false)
}

// dfsScratch is depthFirst's scratch, reused from one search to the next.
type dfsScratch struct {
	color []uint8
	stack []dfsItem
}

type dfsItem struct {
	v    int32
	next int
}

var dfsScratches = sync.Pool{New: func() any { return new(dfsScratch) }}

// depthFirst searches a graph of n nodes depth first from the entry, as
// ReversePostorder describes, and returns the nodes in postorder when
// keep is set (nil otherwise). If back is not nil, it is called with each
// edge whose head is on the search's stack: the back edges of the search.
func depthFirst(n int, out func(v int32) []int32, to func(e int32) (int32, bool), back func(e int32), keep bool) []int32 {
	const (
		white = iota
		onStack
		done
	)
	sc := dfsScratches.Get().(*dfsScratch)
	defer dfsScratches.Put(sc)
	color := slices.Grow(sc.color[:0], n)[:n]
	clear(color)
	sc.color = color
	var post []int32
	if keep {
		post = make([]int32, 0, n)
	}
	stack := append(sc.stack[:0], dfsItem{Entry, 0})
	defer func() { sc.stack = stack[:0] }()
	color[Entry] = onStack
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		es := out(top.v)
		if top.next == len(es) {
			color[top.v] = done
			if keep {
				post = append(post, top.v)
			}
			stack = stack[:len(stack)-1]
			continue
		}
		e := es[top.next]
		top.next++
		w, ok := to(e)
		if !ok {
			continue
		}
		switch color[w] {
		case white:
			color[w] = onStack
			stack = append(stack, dfsItem{w, 0})
		case onStack:
			if back != nil {
				back(e)
			}
		}
	}
	return post
}

// TopoOrder returns the nodes reachable from the entry in topological
// order, the reverse postorder of a depth-first search taking out edges in
// d.Out's order. It is what Topo holds; code that builds or rewrites a DAG
// sets Topo with it.
func (d *DAG) TopoOrder() []int32 {
	return ReversePostorder(d.NumNodes,
		func(v int32) []int32 { return d.Out[v] },
		func(e int32) (int32, bool) { return d.Edges[e].To, true })
}

// Reachable reports, per node, whether it is reachable from the entry
// (whether Topo lists it).
func (d *DAG) Reachable() []bool {
	r := make([]bool, d.NumNodes)
	for _, v := range d.Topo {
		r[v] = true
	}
	return r
}

// OnPathNodes reports, per node, whether it lies on an entry-to-exit path:
// it is reachable from the entry and the exit is reachable from it.
func (d *DAG) OnPathNodes() []bool {
	on := make([]bool, d.NumNodes)
	for i := len(d.Topo) - 1; i >= 0; i-- {
		v := d.Topo[i]
		if v == Exit {
			on[v] = true
			continue
		}
		for _, e := range d.Out[v] {
			if on[d.Edges[e].To] {
				on[v] = true
				break
			}
		}
	}
	return on
}

// OnPaths returns which edges of set (indexed by edge) lie on some
// entry-to-exit path made only of edges of set.
func (d *DAG) OnPaths(set []bool) []bool {
	fwd := make([]bool, d.NumNodes)
	fwd[Entry] = true
	for _, v := range d.Topo {
		if fwd[v] {
			for _, e := range d.Out[v] {
				if set[e] {
					fwd[d.Edges[e].To] = true
				}
			}
		}
	}
	bwd := make([]bool, d.NumNodes)
	bwd[Exit] = true
	for i := len(d.Topo) - 1; i >= 0; i-- {
		v := d.Topo[i]
		for _, e := range d.Out[v] {
			if set[e] && bwd[d.Edges[e].To] {
				bwd[v] = true
			}
		}
	}
	on := make([]bool, len(d.Edges))
	for i, e := range d.Edges {
		on[i] = set[i] && fwd[e.From] && bwd[e.To]
	}
	return on
}
