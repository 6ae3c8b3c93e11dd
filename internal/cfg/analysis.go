package cfg

// This file analyses a built graph: its back edges and loops, and the DAG
// of its acyclic paths with their count.

import (
	"math/big"
	"math/bits"
	"slices"
)

// findBackEdges marks the edges whose target is on the stack of a
// depth-first search from the entry, visiting out edges in order.
func (g *Graph) findBackEdges() {
	depthFirst(len(g.Blocks),
		func(v int32) []int32 { return g.Blocks[v].Out },
		func(e int32) (int32, bool) { return g.Edges[e].To, true },
		func(e int32) { g.Edges[e].Back = true }, false)
}

// NumBlocks is the number of real blocks (virtual entry and exit excluded).
func (g *Graph) NumBlocks() int { return len(g.Blocks) - 2 }

// Loops returns the loop headers: the distinct targets of back edges.
func (g *Graph) Loops() []int32 {
	var hs []int32
	seen := map[int32]bool{}
	for _, e := range g.Edges {
		if e.Back && !seen[e.To] {
			seen[e.To] = true
			hs = append(hs, e.To)
		}
	}
	return hs
}

// BackEdges returns the indices of the back edges.
func (g *Graph) BackEdges() []int32 {
	var bs []int32
	for i, e := range g.Edges {
		if e.Back {
			bs = append(bs, int32(i))
		}
	}
	return bs
}

// DAG returns the Ball-Larus DAG of g.
func (g *Graph) DAG() *DAG {
	// Every edge that cuts paths gives way to at most two dummy edges:
	// one from the entry, which may have one for each, and one into the
	// exit.
	cuts := 0
	for j := range g.Edges {
		if g.Edges[j].Cuts() {
			cuts++
		}
	}
	d := &DAG{NumNodes: len(g.Blocks), Edges: make([]DAGEdge, 0, len(g.Edges)+cuts)}
	d.Out = make([][]int32, d.NumNodes)
	d.In = make([][]int32, d.NumNodes)
	// One backing array for all edge lists: a slice per node would cost
	// two allocations per block on modules with millions of blocks.
	outs := make([]int32, 0, 2*len(g.Edges)+8+cuts)
	for n := range g.Blocks {
		k := len(g.Blocks[n].Out) + 1
		if n == Entry {
			k += cuts
		}
		d.Out[n] = outs[len(outs) : len(outs) : len(outs)+k]
		outs = outs[:len(outs)+k]
	}
	ins := make([]int32, 0, 2*len(g.Edges)+8+cuts)
	for n := range g.Blocks {
		k := len(g.Blocks[n].In) + 1
		if n == Exit {
			k += cuts
		}
		d.In[n] = ins[len(ins) : len(ins) : len(ins)+k]
		ins = ins[:len(ins)+k]
	}
	add := func(e DAGEdge) int32 {
		i := int32(len(d.Edges))
		d.Edges = append(d.Edges, e)
		d.Out[e.From] = append(d.Out[e.From], i)
		d.In[e.To] = append(d.In[e.To], i)
		return i
	}
	if cuts == 0 {
		for n := range g.Blocks {
			for _, ei := range g.Blocks[n].Out {
				e := &g.Edges[ei]
				add(DAGEdge{From: e.From, To: e.To, Kind: e.Kind, Orig: ei})
			}
		}
		d.Topo = d.TopoOrder()
		return d
	}
	// Per node, its dummy exit edge and its dummy entry edge, or -1.
	dummyOut, dummyIn := make([]int32, d.NumNodes), make([]int32, d.NumNodes)
	for n := range dummyOut {
		dummyOut[n], dummyIn[n] = -1, -1
	}
	// Dummy edges come first in their node's edge list only by order of
	// discovery; numbering does not depend on it.
	for n := range g.Blocks {
		for _, ei := range g.Blocks[n].Out {
			e := &g.Edges[ei]
			if !e.Cuts() {
				add(DAGEdge{From: e.From, To: e.To, Kind: e.Kind, Orig: ei})
				continue
			}
			if i := dummyOut[e.From]; i >= 0 {
				d.Edges[i].Back = append(d.Edges[i].Back, ei)
			} else {
				dummyOut[e.From] = add(DAGEdge{From: e.From, To: Exit, Kind: EdgeDummyExit, Orig: -1, Back: []int32{ei}})
			}
		}
	}
	for j := range g.Edges {
		ei, e := int32(j), &g.Edges[j]
		if !e.Cuts() {
			continue
		}
		if i := dummyIn[e.To]; i >= 0 {
			d.Edges[i].Back = append(d.Edges[i].Back, ei)
		} else {
			dummyIn[e.To] = add(DAGEdge{From: Entry, To: e.To, Kind: EdgeDummyEntry, Orig: -1, Back: []int32{ei}})
		}
	}
	d.Topo = d.TopoOrder()
	return d
}

// NumPaths returns the number of entry-to-exit paths of the DAG, exactly.
func (d *DAG) NumPaths() PathCount {
	n := make([]uint64, d.NumNodes)
	n[Exit] = 1
	overflow := false
	for i := len(d.Topo) - 1; i >= 0 && !overflow; i-- {
		v := d.Topo[i]
		if v == Exit {
			continue
		}
		var s uint64
		for _, e := range d.Out[v] {
			var c uint64
			s, c = bits.Add64(s, n[d.Edges[e].To], 0)
			if c != 0 {
				overflow = true
				break
			}
		}
		n[v] = s
	}
	if !overflow {
		if n[Entry] <= 1<<63-1 {
			return PathCount{Small: n[Entry]}
		}
		return PathCount{Small: n[Entry], Big: new(big.Int).SetUint64(n[Entry])}
	}
	bn := make([]*big.Int, d.NumNodes)
	for i := range bn {
		bn[i] = new(big.Int)
	}
	bn[Exit].SetInt64(1)
	for i := len(d.Topo) - 1; i >= 0; i-- {
		v := d.Topo[i]
		if v == Exit {
			continue
		}
		for _, e := range d.Out[v] {
			bn[v].Add(bn[v], bn[d.Edges[e].To])
		}
	}
	return PathCount{Big: bn[Entry]}
}

// Reached marks the blocks that a path of at least one edge from one of
// the blocks from reaches.
func (g *Graph) Reached(from []int32) []bool {
	seen := make([]bool, len(g.Blocks))
	work := slices.Clone(from)
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		for _, e := range g.Blocks[v].Out {
			if to := g.Edges[e].To; !seen[to] {
				seen[to] = true
				work = append(work, to)
			}
		}
	}
	return seen
}
