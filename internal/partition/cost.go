package partition

// This file prices tasks: the probes, static or weighted by edge
// frequencies, that a copy needs to profile a function's paths on a set of
// edges.

import (
	"fmt"
	"math"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
)

// CostFunc prices a task: the probes a copy needs to profile the paths that
// use only the interesting DAG edges (one flag per edge of d). Make calls it
// for tasks that cover part of a function; once PSPP exists its probe count
// is the cost the P3 paper uses.
type CostFunc func(d *cfg.DAG, interesting []bool) (int, error)

// BallLarusCost is the default CostFunc, exact for what the instrumenter
// places: when interesting covers every edge on an entry-to-exit path (or is
// nil), the Ball-Larus probes (static weights, counts left at path ends);
// for a part of the function, the probes of PSPP on those interesting edges.
func BallLarusCost(d *cfg.DAG, interesting []bool) (int, error) {
	var c coster
	return c.cost(d, nil, interesting)
}

// WeightedCost returns a CostFunc that prices a task by its expected probe
// executions: the sum of w over the DAG edges that carry a probe, where w
// holds one frequency per DAG edge of the function, estimated or measured
// (e.g. from a profile: a dummy edge's frequency is how often its back
// edges run). The probes are placed by the same frequencies, as the
// instrumenter places a copy's when its plan carries them
// (FuncInfo.Freq). The sum is rounded to an integer, so w should be
// counts (per run), not fractions of one call.
func WeightedCost(w []float64) CostFunc {
	return func(d *cfg.DAG, interesting []bool) (int, error) {
		c := coster{w: w}
		return c.cost(d, nil, interesting)
	}
}

// coster prices tasks with the probes the instrumenter places, weighted by
// w when it is set.
type coster struct {
	w []float64
	// What placing probes by w on DAG d needs, kept from one task of a
	// function to the next: its weights for Chords, the edges sorted by
	// them, and d with plain edges (wholeProbes).
	d      *cfg.DAG
	of     []float64 // the w they were made for
	order  *numbering.TreeOrder
	plainD *cfg.DAG
	// static, when set, is the order of the current function's edges by
	// its static weights (Options.StaticOrders), for pricing it without w.
	static *numbering.TreeOrder
}

// prepare makes the weights' tree order and plain DAG of d, unless they
// are those of the last call.
func (c *coster) prepare(d *cfg.DAG) error {
	if c.d == d && c.order != nil && sameSlice(c.of, c.w) {
		return nil
	}
	c.d, c.order = nil, nil
	if c.w == nil && c.static != nil {
		c.order = c.static
	} else {
		w, err := numbering.WeightsFor(d, c.w)
		if err != nil {
			return err
		}
		if c.order, err = numbering.NewTreeOrder(d, w); err != nil {
			return err
		}
	}
	// Place also moves the operations of dummy edges onto the Graph's
	// back edges, and fails when a DAG keeps only one of the two dummy
	// edges of a back edge, as a restricted one may. Only the operation
	// per DAG edge is needed, so every DAG is numbered with plain edges
	// (multiplicity restores the count); the caller's DAG is copied.
	// A dummy entry edge keeps its kind, without the back edges it
	// stands for: a path that starts there sets the register, one from
	// the function's entry finds it 0 (PlaceOptions.ZeroAtEntry).
	plain := *d
	plain.Edges = make([]cfg.DAGEdge, len(d.Edges))
	for i, e := range d.Edges {
		plain.Edges[i] = cfg.DAGEdge{From: e.From, To: e.To, Kind: cfg.EdgeBr, Orig: int32(i)}
		if e.Kind == cfg.EdgeDummyEntry {
			plain.Edges[i].Kind, plain.Edges[i].Orig = cfg.EdgeDummyEntry, -1
		}
	}
	c.d, c.of, c.plainD = d, c.w, &plain
	return nil
}

// sameSlice reports whether a and b are the same slice, not just equal.
func sameSlice(a, b []float64) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) && (a == nil) == (b == nil)
}

// cost prices the task of the interesting edges (nil: all); live is
// Live(d), or nil to compute it.
func (c *coster) cost(d *cfg.DAG, live, interesting []bool) (int, error) {
	if interesting != nil && len(interesting) != len(d.Edges) {
		return 0, fmt.Errorf("partition: %d interesting flags for %d DAG edges", len(interesting), len(d.Edges))
	}
	if c.w != nil && len(c.w) != len(d.Edges) {
		return 0, fmt.Errorf("partition: %d weights for %d DAG edges", len(c.w), len(d.Edges))
	}
	var ops []numbering.Op
	var edges []int32
	var err error
	if interesting == nil {
		ops, err = c.wholeProbes(d)
	} else {
		if live == nil {
			live = Live(d)
		}
		ops, edges, err = c.partProbes(d, live, interesting)
	}
	if err != nil {
		return 0, err
	}
	if c.w == nil {
		n := 0
		for i, op := range ops {
			if op.Kind != numbering.None {
				n += multiplicity(d, edges, i)
			}
		}
		return n, nil
	}
	var s float64
	for i, op := range ops {
		if !seq(d, edges, i, op) {
			continue
		}
		e := i
		if edges != nil {
			e = int(edges[i])
		}
		if w := c.w[e]; w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return 0, fmt.Errorf("partition: weight %v of DAG edge %d", w, e)
		}
		s += c.w[e]
	}
	if s > math.MaxInt32 {
		return math.MaxInt32, nil
	}
	return int(math.Round(s)), nil
}

// seq reports whether the operation of DAG edge i runs a sequence of its
// own, as the instrumenter emits them and counts hits (instrument's
// pathSeqs): weighted costs estimate hits. A back edge runs one sequence,
// the ending path's count, if any, and the next path's initialisation,
// which every live dummy entry edge has. So the dummy exit edge stands for
// that sequence, count or not (a dead one weighs nothing), and the dummy
// entry edge's operation is part of it. Static costs count probes, as the
// P3 paper does.
func seq(d *cfg.DAG, edges []int32, i int, op numbering.Op) bool {
	if edges != nil {
		i = int(edges[i])
	}
	switch d.Edges[i].Kind {
	case cfg.EdgeDummyExit:
		return true
	case cfg.EdgeDummyEntry:
		return false
	}
	return op.Kind != numbering.None
}

// multiplicity is how many Graph-edge probes the operation of DAG edge i
// becomes: a dummy edge's runs on each back (or cut) edge it stands for.
func multiplicity(d *cfg.DAG, edges []int32, i int) int {
	if edges != nil {
		i = int(edges[i])
	}
	if e := d.Edges[i]; e.Orig < 0 {
		return max(len(e.Back), 1)
	}
	return 1
}

// wholeProbes places the probes of the whole DAG, by the weights'
// frequencies when they are set, as the instrumenter does for a function
// whose plan carries them (FuncInfo.Freq).
func (c *coster) wholeProbes(d *cfg.DAG) ([]numbering.Op, error) {
	if err := c.prepare(d); err != nil {
		return nil, err
	}
	n, err := numbering.Number(c.plainD)
	if err != nil {
		return nil, err
	}
	plan, err := numbering.PlaceInOrder(c.plainD, n, c.order, numbering.PlaceOptions{NoCountFolding: true, ZeroAtEntry: true})
	if err != nil {
		return nil, err
	}
	return plan.Ops, nil
}

// partProbes places the probes of d restricted to its live interesting
// edges, or of d when those are all its live edges.
func (c *coster) partProbes(d *cfg.DAG, live, interesting []bool) ([]numbering.Op, []int32, error) {
	whole := true
	for i, l := range live {
		if l && !interesting[i] {
			whole = false
			break
		}
	}
	if whole {
		ops, err := c.wholeProbes(d)
		return ops, nil, err
	}
	// A part is what a copy profiles with PSPP: price exactly the probes
	// its copy gets (PSPP's labels, moved onto chords when weighted).
	var order *numbering.TreeOrder
	if c.w != nil {
		if err := c.prepare(d); err != nil {
			return nil, nil, err
		}
		order = c.order
	}
	_, plan, err := numbering.PSPPPlaced(d, interesting, order)
	if err != nil {
		return nil, nil, err
	}
	return plan.Ops, nil, nil
}
