package numbering

// This file cuts a DAG whose paths overflow the path register at chosen
// vertices, as back edges cut paths at loop headers.

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
)

// CutResult is a DAG whose paths were split so that their number fits.
//
// Cutting vertex w turns every edge u->w with u != entry into what a back
// edge is: the path ends at u through a dummy edge u->exit and the next path
// begins with a dummy edge entry->w. The dummy edges are shared with those
// of real back edges, and their Back lists name the cut Graph edges next to
// the back edges, so a cut edge is instrumented exactly like a back edge
// ("count[r + a]++; r = b") and regenerated paths that begin or end at one
// have a back kind.
type CutResult struct {
	// DAG is the cut DAG; it is the input itself when nothing was cut.
	DAG *cfg.DAG
	// Vertices are the cut vertices, ascending: where paths now restart.
	Vertices []int32
	// Edges are the input DAG's edges that were cut, ascending.
	Edges []int32
	// EdgeMap gives, per edge of DAG, the input edge it copies (a dummy
	// edge that gained cut edges copies the old dummy), or -1 for a new
	// dummy edge.
	EdgeMap []int32
}

// LoopCutPaths is the most paths a DAG keeps uncut where it is cut to
// MaxPaths, as profiles number paths: one with more is cut at its loop
// headers first, so that a loop's paths are numbered apart from the code
// before the loop. A cut to a lower limit (OSP's segments) only cuts to
// fit. It is the paths a dense counter array holds
// (counters.Options.DenseMax's default), so a function that the header
// cuts bring under it is counted densely rather than hashed.
const LoopCutPaths = 1 << 18

// Cut returns d unchanged when its paths fit in MaxPaths, and otherwise cuts
// it at chosen vertices so that they do.
//
// The choice is greedy, in reverse topological order with a threshold T:
// when the paths from a node would pass T, its successors with most paths
// are cut until at most T/2 remain. Each cut vertex adds its count to the
// entry's, so T starts at MaxPaths and falls (halving, or at once to
// MaxPaths divided by the entry's out-degree) until the entry's count fits
// too. Pieces are therefore as large as the threshold allows, and few
// vertices are cut. The result is deterministic. Cut fails only when even
// cutting every vertex that can be cut leaves too many paths, which takes
// more edges than a function can have.
func Cut(d *cfg.DAG) (*CutResult, error) {
	return CutTo(d, MaxPaths)
}

// CutTo is Cut with at most limit paths (limit >= 2).
func CutTo(d *cfg.DAG, limit int64) (*CutResult, error) {
	if limit < 2 {
		return nil, fmt.Errorf("numbering: cut to %d paths", limit)
	}
	if err := validate(d); err != nil {
		return nil, err
	}
	return cut(d, limit)
}

// cut is CutTo for a validated DAG.
func cut(d *cfg.DAG, limit int64) (*CutResult, error) {
	n, err := number(d, limit, MostPathsFirst)
	r, _, err := cutNumbered(d, limit, n, err)
	return r, err
}

// cutNumbered is cut given number(d, limit, MostPathsFirst)'s result. It
// also returns the numbering of the result's DAG, which is Number's: the
// limit only decides whether numbering fails.
func cutNumbered(d *cfg.DAG, limit int64, n *Numbering, err error) (*CutResult, *Numbering, error) {
	uncut := func() (*CutResult, *Numbering, error) {
		id := make([]int32, len(d.Edges))
		for i := range id {
			id[i] = int32(i)
		}
		return &CutResult{DAG: d, EdgeMap: id}, n, nil
	}
	if err == nil && (n.Paths() <= LoopCutPaths || limit != MaxPaths) {
		return uncut()
	}
	var oe *OverflowError
	if err != nil && !errors.As(err, &oe) {
		return nil, nil, err
	}

	reach := d.Reachable()
	live := d.OnPathNodes()
	cuttable := make([]bool, d.NumNodes)
	for _, e := range d.Edges {
		if e.From != cfg.Entry && reach[e.From] && live[e.To] && e.To != cfg.Exit {
			cuttable[e.To] = true
		}
	}
	// The loop headers first: where a path enters a loop it ends, and
	// the loop's paths start at its header whether a back edge or the
	// code before the loop led there.
	headers := make([]bool, d.NumNodes)
	for _, e := range d.Edges {
		if limit == MaxPaths && e.Kind == cfg.EdgeDummyEntry && cuttable[e.To] {
			headers[e.To] = true
		}
	}
	hr := buildCut(d, reach, headers)
	if err == nil && len(hr.Vertices) == 0 {
		return uncut()
	}
	if hn, err := number(hr.DAG, limit, MostPathsFirst); err == nil {
		return hr, hn, nil
	}

	t := limit
	for {
		r := buildCut(d, reach, greedyCut(d, live, cuttable, headers, uint64(t)))
		if rn, err := number(r.DAG, limit, MostPathsFirst); err == nil {
			return r, rn, nil
		}
		if t == 1 {
			break
		}
		t = max(1, min(t/2, limit/int64(len(r.DAG.Out[cfg.Entry]))))
	}
	r := buildCut(d, reach, cuttable)
	if rn, err := number(r.DAG, limit, MostPathsFirst); err == nil {
		return r, rn, nil
	}
	oe.Paths = countPaths(d)
	return nil, nil, fmt.Errorf("numbering: cannot cut the paths to fit: %w", oe)
}

func sadd(a, b uint64) uint64 {
	s, c := bits.Add64(a, b, 0)
	if c != 0 {
		return math.MaxUint64
	}
	return s
}

// greedyCut picks the vertices to cut for threshold t. Its path counts are
// upper bounds: a vertex cut after some of its predecessors were counted
// only lowers theirs.
func greedyCut(d *cfg.DAG, live, cuttable, pre []bool, t uint64) []bool {
	est := make([]uint64, d.NumNodes)
	clear(est) // written before read (see tempBools)
	est[cfg.Exit] = 1
	cutv := slices.Clone(pre)
	dp, hasDummyExit := tempBools(d.NumNodes)
	defer boolTemps.Put(dp)
	for _, e := range d.Edges {
		if e.Kind == cfg.EdgeDummyExit {
			hasDummyExit[e.From] = true
		}
	}
	type cand struct {
		w     int32
		paths uint64
	}
	var cands []cand
	var suffix []uint64
	tp, tmp := tempInt32s(2 * d.NumNodes)
	defer int32Temps.Put(tp)
	stamp, slot := tmp[:d.NumNodes:d.NumNodes], tmp[d.NumNodes:]
	for i := len(d.Topo) - 1; i >= 0; i-- {
		v := d.Topo[i]
		if v == cfg.Exit {
			continue
		}
		var fixed uint64
		hadCut := false
		cands = cands[:0]
		for _, e := range d.Out[v] {
			w := d.Edges[e].To
			switch {
			case !live[w]:
			case v != cfg.Entry && cutv[w]:
				hadCut = true
			case v != cfg.Entry && cuttable[w]:
				if stamp[w] != v+1 {
					stamp[w] = v + 1
					slot[w] = int32(len(cands))
					cands = append(cands, cand{w, 0})
				}
				c := &cands[slot[w]]
				c.paths = sadd(c.paths, est[w])
			default:
				fixed = sadd(fixed, est[w])
			}
		}
		slices.SortFunc(cands, func(a, b cand) int {
			if c := cmp.Compare(b.paths, a.paths); c != 0 {
				return c
			}
			return cmp.Compare(a.w, b.w)
		})
		suffix = append(suffix[:0], make([]uint64, len(cands)+1)...)
		for j := len(cands) - 1; j >= 0; j-- {
			suffix[j] = sadd(suffix[j+1], cands[j].paths)
		}
		total := func(k int) uint64 {
			s := sadd(fixed, suffix[k])
			if (hadCut || k > 0) && !hasDummyExit[v] {
				s = sadd(s, 1) // the new dummy edge v->exit
			}
			return s
		}
		// Once over t, cut down to t/2 rather than just below t: a node
		// left near t makes each of its predecessors overflow in turn
		// (a chain of diamonds would be cut at every diamond).
		k := 0
		if total(0) > t {
			for k < len(cands) && total(k) > t/2 {
				k++
			}
		}
		for _, c := range cands[:k] {
			cutv[c.w] = true
		}
		est[v] = total(k)
	}
	return cutv
}

// buildCut makes the DAG with every edge u->w, u reachable and not the
// entry, w in cutv, replaced by dummy edges u->exit and entry->w. Its
// lists are sized first: big functions are cut, and growing them was most
// of what cutting allocated.
func buildCut(d *cfg.DAG, reach, cutv []bool) *CutResult {
	nn := d.NumNodes
	isCut := func(e cfg.DAGEdge) bool { return e.From != cfg.Entry && reach[e.From] && cutv[e.To] }
	ncut := 0
	for _, e := range d.Edges {
		if isCut(e) {
			ncut++
		}
	}
	nd := &cfg.DAG{NumNodes: nn, Out: make([][]int32, nn), In: make([][]int32, nn)}
	// At most two dummy edges replace each cut edge.
	nd.Edges = make([]cfg.DAGEdge, 0, len(d.Edges)+ncut)
	r := &CutResult{DAG: nd, EdgeMap: make([]int32, 0, len(d.Edges)+ncut), Edges: make([]int32, 0, ncut)}
	newIdx := make([]int32, len(d.Edges))
	dummyExit := make([]int32, nn)
	dummyEntry := make([]int32, nn)
	for i := range dummyExit {
		dummyExit[i], dummyEntry[i] = -1, -1
	}
	cutTo := make([]bool, nn)
	for i, e := range d.Edges {
		if isCut(e) {
			newIdx[i] = -1
			r.Edges = append(r.Edges, int32(i))
			cutTo[e.To] = true
			continue
		}
		ni := int32(len(nd.Edges))
		newIdx[i] = ni
		switch {
		case e.Kind == cfg.EdgeDummyExit && dummyExit[e.From] < 0:
			dummyExit[e.From] = ni
			e.Back = slices.Clone(e.Back)
		case e.Kind == cfg.EdgeDummyEntry && dummyEntry[e.To] < 0:
			dummyEntry[e.To] = ni
			e.Back = slices.Clone(e.Back)
		}
		nd.Edges = append(nd.Edges, e)
		r.EdgeMap = append(r.EdgeMap, int32(i))
	}
	copied := len(nd.Edges)
	dummy := func(slot []int32, at int32, e cfg.DAGEdge) int32 {
		if slot[at] < 0 {
			slot[at] = int32(len(nd.Edges))
			nd.Edges = append(nd.Edges, e)
			r.EdgeMap = append(r.EdgeMap, -1)
		}
		return slot[at]
	}
	for _, i := range r.Edges {
		e := d.Edges[i]
		gs := e.Back
		if e.Orig >= 0 {
			gs = []int32{e.Orig}
		}
		x := dummy(dummyExit, e.From, cfg.DAGEdge{From: e.From, To: cfg.Exit, Kind: cfg.EdgeDummyExit, Orig: -1})
		nd.Edges[x].Back = append(nd.Edges[x].Back, gs...)
		y := dummy(dummyEntry, e.To, cfg.DAGEdge{From: cfg.Entry, To: e.To, Kind: cfg.EdgeDummyEntry, Orig: -1})
		nd.Edges[y].Back = append(nd.Edges[y].Back, gs...)
	}
	// Each node's lists: its kept edges in d's order, then its new dummy
	// edges in index order, carved from two arrays of one entry an edge.
	nOut, nIn := make([]int32, nn), make([]int32, nn)
	for _, e := range nd.Edges {
		nOut[e.From]++
		nIn[e.To]++
	}
	outs, ins := make([]int32, 0, len(nd.Edges)), make([]int32, 0, len(nd.Edges))
	for v := range nn {
		o := len(outs)
		for _, e := range d.Out[v] {
			if newIdx[e] >= 0 {
				outs = append(outs, newIdx[e])
			}
		}
		nd.Out[v] = outs[o : len(outs) : o+int(nOut[v])]
		o = len(ins)
		for _, e := range d.In[v] {
			if newIdx[e] >= 0 {
				ins = append(ins, newIdx[e])
			}
		}
		nd.In[v] = ins[o : len(ins) : o+int(nIn[v])]
		outs, ins = outs[:len(outs)+int(nOut[v])-len(nd.Out[v])], ins[:len(ins)+int(nIn[v])-len(nd.In[v])]
	}
	for i := copied; i < len(nd.Edges); i++ {
		e := nd.Edges[i]
		nd.Out[e.From] = append(nd.Out[e.From], int32(i))
		nd.In[e.To] = append(nd.In[e.To], int32(i))
	}
	nd.Topo = nd.TopoOrder()
	for v, c := range cutTo {
		if c {
			r.Vertices = append(r.Vertices, int32(v))
		}
	}
	return r
}

// NumberCut numbers g's DAG, cut first to at most limit paths when it has
// more: the numbering a profile's path ids are in, which both the
// instrumenter and the readers that regenerate those ids need. cuts are
// the cut vertices, nil when nothing was cut. The DAG is checked and
// numbered once, and a cut DAG (built here, so not checked again) once
// more.
func NumberCut(g *cfg.Graph, limit int64) (d *cfg.DAG, n *Numbering, cuts []int32, err error) {
	return numberCut(g.DAG(), limit)
}

// numberCut is NumberCut of the DAG d.
func numberCut(d *cfg.DAG, limit int64) (*cfg.DAG, *Numbering, []int32, error) {
	if err := validate(d); err != nil {
		return nil, nil, nil, err
	}
	n, err := number(d, MaxPaths, MostPathsFirst)
	var over *OverflowError
	if err != nil && !errors.As(err, &over) {
		return nil, nil, nil, err
	}
	if err == nil && n.Paths() <= limit && (limit != MaxPaths || n.Paths() <= LoopCutPaths) {
		n.checked = d
		return d, n, nil, nil
	}
	if limit < 2 {
		return nil, nil, nil, fmt.Errorf("numbering: cut to %d paths", limit)
	}
	if limit != MaxPaths {
		n, err = number(d, limit, MostPathsFirst)
	}
	cr, n, err := cutNumbered(d, limit, n, err)
	if err != nil {
		return nil, nil, nil, err
	}
	// A cut DAG is built here from a checked one.
	n.checked = cr.DAG
	return cr.DAG, n, cr.Vertices, nil
}
