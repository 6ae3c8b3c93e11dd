package numbering

// This file numbers the paths of the reversed DAG, so that the paths ending
// with one edge get contiguous ids.

import (
	"fmt"
	"slices"
	"sync"

	"github.com/pathprof/pathprof/internal/cfg"
)

// Reverse is a Ball-Larus numbering of the reversed DAG: paths are numbered
// from the exit backwards, so the ids of the paths that end with one edge
// into the exit form one contiguous range, as long as the number of paths
// that end there. Ball-Larus's own ids spread such paths over the sums of
// every prefix; contiguous ranges let an instrumenter keep the counts of a
// path end in a few locals picked by a br_table (see package instrument).
//
// A path's reverse id is the sum of Val over its edges, as for Numbering,
// so Chords and Place work with Forward() unchanged.
type Reverse struct {
	d   *cfg.DAG // the forward DAG
	fwd *Numbering
	// rn numbers the reversed DAG: the same edge indices, every edge
	// turned around, Entry and Exit swapped. That DAG is not kept (it was
	// as large as d's edges): regenerating walks d backwards.
	rn   *Numbering
	view *Numbering
}

// NumberReverse numbers d backwards. fwd is d's forward numbering (for the
// path count and for which edges lie on complete paths).
func NumberReverse(d *cfg.DAG, fwd *Numbering) (*Reverse, error) {
	if err := validateNumbered(d, fwd); err != nil {
		return nil, err
	}
	return numberReverse(d, fwd)
}

// PlaceReverse numbers d backwards (NumberReverse) and places the probes
// that count the reverse ids: Chords by WeightsFor(d, freq), then Place
// with opt. It is what an instrumenter runs for every function, with one
// check of the DAG for all the steps. It also returns the edges' order by
// those weights, which a planner pricing the function's probes needs too.
func PlaceReverse(d *cfg.DAG, fwd *Numbering, freq []float64, opt PlaceOptions) (*Reverse, *Placement, *TreeOrder, error) {
	if err := validateNumbered(d, fwd); err != nil {
		return nil, nil, nil, err
	}
	w, err := weightsFor(d, freq)
	if err != nil {
		return nil, nil, nil, err
	}
	r, err := numberReverse(d, fwd)
	if err != nil {
		return nil, nil, nil, err
	}
	o, err := treeOrder(len(d.Edges), w)
	if err != nil {
		return nil, nil, nil, err
	}
	plan, err := placeOpsOf(d, r.view, chords(d, r.view, o), opt)
	if err != nil {
		return nil, nil, nil, err
	}
	if plan.Probes, err = graphProbes(d, plan.Ops); err != nil {
		return nil, nil, nil, err
	}
	return r, plan, o, nil
}

// numberReverse is NumberReverse for a validated DAG and numbering.
func numberReverse(d *cfg.DAG, fwd *Numbering) (*Reverse, error) {
	rd := reversed.Get().(*cfg.DAG)
	defer reversed.Put(rd)
	reverseDAG(d, rd)
	rn, err := number(rd, MaxPaths, MostPathsFirst)
	// The scratch keeps none of d's lists.
	clear(rd.Out)
	clear(rd.In)
	if err != nil {
		return nil, err
	}
	if rn.Paths() != fwd.Paths() {
		return nil, fmt.Errorf("numbering: %d paths backwards, %d forwards", rn.Paths(), fwd.Paths())
	}
	r := &Reverse{d: d, fwd: fwd, rn: rn}
	r.view = &Numbering{NumPaths: fwd.NumPaths, Val: rn.Val}
	return r, nil
}

// swap maps a forward node to its reversed node and back.
func swap(v int32) int32 {
	switch v {
	case cfg.Entry:
		return cfg.Exit
	case cfg.Exit:
		return cfg.Entry
	}
	return v
}

// reversed holds the reversed DAGs numberReverse builds: one is needed
// only while it is numbered, so its lists are reused for the next.
var reversed = sync.Pool{New: func() any { return new(cfg.DAG) }}

// reverseDAG makes rd d with every edge turned around and the entry and
// the exit swapped; edge indices stay. Its lists are d's, and its edges
// have no Back lists (numbering does not read them). Topo is recomputed:
// the reversed DAG reaches the nodes that can reach the forward exit, not
// those the entry reaches.
func reverseDAG(d *cfg.DAG, rd *cfg.DAG) {
	rd.NumNodes = d.NumNodes
	rd.Edges = slices.Grow(rd.Edges[:0], len(d.Edges))[:len(d.Edges)]
	for i, e := range d.Edges {
		rd.Edges[i] = cfg.DAGEdge{From: swap(e.To), To: swap(e.From), Kind: e.Kind, Orig: e.Orig}
	}
	rd.Out = slices.Grow(rd.Out[:0], d.NumNodes)[:d.NumNodes]
	rd.In = slices.Grow(rd.In[:0], d.NumNodes)[:d.NumNodes]
	for v := range d.NumNodes {
		rd.Out[swap(int32(v))] = d.In[v]
		rd.In[swap(int32(v))] = d.Out[v]
	}
	rd.Topo = rd.TopoOrder()
}

// Forward returns the reverse ids as a numbering of the forward DAG:
// NumPaths are the forward counts, Val the reverse values. It is what
// Chords and Place take to make probes that count reverse ids.
func (r *Reverse) Forward() *Numbering { return r.view }

// Range returns the reverse ids of the paths whose last edge is the DAG
// edge x into the exit: [lo, lo+n).
func (r *Reverse) Range(x int32) (lo, n int64) {
	e := r.d.Edges[x]
	if e.To != cfg.Exit {
		return 0, 0
	}
	return r.rn.Val[x], r.rn.NumPaths[swap(e.From)]
}

// Regenerate returns the forward DAG edges of the path with reverse id id,
// and its kind.
func (r *Reverse) Regenerate(id uint64) ([]int32, PathKind, error) {
	edges, err := walkPath(r.rn, r.d, id, true)
	if err != nil {
		return nil, 0, err
	}
	for i, j := 0, len(edges)-1; i < j; i, j = i+1, j-1 {
		edges[i], edges[j] = edges[j], edges[i]
	}
	return edges, KindOf(r.d, edges), nil
}

// BallLarus returns the Ball-Larus id (of the forward numbering) of the path
// with reverse id id, with its edges and kind.
func (r *Reverse) BallLarus(id uint64) (uint64, []int32, PathKind, error) {
	edges, kind, err := r.Regenerate(id)
	if err != nil {
		return 0, nil, 0, err
	}
	var bl int64
	for _, e := range edges {
		bl += r.fwd.Val[e]
	}
	return uint64(bl), edges, kind, nil
}

// Between returns the reverse ids, ascending, of the paths that start with
// DAG edge y out of the entry and end with DAG edge x into the exit, or
// false when there are more than max. Started at a loop header's dummy
// entry edge and ended at one of the loop's back edges, these are the
// loop's iteration paths: few even where every path ending at x is one of
// millions, since the others differ in what ran before the loop.
func (r *Reverse) Between(y, x int32, max int) ([]int64, bool) {
	d := r.d
	if d.Edges[y].From != cfg.Entry || d.Edges[x].To != cfg.Exit {
		return nil, true
	}
	if y == x {
		return []int64{r.rn.Val[x]}, max >= 1
	}
	// reach marks the nodes from which x's source can be reached, so that
	// the search below follows no edge that leads nowhere.
	end := d.Edges[x].From
	reach := make([]bool, d.NumNodes)
	reach[end] = true
	work := []int32{end}
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		for _, e := range d.In[v] {
			if u := d.Edges[e].From; !reach[u] {
				reach[u] = true
				work = append(work, u)
			}
		}
	}
	start := d.Edges[y].To
	if !reach[start] {
		return nil, true
	}
	var ids []int64
	var walk func(v int32, sum int64) bool
	walk = func(v int32, sum int64) bool {
		if v == end {
			if len(ids) == max {
				return false
			}
			ids = append(ids, sum+r.rn.Val[x])
			return true
		}
		for _, e := range d.Out[v] {
			if to := d.Edges[e].To; to != cfg.Exit && reach[to] && !walk(to, sum+r.rn.Val[e]) {
				return false
			}
		}
		return true
	}
	if !walk(start, r.rn.Val[y]) {
		return nil, false
	}
	slices.Sort(ids)
	return ids, true
}
