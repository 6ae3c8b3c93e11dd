package numbering

// This file places the increments on the chords of a maximum spanning tree
// (event counting), and holds the edge weights that choose the tree.

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/pathprof/pathprof/internal/cfg"
)

// EdgeClass is the role of a DAG edge in event counting.
type EdgeClass uint8

const (
	// Dead edges lie on no entry-to-exit path (unreachable source, or a
	// head that cannot reach the exit); they are left out of the spanning
	// tree and never instrumented.
	Dead EdgeClass = iota
	Tree
	Chord
)

func (c EdgeClass) String() string {
	switch c {
	case Dead:
		return "dead"
	case Tree:
		return "tree"
	case Chord:
		return "chord"
	}
	return "class?"
}

// Increments is the result of event counting: the sum of Inc over the
// chords of an entry-to-exit path, plus ExitInc, equals the path's id.
type Increments struct {
	Class []EdgeClass // per DAG edge
	Inc   []int64     // per DAG edge; 0 for tree and dead edges
	// Potential is φ per node: φ(entry) = 0 and φ(v) = φ(u) + Val(u->v)
	// along tree edges. Only nodes on some entry-to-exit path have one.
	Potential []int64
	// ExitChord says whether the extra edge exit->entry is a chord;
	// ExitInc is then its increment, added where each path is counted.
	ExitChord bool
	ExitInc   int64
}

// Chords chooses a maximum-weight spanning tree of the live part of d plus
// the edge exit->entry, taken as undirected, and gives every chord its
// increment Inc(u->v) = φ(u) + Val(u->v) - φ(v). The increments are
// computed with wrapping i64 arithmetic, which preserves the path sums.
//
// weights holds one weight per DAG edge (an expected frequency: higher keeps
// the edge free of probes), optionally followed by the weight of exit->entry.
// nil means all DAG edges weigh the same. exit->entry defaults to +Inf: it is
// taken at the end of every path, so no edge is more frequent. Ties go to the
// lower edge index, exit->entry counting as index len(d.Edges).
func Chords(d *cfg.DAG, n *Numbering, weights []float64) (*Increments, error) {
	if err := validateNumbered(d, n); err != nil {
		return nil, err
	}
	o, err := treeOrder(len(d.Edges), weights)
	if err != nil {
		return nil, err
	}
	return chords(d, n, o), nil
}

// TreeOrder is the order in which Chords takes a DAG's edges into its
// spanning tree: by decreasing weight, ties to the lower index, exit->entry
// as index len(d.Edges). It depends on the weights alone, so a caller that
// places many labelings of one DAG by the same weights sorts the edges once
// (ChordsInOrder, PlaceSelectiveInOrder).
type TreeOrder struct {
	edges []int32 // every DAG edge and len(d.Edges), in order
	mu    sync.Mutex
	last  *keptTree
}

// NewTreeOrder sorts d's edges for Chords by weights (see Chords).
func NewTreeOrder(d *cfg.DAG, weights []float64) (*TreeOrder, error) {
	if d == nil {
		return nil, errors.New("numbering: nil DAG")
	}
	return treeOrder(len(d.Edges), weights)
}

func treeOrder(ne int, weights []float64) (*TreeOrder, error) {
	if weights != nil && len(weights) != ne && len(weights) != ne+1 {
		return nil, fmt.Errorf("numbering: %d weights for %d edges", len(weights), ne)
	}
	for i, w := range weights {
		if math.IsNaN(w) {
			return nil, fmt.Errorf("numbering: weight %d is NaN", i)
		}
	}
	o := &TreeOrder{edges: make([]int32, ne+1)}
	if len(weights) < ne {
		// Every DAG edge weighs 1 and exit->entry +Inf: it comes first,
		// then the edges by index.
		o.edges[0] = int32(ne)
		for i := range ne {
			o.edges[i+1] = int32(i)
		}
		return o, nil
	}
	type keyed struct {
		w float64
		e int32
	}
	ks := make([]keyed, ne+1)
	for i := range ne {
		ks[i] = keyed{weights[i], int32(i)}
	}
	ks[ne] = keyed{math.Inf(1), int32(ne)}
	if len(weights) > ne {
		ks[ne].w = weights[ne]
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		switch {
		case a.w > b.w:
			return -1
		case a.w < b.w:
			return 1
		}
		return cmp.Compare(a.e, b.e)
	})
	for i, k := range ks {
		o.edges[i] = k.e
	}
	return o, nil
}

// ChordsInOrder is Chords with the edges already sorted by their weights.
func ChordsInOrder(d *cfg.DAG, n *Numbering, o *TreeOrder) (*Increments, error) {
	if err := validateNumbered(d, n); err != nil {
		return nil, err
	}
	if o == nil || len(o.edges) != len(d.Edges)+1 {
		return nil, errors.New("numbering: tree order does not match the DAG")
	}
	return chords(d, n, o), nil
}

// chords is Chords for a validated DAG and numbering.
func chords(d *cfg.DAG, n *Numbering, o *TreeOrder) *Increments {
	ne := len(d.Edges)
	if n.Paths() == 0 {
		return &Increments{Class: make([]EdgeClass, ne), Inc: make([]int64, ne), Potential: make([]int64, d.NumNodes)}
	}
	return o.tree(d, n).increments(d, n)
}

// spanTree is the spanning tree Chords chooses: each edge's class,
// whether exit->entry is a chord, and the tree's adjacency in compressed
// form (the tree edges at node x are adj[deg[x]:deg[x+1]]).
type spanTree struct {
	class     []EdgeClass
	exitChord bool
	deg, adj  []int32
}

// tree returns the spanning tree of d's live edges in o's order. It
// depends on d, o and which nodes have paths to the exit, not on the
// edge values: every labeling of a DAG that PSPP makes, and its
// Ball-Larus numbering, have the same path counts. So the last tree is
// kept, and serves the next call that has the same.
func (o *TreeOrder) tree(d *cfg.DAG, n *Numbering) *spanTree {
	o.mu.Lock()
	k := o.last
	o.mu.Unlock()
	if k != nil && k.d == d && len(k.live) == len(n.NumPaths) {
		same := true
		for v, p := range n.NumPaths {
			if k.live[v] != (p > 0) {
				same = false
				break
			}
		}
		if same {
			return k.t
		}
	}
	k = &keptTree{d: d, live: make([]bool, len(n.NumPaths)), t: kruskal(d, n, o)}
	for v, p := range n.NumPaths {
		k.live[v] = p > 0
	}
	o.mu.Lock()
	o.last = k
	o.mu.Unlock()
	return k.t
}

// keptTree is a spanning tree with what it was chosen for.
type keptTree struct {
	d    *cfg.DAG
	live []bool // per node: has paths to the exit
	t    *spanTree
}

// kruskal chooses the tree: Kruskal's algorithm with union by size and
// path halving over the live edges and exit->entry, in o's order.
func kruskal(d *cfg.DAG, n *Numbering, o *TreeOrder) *spanTree {
	ne := len(d.Edges)
	t := &spanTree{class: make([]EdgeClass, ne)}
	reach := d.Reachable()
	cand := make([]int32, 0, ne+1)
	for _, e := range o.edges {
		if int(e) == ne || reach[d.Edges[e].From] && n.NumPaths[d.Edges[e].To] > 0 {
			cand = append(cand, e)
		}
	}
	parent := make([]int32, d.NumNodes)
	size := make([]int32, d.NumNodes)
	for i := range parent {
		parent[i] = int32(i)
		size[i] = 1
	}
	find := func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	ends := func(e int32) (int32, int32) {
		if int(e) == ne {
			return cfg.Exit, cfg.Entry
		}
		return d.Edges[e].From, d.Edges[e].To
	}
	t.deg = make([]int32, d.NumNodes+1)
	var tree []int32
	for _, e := range cand {
		u, v := ends(e)
		ru, rv := find(u), find(v)
		if ru == rv {
			if int(e) == ne {
				t.exitChord = true
			} else {
				t.class[e] = Chord
			}
			continue
		}
		if size[ru] < size[rv] {
			ru, rv = rv, ru
		}
		parent[rv] = ru
		size[ru] += size[rv]
		if int(e) < ne {
			t.class[e] = Tree
		}
		tree = append(tree, e)
		t.deg[u+1]++
		t.deg[v+1]++
	}
	for i := 1; i < len(t.deg); i++ {
		t.deg[i] += t.deg[i-1]
	}
	t.adj = make([]int32, 2*len(tree))
	fill := slices.Clone(t.deg[:d.NumNodes])
	for _, e := range tree {
		u, v := ends(e)
		t.adj[fill[u]] = e
		fill[u]++
		t.adj[fill[v]] = e
		fill[v]++
	}
	return t
}

// increments walks the tree from the entry for the potentials, then
// gives each chord its increment.
func (t *spanTree) increments(d *cfg.DAG, n *Numbering) *Increments {
	ne := len(d.Edges)
	inc := &Increments{
		Class:     slices.Clone(t.class),
		Inc:       make([]int64, ne),
		Potential: make([]int64, d.NumNodes),
		ExitChord: t.exitChord,
	}
	clear(inc.Potential) // written before read (see tempBools)
	ends := func(e int32) (int32, int32, int64) {
		if int(e) == ne {
			return cfg.Exit, cfg.Entry, 0
		}
		return d.Edges[e].From, d.Edges[e].To, n.Val[e]
	}
	doneP, done := tempBools(d.NumNodes)
	defer boolTemps.Put(doneP)
	done[cfg.Entry] = true
	stack := []int32{cfg.Entry}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range t.adj[t.deg[x]:t.deg[x+1]] {
			u, v, val := ends(e)
			switch {
			case u == x && !done[v]:
				inc.Potential[v] = inc.Potential[u] + val
				done[v] = true
				stack = append(stack, v)
			case v == x && !done[u]:
				inc.Potential[u] = inc.Potential[v] - val
				done[u] = true
				stack = append(stack, u)
			}
		}
	}
	for i, c := range inc.Class {
		if c == Chord {
			e := d.Edges[i]
			inc.Inc[i] = inc.Potential[e.From] + n.Val[i] - inc.Potential[e.To]
		}
	}
	if inc.ExitChord {
		inc.ExitInc = inc.Potential[cfg.Exit] - inc.Potential[cfg.Entry]
	}
	return inc
}

// loopTrips is how many iterations StaticWeights assumes of every loop.
const loopTrips = 8

// StaticWeights estimates edge frequencies without a profile, for Chords:
// one call enters at the entry, every branch splits its flow evenly over the
// out edges that can reach the exit, and each loop header (the head of a
// dummy entry edge) runs loopTrips times per entry from outside, the extra
// runs flowing in through its dummy edge. Nested loops multiply. Dead edges
// get 0. The result has one weight per DAG edge.
func StaticWeights(d *cfg.DAG) ([]float64, error) {
	if err := validate(d); err != nil {
		return nil, err
	}
	return staticWeights(d), nil
}

// staticWeights is StaticWeights for a validated DAG.
func staticWeights(d *cfg.DAG) []float64 {
	live := d.OnPathNodes()
	w := make([]float64, len(d.Edges))
	isDummyIn := func(e int32) bool {
		return d.Edges[e].From == cfg.Entry && d.Edges[e].Kind == cfg.EdgeDummyEntry
	}
	for _, v := range d.Topo {
		if !live[v] {
			continue
		}
		var total float64
		if v == cfg.Entry {
			total = 1
		} else {
			var regular float64
			var dummies []int32
			for _, e := range d.In[v] {
				if isDummyIn(e) {
					dummies = append(dummies, e)
				} else {
					regular += w[e]
				}
			}
			total = regular
			if len(dummies) > 0 {
				extra := (loopTrips - 1) * regular
				if regular == 0 {
					extra = 1 // entered only through back edges or cuts
				}
				for _, e := range dummies {
					w[e] = extra / float64(len(dummies))
				}
				total += extra
			}
		}
		var k int
		for _, e := range d.Out[v] {
			if live[d.Edges[e].To] && !isDummyIn(e) {
				k++
			}
		}
		for _, e := range d.Out[v] {
			if live[d.Edges[e].To] && !isDummyIn(e) {
				w[e] = total / float64(k)
			}
		}
	}
	return w
}

// WeightsFor is ProfileWeights(d, freq) when freq is set, else
// StaticWeights(d): the weights a function's probes are placed by.
func WeightsFor(d *cfg.DAG, freq []float64) ([]float64, error) {
	if err := validate(d); err != nil {
		return nil, err
	}
	return weightsFor(d, freq)
}

// weightsFor is WeightsFor for a validated DAG.
func weightsFor(d *cfg.DAG, freq []float64) ([]float64, error) {
	if freq != nil {
		return profileWeights(d, freq)
	}
	return staticWeights(d), nil
}

// ProfileWeights turns measured edge frequencies (one per DAG edge, e.g.
// from a profile of an earlier run: counts, whole numbers, which the
// tie-break below assumes) into weights for Chords: the chords,
// which carry the increments, go on the edges that ran least, so the paths
// that ran most execute the fewest probes. Edges that ran equally often
// are told apart by StaticWeights, so that among edges that never ran the
// ones likelier to run on another input stay free of probes too.
func ProfileWeights(d *cfg.DAG, freq []float64) ([]float64, error) {
	if d != nil && len(freq) != len(d.Edges) {
		return nil, fmt.Errorf("numbering: %d frequencies for %d edges", len(freq), len(d.Edges))
	}
	if err := validate(d); err != nil {
		return nil, err
	}
	return profileWeights(d, freq)
}

// profileWeights is ProfileWeights for a validated DAG.
func profileWeights(d *cfg.DAG, freq []float64) ([]float64, error) {
	if len(freq) != len(d.Edges) {
		return nil, fmt.Errorf("numbering: %d frequencies for %d edges", len(freq), len(d.Edges))
	}
	static := staticWeights(d)
	// The static estimate is scaled below 1, the least difference of two
	// counts: it only breaks ties.
	var most float64
	for _, s := range static {
		most = max(most, s)
	}
	w := make([]float64, len(freq))
	for i, f := range freq {
		if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("numbering: frequency %v of edge %d", f, i)
		}
		w[i] = f
		if e := d.Edges[i]; e.From == cfg.Entry || e.To == cfg.Exit {
			// An increment here joins the sequence that starts or
			// ends the path (r = a, count[r + a]++): it costs no
			// probe of its own, so these edges are the best chords.
			w[i] = 0
		}
		if most > 0 {
			w[i] += static[i] / (2 * most)
		}
	}
	return w, nil
}
