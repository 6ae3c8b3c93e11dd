package numbering

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
)

// Precise selective path profiling (PSPP, the P3 paper's §3.1) labels a DAG
// so that one copy of a program counts a chosen subset of the acyclic paths
// exactly, with fewer probes than Ball-Larus needs for all of them.
//
// The interesting paths are the entry-to-exit paths that use only
// interesting edges. A labeling is valid when every interesting path has an
// id that no other path has; uninteresting paths may share ids among
// themselves, since their counts are thrown away.
//
// # Steps
//
// Initial step: Ball-Larus numbering (labels L0, counts N) in reverse
// topological order, each node's uninteresting out edges first and its
// interesting ones in decreasing order of Min(head), where Min(w) is the
// smallest L0-sum of an interesting path from w to the exit. Propagation:
// in topological order, a node v with exactly one in edge i adds i's label
// to all of v's out edges and sets it to 0 (labels L1). Absorption: uninteresting edges get 0
// (labels L2 = Label).
//
// Propagation keeps every path's sum, and interesting paths lose nothing in
// absorption, so an interesting path's id is its L0-sum: Regenerate on the
// initial labels recovers it.
//
// # Where counts land
//
// L0 >= 0, propagation only adds labels to labels and absorption only zeroes
// them, so every label is >= 0 and every path P's final sum lies in
// [0, id0(P)], with id0(P) < N(entry). Counter arrays sized N(entry), the
// function's Ball-Larus path count, therefore take every count of every
// path, interesting or not, and the path register stays in that range on
// every prefix too. A given labeling's largest final sum may be smaller, but
// N(entry) is what the profile reports as the function's path count anyway.
//
// # Why the labeling is valid
//
// Call a node a boundary when it is the entry, the exit, or has other than
// one in edge (counting only edges from reachable nodes, since only those
// carry paths). Propagation makes the label of an edge into a boundary the
// L0-sum of the run of edges since the previous boundary, and every other
// label 0. So cut each path at its boundaries into segments: its final sum
// is the sum of L0 over the segments whose last edge is interesting.
//
// For a node v and a path S from v to the exit, let f_v(S) be that sum with
// v taken as a boundary too (f_entry is the final sum), p0(S) the L0-sum of
// S, and Int(v) the set of p0(T) over the interesting paths T from v. With
// BL's intervals: the paths through out edge e = v->w have p0 in
// [L0(e), L0(e)+N(w)), these intervals are disjoint, and f_v(S) <= p0(S)
// < N(v). The claims below go by induction over the nodes in reverse
// topological order; both are trivial when v has no interesting path, so
// let e1 be v's first interesting out edge whose head has one. Then
// Min(v) = L0(e1) + Min(head(e1)), every edge numbered before e1
// (uninteresting ones, interesting ones into heads without interesting
// paths) has L0(e) + N(w) <= L0(e1) <= Min(v), and, by the decreasing
// order, Min(w) <= Min(head(e1)) <= Min(v) for every interesting
// out edge v->w with an interesting path from w.
//
// Claim A: if the first segment of S from v ends with an uninteresting edge
// (it is dropped), then f_v(S) < Min(v). Let S = e.S' with e = v->w. If w is
// a boundary, the dropped segment is e alone, e is uninteresting, and
// f_v(S) = f_w(S') < N(w) <= L0(e1) <= Min(v). Otherwise the segment goes
// on through w and is also w's first segment, so f_v(S) = f_w(S'); if e is
// interesting and w has interesting paths, f_w(S') < Min(w) <= Min(v) by
// induction; else e is numbered before e1 and f_w(S') < N(w) <= Min(v).
//
// Claim B: if S is uninteresting, f_v(S) is not in Int(v). If e is
// numbered before e1, f_v(S) <= L0(e) + f_w(S') < L0(e) + N(w) <= Min(v),
// below every element of Int(v). Otherwise e is interesting, w has
// interesting paths and S' is uninteresting. If the first segment from v is
// kept (w is a boundary, or the segment through w ends interesting),
// f_v(S) = L0(e) + f_w(S') lies in e's interval, where the only elements of
// Int(v) are L0(e) + Int(w), and f_w(S') is not in Int(w) by induction. If
// it is dropped, f_v(S) < Min(v) by claim A.
//
// Claim B at the entry is validity. Numbering uninteresting edges first is
// what puts them before e1; the decreasing order is needed only for
// Min(w) <= Min(v) in claim A. Without it (the seed's SPP takes interesting
// edges in any order) a dropped segment can move an uninteresting path down
// onto an interesting id.

// Selective is a PSPP labeling of a DAG.
type Selective struct {
	// Interesting marks the DAG edges that lie on some interesting path.
	// It is the given set without the edges no interesting path uses:
	// the interesting paths are the same, and those edges' labels are
	// then absorbed instead of costing probes.
	Interesting []bool
	// Initial is the labeling of the initial step, a Ball-Larus numbering
	// in PSPP's edge order: an interesting path's id is its sum of
	// Initial.Val, and every id a copy counts is below Initial.Paths(),
	// the function's path count.
	Initial *Numbering
	// Min[v] is the smallest id, under Initial, of an interesting path
	// from v to the exit, or -1 when v has none.
	Min []int64
	// Label is the final label of each DAG edge: the sum of Label along an
	// interesting path is its id, and along any other path a value in
	// [0, Initial.Paths()) that is no interesting path's id. Edges on no
	// entry-to-exit path get 0.
	Label []int64
}

// Paths returns the size of the id space, Initial.Paths().
func (s *Selective) Paths() int64 { return s.Initial.Paths() }

// IsInteresting reports whether a DAG path uses only interesting edges.
func (s *Selective) IsInteresting(path []int32) bool {
	for _, e := range path {
		if e < 0 || int(e) >= len(s.Interesting) || !s.Interesting[e] {
			return false
		}
	}
	return true
}

// PSPP labels d for profiling exactly the entry-to-exit paths that use only
// edges marked in interesting (one flag per DAG edge). Like Number, it
// returns an *OverflowError when d has more than MaxPaths paths; Cut first.
// With every edge interesting, Initial is Number(d) and the ids are Ball-
// Larus ids.
func PSPP(d *cfg.DAG, interesting []bool) (*Selective, error) {
	if err := validate(d); err != nil {
		return nil, err
	}
	if len(interesting) != len(d.Edges) {
		return nil, fmt.Errorf("numbering: %d interesting flags for %d edges", len(interesting), len(d.Edges))
	}
	s, err := selective(d, d.OnPaths(interesting), MaxPaths, decreasingMin)
	if oe, ok := err.(*OverflowError); ok {
		oe.Paths = countPaths(d)
	}
	return s, err
}

// noMin stands for +inf while labeling: no interesting path.
const noMin = math.MaxInt64

// A minOrder sorts the interesting out edges of one node, given Min (noMin
// for none) and NumPaths of their heads, which are final.
type minOrder func(d *cfg.DAG, out []int32, min, numPaths []int64)

// decreasingMin is PSPP's order of interesting out edges: heads without
// interesting paths first, then by decreasing Min. Ties go to the head with
// most paths, as in MostPathsFirst, so that increments stay small and an
// all-interesting labeling starts as Number's; then to d.Out's order.
func decreasingMin(d *cfg.DAG, out []int32, min, numPaths []int64) {
	slices.SortStableFunc(out, func(a, b int32) int {
		wa, wb := d.Edges[a].To, d.Edges[b].To
		if c := cmp.Compare(min[wb], min[wa]); c != 0 {
			return c
		}
		return cmp.Compare(numPaths[wb], numPaths[wa])
	})
}

// selective runs the three steps of PSPP on a validated DAG with the given
// interesting set taken as it is, numbering interesting edges in the given
// order (decreasingMin for PSPP; tests pass others to show what goes wrong)
// and failing when a count passes limit.
func selective(d *cfg.DAG, interesting []bool, limit int64, ord minOrder) (*Selective, error) {
	ne := len(d.Edges)
	n := &Numbering{NumPaths: make([]int64, d.NumNodes), Val: make([]int64, ne)}
	s := &Selective{
		Interesting: interesting,
		Initial:     n,
		Min:         make([]int64, d.NumNodes),
		Label:       make([]int64, ne),
	}
	mins := s.Min
	for v := range mins {
		mins[v] = noMin
	}
	n.NumPaths[cfg.Exit] = 1
	mins[cfg.Exit] = 0

	// Initial step. Edges into nodes without paths to the exit carry no
	// path, so where they go changes no id; they go last, as in
	// MostPathsFirst, so that with every edge interesting this is Number.
	var unint, inter, dead []int32
	for i := len(d.Topo) - 1; i >= 0; i-- {
		v := d.Topo[i]
		if v == cfg.Exit {
			continue
		}
		unint, inter, dead = unint[:0], inter[:0], dead[:0]
		for _, e := range d.Out[v] {
			switch {
			case n.NumPaths[d.Edges[e].To] == 0:
				dead = append(dead, e)
			case interesting[e]:
				inter = append(inter, e)
			default:
				unint = append(unint, e)
			}
		}
		MostPathsFirst(d, unint, n.NumPaths)
		k := len(inter)
		ord(d, inter, mins, n.NumPaths)
		if len(inter) != k {
			return nil, fmt.Errorf("numbering: edge order changed the out edges of node %d", v)
		}
		var sum int64
		for _, list := range [3][]int32{unint, inter, dead} {
			for _, e := range list {
				w := d.Edges[e].To
				n.Val[e] = sum
				p := n.NumPaths[w]
				if p > limit-sum {
					return nil, &OverflowError{Node: v, Limit: limit}
				}
				sum += p
				if interesting[e] && mins[w] != noMin {
					mins[v] = min(mins[v], mins[w]+n.Val[e])
				}
			}
		}
		n.NumPaths[v] = sum
	}

	// Propagation. Labels stay in [0, N(entry)]: each is the L0-sum of a
	// run of edges that starts at the entry or a join, which BL's
	// intervals bound, so plain addition cannot overflow.
	reach := d.Reachable()
	label := s.Label
	copy(label, n.Val)
	for _, v := range d.Topo {
		if v == cfg.Entry || v == cfg.Exit {
			continue
		}
		in := int32(-1)
		k := 0
		for _, e := range d.In[v] {
			if reach[d.Edges[e].From] {
				in = e
				k++
			}
		}
		if k != 1 || label[in] == 0 {
			continue
		}
		for _, e := range d.Out[v] {
			label[e] += label[in]
		}
		label[in] = 0
	}

	// Absorption, and edges on no path carry nothing.
	for i, e := range d.Edges {
		if !interesting[i] || !reach[e.From] || n.NumPaths[e.To] == 0 {
			label[i] = 0
		}
	}
	for v, m := range mins {
		if m == noMin {
			mins[v] = -1
		}
	}
	return s, nil
}

// PlaceSelective turns a PSPP labeling into probes with the contract of the
// package doc and the placement of PlaceOptions{NoCountFolding: true}:
// r = Label on the entry's out edges (the real entry edge, and the dummy
// edges where paths restart after back edges), r += Label on other edges
// with a non-zero label, and count[r + Label]++ on the edges into the exit
// (real exit edges, and the dummy ones, run by back edges before the next
// path's r = ...). An interesting path therefore runs one count, with its
// id; any other path runs at most one, with a value in [0, Placement.NumPaths)
// that is no interesting path's id. Placement.NumPaths is the function's path
// count, Initial.Paths().
//
// Uninteresting paths that end on an interesting edge into the exit are
// counted too, because such a path cannot know it is uninteresting before
// its last edge; their counts are to be dropped when the ids are read back
// (InterestingCounts). An edge into the exit that is not interesting ends
// no interesting path, so it counts nothing: in a copy that profiles part
// of a function, the paths leaving by the other copies' exits (a loop's
// other back edges, other returns) cost no count.
func PlaceSelective(d *cfg.DAG, s *Selective) (*Placement, error) {
	if err := matches(d, s); err != nil {
		return nil, err
	}
	return placeSelective(d, s)
}

// PSPPPlaced is PSPP, then PlaceSelectiveInOrder by o, or PlaceSelective
// when o is nil: one check of the DAG for both, as a planner pricing many
// parts of one function calls them.
func PSPPPlaced(d *cfg.DAG, interesting []bool, o *TreeOrder) (*Selective, *Placement, error) {
	s, err := PSPP(d, interesting)
	if err != nil {
		return nil, nil, err
	}
	var plan *Placement
	if o == nil {
		plan, err = placeSelective(d, s)
	} else if len(o.edges) != len(d.Edges)+1 {
		err = errors.New("numbering: tree order does not match the DAG")
	} else {
		plan, err = placeSelectiveInOrder(d, s, o)
	}
	if err != nil {
		return nil, nil, err
	}
	return s, plan, nil
}

// placeSelective is PlaceSelective once d and s are checked.
func placeSelective(d *cfg.DAG, s *Selective) (*Placement, error) {
	ne := len(d.Edges)
	plan := &Placement{NumPaths: s.Paths(), Ops: make([]Op, ne)}
	reach := d.Reachable()
	for i, e := range d.Edges {
		if !reach[e.From] || s.Initial.NumPaths[e.To] == 0 {
			continue // on no path: a run that takes it traps
		}
		c := s.Label[i]
		first, last := e.From == cfg.Entry, e.To == cfg.Exit
		if last && !s.Interesting[i] {
			continue // no interesting path ends here: nothing to count
		}
		switch {
		case first && last:
			plan.Ops[i] = Op{CountConst, c}
		case first:
			plan.Ops[i] = Op{Init, c}
		case last:
			plan.Ops[i] = Op{Count, c}
		case c != 0:
			plan.Ops[i] = Op{Add, c}
		}
	}
	probes, err := graphProbes(d, plan.Ops)
	if err != nil {
		return nil, err
	}
	plan.Probes = probes
	return plan, nil
}

// matches checks d and that s is a labeling of it.
func matches(d *cfg.DAG, s *Selective) error {
	if err := validate(d); err != nil {
		return err
	}
	ne := len(d.Edges)
	if s == nil || s.Initial == nil || len(s.Label) != ne || len(s.Interesting) != ne ||
		len(s.Initial.Val) != ne || len(s.Initial.NumPaths) != d.NumNodes {
		return errors.New("numbering: selective labeling does not match the DAG")
	}
	return nil
}

// RegenerateSelective returns the DAG edges and kind of the path whose id
// under s.Initial is id, and whether it is interesting. A count at an id
// whose path is not interesting was made by uninteresting paths and says
// nothing about the path regenerated from it.
func RegenerateSelective(s *Selective, d *cfg.DAG, id uint64) ([]int32, PathKind, bool, error) {
	if s == nil || s.Initial == nil || d == nil || len(s.Interesting) != len(d.Edges) {
		return nil, 0, false, errors.New("numbering: selective labeling does not match the DAG")
	}
	path, kind, err := Regenerate(s.Initial, d, id)
	if err != nil {
		return nil, 0, false, err
	}
	return path, kind, s.IsInteresting(path), nil
}

// SelectivePath is the count of one interesting path read back from a copy.
type SelectivePath struct {
	ID    uint64
	Edges []int32
	Kind  PathKind
	Count uint64
}

// InterestingCounts keeps, of one function's counters in a copy profiled
// with s (id -> count), the interesting paths, sorted by id, and drops the
// counts of uninteresting ones. These are exact: every run of the path was
// counted at its id and nothing else was. Merging copies is then a union;
// a path that two copies both report has the same count in both. An id
// outside the id space means the counters do not belong to s and is an
// error (wrapping ErrBadID).
func InterestingCounts(s *Selective, d *cfg.DAG, counts map[uint64]uint64) ([]SelectivePath, error) {
	ids := make([]uint64, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []SelectivePath
	for _, id := range ids {
		path, kind, ok, err := RegenerateSelective(s, d, id)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, SelectivePath{ID: id, Edges: path, Kind: kind, Count: counts[id]})
		}
	}
	return out, nil
}

// PlaceSelectiveFreq places the probes of s by measured edge frequencies
// (PlaceSelectiveChords on their ProfileWeights), or where its labels are
// when freq is nil (PlaceSelective).
func PlaceSelectiveFreq(d *cfg.DAG, s *Selective, freq []float64) (*Placement, error) {
	if freq == nil {
		return PlaceSelective(d, s)
	}
	if err := matches(d, s); err != nil {
		return nil, err
	}
	w, err := profileWeights(d, freq)
	if err != nil {
		return nil, err
	}
	o, err := treeOrder(len(d.Edges), w)
	if err != nil {
		return nil, err
	}
	return placeSelectiveInOrder(d, s, o)
}

// PlaceSelectiveChords places the probes of a PSPP labeling like Place
// places Ball-Larus numbering's: increments on the chords of a maximum
// spanning tree of weights (see Chords; ProfileWeights for a profile), not
// on the edges whose labels are not 0, so the edges that run most carry
// none. Chords keeps every path's sum, so interesting paths still count
// their ids and other paths ids no interesting path has. As in
// PlaceSelective, an edge into the exit that no interesting path takes
// counts nothing, counts stay at path ends, and every live dummy entry
// edge starts the next path (so a back edge runs one sequence, count or
// not).
func PlaceSelectiveChords(d *cfg.DAG, s *Selective, weights []float64) (*Placement, error) {
	if err := matches(d, s); err != nil {
		return nil, err
	}
	o, err := treeOrder(len(d.Edges), weights)
	if err != nil {
		return nil, err
	}
	return placeSelectiveInOrder(d, s, o)
}

// PlaceSelectiveInOrder is PlaceSelectiveChords with the edges already
// sorted by their weights.
func PlaceSelectiveInOrder(d *cfg.DAG, s *Selective, o *TreeOrder) (*Placement, error) {
	if err := matches(d, s); err != nil {
		return nil, err
	}
	if o == nil || len(o.edges) != len(d.Edges)+1 {
		return nil, errors.New("numbering: tree order does not match the DAG")
	}
	return placeSelectiveInOrder(d, s, o)
}

// placeSelectiveInOrder is PlaceSelectiveInOrder once d and s are checked.
func placeSelectiveInOrder(d *cfg.DAG, s *Selective, o *TreeOrder) (*Placement, error) {
	labels := &Numbering{Val: s.Label, NumPaths: s.Initial.NumPaths}
	inc := chords(d, labels, o)
	plan, err := placeOpsOf(d, labels, inc, PlaceOptions{NoCountFolding: true})
	if err != nil {
		return nil, err
	}
	for i, e := range d.Edges {
		switch {
		case e.Kind == cfg.EdgeDummyEntry && inc.Class[i] != Dead && plan.Ops[i].Kind == None:
			// Place may leave the next path's start to a later chord;
			// a back edge whose count is dropped below would then run
			// nothing, where PlaceSelective, and the hit counts that
			// model the copies, run one sequence. r = 0 is what r
			// stands for there until that chord sets it.
			plan.Ops[i] = Op{Init, 0}
		case e.To == cfg.Exit && !s.Interesting[i] && (plan.Ops[i].Kind == Count || plan.Ops[i].Kind == CountConst):
			plan.Ops[i] = Op{}
		}
	}
	if plan.Probes, err = graphProbes(d, plan.Ops); err != nil {
		return nil, err
	}
	return plan, nil
}
