// Package dagtest builds cfg.DAG values from edge lists for the tests of
// the packages that number and partition DAGs.
package dagtest

import (
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
)

// New fills Out, In and Topo (Kahn's algorithm over the nodes reachable
// from the entry, an order of its own beside TopoOrder's) for an edge list.
func New(nn int, edges []cfg.DAGEdge) *cfg.DAG {
	d := &cfg.DAG{NumNodes: nn, Edges: edges, Out: make([][]int32, nn), In: make([][]int32, nn)}
	for i, e := range edges {
		d.Out[e.From] = append(d.Out[e.From], int32(i))
		d.In[e.To] = append(d.In[e.To], int32(i))
	}
	reach := make([]bool, nn)
	for _, v := range d.TopoOrder() {
		reach[v] = true
	}
	indeg := make([]int, nn)
	for _, e := range edges {
		if reach[e.From] {
			indeg[e.To]++
		}
	}
	queue := []int32{cfg.Entry}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		d.Topo = append(d.Topo, v)
		for _, e := range d.Out[v] {
			w := edges[e].To
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	return d
}

// Paths enumerates the paths from v to the exit, or reports false when
// there are more than limit.
func Paths(d *cfg.DAG, v int32, limit int) ([][]int32, bool) {
	var out [][]int32
	var cur []int32
	var walk func(v int32) bool
	walk = func(v int32) bool {
		if v == cfg.Exit {
			out = append(out, slices.Clone(cur))
			return len(out) <= limit
		}
		for _, e := range d.Out[v] {
			cur = append(cur, e)
			ok := walk(d.Edges[e].To)
			cur = cur[:len(cur)-1]
			if !ok {
				return false
			}
		}
		return true
	}
	ok := walk(v)
	return out, ok
}

// Ranks labels the nodes of a graph of nn nodes by rank: rank 0 is the
// entry, rank nn-1 the exit, and rank i between them node 2+perm[i-1], or
// node i+1 for a nil perm. Edges from lower to higher ranks make a DAG
// whose labels and topological order can differ.
func Ranks(nn int, perm []int) func(rank int) int32 {
	return func(rank int) int32 {
		switch {
		case rank == 0:
			return cfg.Entry
		case rank == nn-1:
			return cfg.Exit
		case perm == nil:
			return int32(rank + 1)
		}
		return int32(2 + perm[rank-1])
	}
}
