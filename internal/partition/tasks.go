package partition

// This file cuts a function into tasks: the prefixes of the reduced DAG,
// by weight or count, and the classes of paths they start.

import (
	"container/heap"
	"math"

	"github.com/pathprof/pathprof/internal/cfg"
)

// Tau is the P3 paper's bound on the number of tasks of a function: the
// out-degree of the DAG's entry or the number of copies, whichever is more.
func Tau(d *cfg.DAG, k int) int {
	return max(len(d.Out[cfg.Entry]), k)
}

// Classes splits the entry-to-exit paths of d into at most tau classes and
// returns, per class, its DAG edges (the interesting edges of the copy that
// profiles it). There is always at least one class; a DAG without any path
// has one class with no edges.
//
// Prefixes grow on the reduced DAG from the empty prefix at the entry, in
// topological order of their last vertex: a prefix whose last vertex has one
// out edge takes it, one whose last vertex branches is replaced by one prefix
// per out edge as long as there are then at most tau prefixes, and a prefix
// that could only branch past tau, or that reached the exit, stops. The class
// of a prefix p ending at v is the edges of p, every reduced edge reachable
// from v, and the DAG edges inside every dummy vertex those edges touch.
//
// The classes partition the paths: every DAG path uses only the edges of
// exactly one class. Proof. (1) At every step each reduced path starts with
// exactly one prefix: it holds for the empty prefix, taking the only out edge
// keeps it, and the paths starting with p split by their next edge. (2) The
// reduced paths that use only edges of class(p) are those that start with p:
// such a path starts at the entry and, while it is at a vertex u of p other
// than v, its next edge is in p or leaves a vertex reachable from v; u comes
// before v in a DAG, so it is not reachable from v, and the edge is p's edge
// out of u. So the path follows p to v, and every path that starts with p
// continues with edges reachable from v. (3) Every DAG edge on some path is
// owned by exactly one reduced edge or dummy (Reduced.Owner). A DAG path P
// maps to the reduced path P' that replaces each run inside a dummy by the
// dummy; P' is a path because collapsing never makes a cycle. If P' uses only
// class edges, P's edges are owned by those edges or by dummies P' passes
// through, which touch them; conversely if P's edges are all in the class,
// the reduced edge owning each is a class edge, so P' uses only class edges.
// Hence P is interesting in exactly the class of the prefix P' starts with.
// Pruning removes only edges that no such P uses.
// TestClassesPartitionPaths checks this by enumeration on random DAGs.
func Classes(d *cfg.DAG, tau int) [][]bool {
	return Reduce(d).Classes(tau)
}

// prefix is a node of the tree of prefixes: its last edge and the prefix
// it extends.
type prefix struct {
	edge, parent, end int32
}

type prefixHeap struct {
	ps  []prefix
	pos []int32 // topological position per reduced node
	idx []int32
	// w, when set, is a frequency per reduced edge: the prefix whose last
	// edge ran most grows first, so that the threshold is spent where the
	// executions are rather than near the entry.
	w []float64
}

func (h *prefixHeap) Len() int { return len(h.idx) }
func (h *prefixHeap) Less(i, j int) bool {
	a, b := h.idx[i], h.idx[j]
	if h.w != nil {
		if wa, wb := h.weight(a), h.weight(b); wa != wb {
			return wa > wb
		}
	}
	if pa, pb := h.pos[h.ps[a].end], h.pos[h.ps[b].end]; pa != pb {
		return pa < pb
	}
	return a < b
}

func (h *prefixHeap) weight(p int32) float64 {
	if e := h.ps[p].edge; e >= 0 {
		return h.w[e]
	}
	return math.Inf(1)
}
func (h *prefixHeap) Swap(i, j int) { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *prefixHeap) Push(x any)    { h.idx = append(h.idx, x.(int32)) }
func (h *prefixHeap) Pop() any {
	x := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return x
}

// Prefixes grows the prefixes of the reduced DAG for threshold tau (see
// Classes) and returns them as lists of reduced edges, in the order they
// stopped. A DAG without paths has none.
func (r *Reduced) Prefixes(tau int) [][]int32 { return r.prefixes(tau, nil) }

// WeightedPrefixes is Prefixes growing the most frequent prefix first; w
// holds a frequency per DAG edge (a reduced edge weighs as much as the
// most frequent DAG edge it stands for).
func (r *Reduced) WeightedPrefixes(tau int, w []float64) [][]int32 {
	rw := make([]float64, len(r.Edges))
	for i, e := range r.Edges {
		for _, o := range e.Orig {
			rw[i] = max(rw[i], w[o])
		}
	}
	return r.prefixes(tau, rw)
}

func (r *Reduced) prefixes(tau int, w []float64) [][]int32 {
	if len(r.Topo) == 0 {
		return nil
	}
	h := &prefixHeap{pos: make([]int32, r.NumNodes), w: w}
	for i, v := range r.Topo {
		h.pos[v] = int32(i)
	}
	h.ps = append(h.ps, prefix{edge: -1, parent: -1, end: cfg.Entry})
	h.idx = append(h.idx, 0)
	count := 1
	var done []int32
	for h.Len() > 0 {
		p := heap.Pop(h).(int32)
		v := h.ps[p].end
		out := r.Out[v]
		switch {
		case v == cfg.Exit || len(out) > 1 && count-1+len(out) > tau:
			done = append(done, p)
		case len(out) == 1:
			h.ps = append(h.ps, prefix{edge: out[0], parent: p, end: r.Edges[out[0]].To})
			heap.Push(h, int32(len(h.ps)-1))
		default:
			count += len(out) - 1
			for _, e := range out {
				h.ps = append(h.ps, prefix{edge: e, parent: p, end: r.Edges[e].To})
				heap.Push(h, int32(len(h.ps)-1))
			}
		}
	}
	res := make([][]int32, len(done))
	for i, p := range done {
		var es []int32
		for q := p; h.ps[q].edge >= 0; q = h.ps[q].parent {
			es = append(es, h.ps[q].edge)
		}
		for a, b := 0, len(es)-1; a < b; a, b = a+1, b-1 {
			es[a], es[b] = es[b], es[a]
		}
		res[i] = es
	}
	return res
}

// Classes is the package-level Classes on an already reduced DAG.
func (r *Reduced) Classes(tau int) [][]bool { return r.classes(r.Prefixes(tau)) }

// WeightedClasses is Classes with the prefixes of WeightedPrefixes: the
// same properties (any set of stopped prefixes partitions the paths), with
// the threshold spent on the most frequent branches.
func (r *Reduced) WeightedClasses(tau int, w []float64) [][]bool {
	return r.classes(r.WeightedPrefixes(tau, w))
}

func (r *Reduced) classes(prefixes [][]int32) [][]bool {
	ne := len(r.Owner)
	if len(prefixes) == 0 {
		return [][]bool{make([]bool, ne)}
	}
	inEdge := make([]int32, len(r.Edges)) // stamp: class index + 1
	inNode := make([]int32, r.NumNodes)
	var stack []int32
	classes := make([][]bool, len(prefixes))
	for ci, pre := range prefixes {
		stamp := int32(ci + 1)
		end := int32(cfg.Entry)
		for _, e := range pre {
			inEdge[e] = stamp
			inNode[r.Edges[e].From] = stamp
			end = r.Edges[e].To
		}
		inNode[end] = stamp
		stack = append(stack[:0], end)
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, e := range r.Out[v] {
				inEdge[e] = stamp
				if w := r.Edges[e].To; inNode[w] != stamp {
					inNode[w] = stamp
					stack = append(stack, w)
				}
			}
		}
		c := make([]bool, ne)
		for i, o := range r.Owner {
			switch {
			case o == Dead:
			case o >= 0:
				c[i] = inEdge[o] == stamp
			default:
				c[i] = inNode[r.Dummies[-o-1].Node] == stamp
			}
		}
		// Drop the edges that lie on none of the class's paths: the inside
		// of a dummy that the class only enters through its end vertex,
		// and its in edges from outside. The class keeps the same paths,
		// and a copy given several classes is less likely to be given
		// edges of others too.
		classes[ci] = r.dag.OnPaths(c)
	}
	return classes
}
