package numbering

// This file numbers a DAG's paths (Ball-Larus): each edge's value, each
// vertex's path count, and the checks that the DAG can be numbered.

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sync"

	"github.com/pathprof/pathprof/internal/cfg"
)

// MaxPaths is the most paths a DAG may have: ids live in a signed i64.
const MaxPaths = math.MaxInt64

// Numbering is the Ball-Larus value assignment of a DAG.
type Numbering struct {
	// NumPaths[v] is the number of paths from v to the exit: 1 for the
	// exit, 0 for nodes that are unreachable from the entry or cannot
	// reach the exit. NumPaths[cfg.Entry] is the number of path ids.
	NumPaths []int64
	// Val[e] is the value of DAG edge e: the sum of Val along an
	// entry-to-exit path is its id. Edges whose source is unreachable get 0.
	Val []int64
	// checked is the DAG that Number or NumberCut checked and numbered:
	// placing probes on that DAG with this numbering does not check it
	// again. A numbered DAG is not changed.
	checked *cfg.DAG
}

// Paths returns the number of entry-to-exit paths, the size of the id space.
func (n *Numbering) Paths() int64 { return n.NumPaths[cfg.Entry] }

// An EdgeOrder sorts out, the out edges of one node, into the order in which
// Number hands out their values. numPaths is final for the heads of those
// edges. It must only permute out.
type EdgeOrder func(d *cfg.DAG, out []int32, numPaths []int64)

// MostPathsFirst is the default EdgeOrder: the edge into the successor with
// most paths gets value 0, so large values go to edges on few paths and the
// increments stay small. Ties keep d.Out's order.
func MostPathsFirst(d *cfg.DAG, out []int32, numPaths []int64) {
	slices.SortStableFunc(out, func(a, b int32) int {
		return cmp.Compare(numPaths[d.Edges[b].To], numPaths[d.Edges[a].To])
	})
}

// OutOrder is the EdgeOrder that keeps d.Out's order.
func OutOrder(*cfg.DAG, []int32, []int64) {}

// OverflowError reports a DAG with more paths than a path register holds.
type OverflowError struct {
	// Node is the first node, in reverse topological order, whose count
	// passed Limit.
	Node  int32
	Limit int64
	// Paths is the exact number of entry-to-exit paths.
	Paths cfg.PathCount
}

func (e *OverflowError) Error() string {
	return fmt.Sprintf("numbering: %s paths, more than %d (first passed at node %d)", e.Paths, e.Limit, e.Node)
}

// Number assigns NumPaths and Val, visiting the nodes in reverse topological
// order and each node's out edges in the given order (MostPathsFirst if
// none). It returns an *OverflowError when the DAG has more than MaxPaths
// paths.
func Number(d *cfg.DAG, order ...EdgeOrder) (*Numbering, error) {
	if len(order) > 1 {
		return nil, errors.New("numbering: more than one edge order")
	}
	ord := EdgeOrder(MostPathsFirst)
	if len(order) == 1 && order[0] != nil {
		ord = order[0]
	}
	if err := validate(d); err != nil {
		return nil, err
	}
	n, err := number(d, MaxPaths, ord)
	if oe, ok := err.(*OverflowError); ok {
		oe.Paths = countPaths(d)
	}
	if err == nil {
		n.checked = d
	}
	return n, err
}

// number is Number for a validated DAG and an arbitrary limit, so that
// cutting can be tested on small graphs. Its *OverflowError leaves Paths
// unset: cutting tries many DAGs and needs no exact count.
func number(d *cfg.DAG, limit int64, ord EdgeOrder) (*Numbering, error) {
	n := &Numbering{NumPaths: make([]int64, d.NumNodes), Val: make([]int64, len(d.Edges))}
	n.NumPaths[cfg.Exit] = 1
	sc := stamps.Get().(*stampScratch)
	defer stamps.Put(sc)
	buf := sc.buf[:0]
	defer func() { sc.buf = buf }()
	// seen stamps an edge with node+1 of the node that last listed it.
	seen := slices.Grow(sc.seen[:0], len(d.Edges))[:len(d.Edges)]
	clear(seen)
	sc.seen = seen
	for i := len(d.Topo) - 1; i >= 0; i-- {
		v := d.Topo[i]
		if v == cfg.Exit {
			continue
		}
		buf = append(buf[:0], d.Out[v]...)
		ord(d, buf, n.NumPaths)
		if len(buf) != len(d.Out[v]) {
			return nil, fmt.Errorf("numbering: edge order changed the out edges of node %d", v)
		}
		var s int64
		for _, e := range buf {
			if e < 0 || int(e) >= len(d.Edges) || d.Edges[e].From != v || seen[e] == v+1 {
				return nil, fmt.Errorf("numbering: edge order changed the out edges of node %d", v)
			}
			seen[e] = v + 1
			n.Val[e] = s
			p := n.NumPaths[d.Edges[e].To]
			if p > limit-s {
				return nil, &OverflowError{Node: v, Limit: limit}
			}
			s += p
		}
		n.NumPaths[v] = s
	}
	return n, nil
}

// stampScratch is number's scratch, reused from one DAG to the next.
type stampScratch struct{ seen, buf []int32 }

var stamps = sync.Pool{New: func() any { return new(stampScratch) }}

// countPaths returns the exact number of entry-to-exit paths.
func countPaths(d *cfg.DAG) cfg.PathCount {
	c := make([]*big.Int, d.NumNodes)
	for i := range c {
		c[i] = new(big.Int)
	}
	c[cfg.Exit].SetInt64(1)
	for i := len(d.Topo) - 1; i >= 0; i-- {
		v := d.Topo[i]
		if v == cfg.Exit {
			continue
		}
		for _, e := range d.Out[v] {
			c[v].Add(c[v], c[d.Edges[e].To])
		}
	}
	if t := c[cfg.Entry]; t.IsInt64() {
		return cfg.PathCount{Small: uint64(t.Int64())}
	}
	return cfg.PathCount{Big: c[cfg.Entry]}
}

// validateNumbered is validate, and a check that n is a numbering of a DAG
// of d's shape.
func validateNumbered(d *cfg.DAG, n *Numbering) error {
	if n == nil || n.checked != d || d == nil {
		if err := validate(d); err != nil {
			return err
		}
	}
	if n == nil || len(n.Val) != len(d.Edges) || len(n.NumPaths) != d.NumNodes {
		return errors.New("numbering: numbering does not match the DAG")
	}
	return nil
}

// validate checks the structure every step relies on, so that a malformed
// DAG gives an error instead of a wrong numbering.
func validate(d *cfg.DAG) error {
	if d == nil {
		return errors.New("numbering: nil DAG")
	}
	nn := d.NumNodes
	if nn < 2 || len(d.Out) != nn || len(d.In) != nn {
		return fmt.Errorf("numbering: DAG with %d nodes and %d/%d edge lists", nn, len(d.Out), len(d.In))
	}
	if len(d.Edges) > math.MaxInt32 {
		return errors.New("numbering: too many edges")
	}
	for i, e := range d.Edges {
		switch {
		case e.From < 0 || int(e.From) >= nn || e.To < 0 || int(e.To) >= nn:
			return fmt.Errorf("numbering: edge %d (%d->%d) out of range", i, e.From, e.To)
		case e.From == e.To:
			return fmt.Errorf("numbering: edge %d is a self loop", i)
		case e.From == cfg.Exit || e.To == cfg.Entry:
			return fmt.Errorf("numbering: edge %d (%d->%d) leaves the exit or enters the entry", i, e.From, e.To)
		}
	}
	outP, out := tempBools(len(d.Edges))
	defer boolTemps.Put(outP)
	inP, in := tempBools(len(d.Edges))
	defer boolTemps.Put(inP)
	check := func(lists [][]int32, mark []bool, end func(cfg.DAGEdge) int32, what string) error {
		for v, l := range lists {
			for _, e := range l {
				if e < 0 || int(e) >= len(d.Edges) || end(d.Edges[e]) != int32(v) || mark[e] {
					return fmt.Errorf("numbering: %s list of node %d has edge %d wrongly", what, v, e)
				}
				mark[e] = true
			}
		}
		for e, ok := range mark {
			if !ok {
				return fmt.Errorf("numbering: edge %d missing from the %s lists", e, what)
			}
		}
		return nil
	}
	if err := check(d.Out, out, func(e cfg.DAGEdge) int32 { return e.From }, "out"); err != nil {
		return err
	}
	if err := check(d.In, in, func(e cfg.DAGEdge) int32 { return e.To }, "in"); err != nil {
		return err
	}
	// Topo must be exactly the nodes reachable from the entry, in an order
	// every edge respects: each listed node other than the entry has an in
	// edge from an earlier one, and every edge from a listed node goes to a
	// later one.
	if len(d.Topo) == 0 || d.Topo[0] != cfg.Entry {
		return errors.New("numbering: Topo does not start at the entry")
	}
	posP, pos := tempInt32s(nn)
	defer int32Temps.Put(posP)
	for i := range pos {
		pos[i] = -1
	}
	for i, v := range d.Topo {
		if v < 0 || int(v) >= nn || pos[v] >= 0 {
			return fmt.Errorf("numbering: Topo has node %d wrongly", v)
		}
		pos[v] = int32(i)
	}
	for i, v := range d.Topo {
		if i > 0 {
			ok := false
			for _, e := range d.In[v] {
				if p := pos[d.Edges[e].From]; p >= 0 && p < int32(i) {
					ok = true
					break
				}
			}
			if !ok {
				return fmt.Errorf("numbering: Topo lists node %d before any predecessor", v)
			}
		}
		for _, e := range d.Out[v] {
			if pos[d.Edges[e].To] <= int32(i) {
				return fmt.Errorf("numbering: edge %d goes against Topo", e)
			}
		}
	}
	return nil
}
