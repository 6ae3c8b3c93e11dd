package partition

// This file finds a function's heaviest loops and prices the slots that
// share out their iterations among copies.

import (
	"cmp"
	"math"
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
)

// loopCost is what a profile says of one loop of a function: the weighted
// cost of the probes in it and around it, and how often it was entered and
// iterated.
type loopCost struct {
	header          int32
	inside, outside float64
	// tails is the part of outside on the tails of the paths that leave
	// the loop: all that a copy without slot 0 runs around it.
	tails            float64
	entries, iterate float64 // entries, and iterations (entries plus back edges)
	// nested is the iterations of the loop and of every loop nested in
	// it: a nest's work, however branchy its bodies.
	nested float64
	// probes is how many probes the function has, profiled whole.
	probes int
}

// perEntry is the average number of iterations per entry.
func (l *loopCost) perEntry() float64 { return l.iterate / l.entries }

// spreads says whether g slots of the loop's iterations are dealt out by
// a test at each iteration (FuncInfo.Spread) rather than by n mod g, in a
// plan made from a profile: where an iteration runs spreadWork probes per
// slot or more, so that the test, which every slot runs at every
// iteration, adds at most 1/spreadWork to a slot's share, and an entry
// runs spreadBlocks blocks of g iterations or more. Over fewer, which
// slot gets the few heavy iterations is chance either way. An estimate's
// work per iteration is too rough a guess to pay a certain test with.
func (l *loopCost) spreads(g int, guessed bool) bool {
	return !guessed && l.inside >= spreadWork*float64(g)*l.iterate && l.perEntry() >= spreadBlocks*float64(g)
}

// spreadWork is the fewest probe hits per iteration and slot, and
// spreadBlocks the fewest blocks of g iterations per entry, of a loop
// whose iterations are dealt out by a test.
const (
	spreadWork   = 32
	spreadBlocks = 16
)

// slotCosts prices g slots of the loop's iterations, total being the
// function's whole cost: slot j runs a g-th of the iterations of each
// entry (each entry taken to run the average number), pays the probes
// around the loop (slot 0 all of them, the others those on the tails of
// the paths that leave the loop), the setting of the copy's flag where
// the loop is left, and the test of every iteration where spread deals
// them out by one (spreads); a slot other than 0 also sets the path register
// at each entry. Iterations differ, and the profile does
// not say how: a slot of few iterations may run far more than its share,
// so its share is raised by 1/√(its iterations), which steers the choice
// to the inner of two loops that cost alike (an interpreter's dispatch
// loop rather than the loop over the programs it runs).
func (l *loopCost) slotCosts(total int64, g int, spread bool) []int64 {
	n := l.perEntry()
	full := math.Floor(n / float64(g))
	rem := n - full*float64(g)
	inside := float64(total) - l.outside
	c := make([]int64, g)
	for j := range c {
		per := full + min(max(rem-float64(j), 0), 1) // iterations per entry
		share := per / n
		if iters := per * l.entries; iters > 0 {
			share *= 1 + 1/math.Sqrt(iters)
		}
		x := inside*share + l.outside + l.entries
		if spread {
			x += l.iterate
		}
		if j > 0 {
			x += l.tails - l.outside + l.entries
		}
		c[j] = int64(math.Ceil(x))
	}
	return c
}

// isHeader reports whether node h of d is the target of back edges.
func isHeader(d *cfg.DAG, h int32) bool {
	return dummyEntry(d, h) >= 0
}

// dummyEntry returns the DAG's dummy entry edge into node h, or -1.
func dummyEntry(d *cfg.DAG, h int32) int {
	if d == nil || h < 2 || int(h) >= d.NumNodes {
		return -1
	}
	for _, e := range d.In[h] {
		if d.Edges[e].Kind == cfg.EdgeDummyEntry {
			return int(e)
		}
	}
	return -1
}

// heavyLoops returns, of a function's loops ls (allLoops), the ones whose
// probes cost most, at most maxLoops of them, heaviest first, among those
// that ok accepts.
func heavyLoops(ls []*loopCost, ok func(int32) bool) []*loopCost {
	var out []*loopCost
	for _, l := range ls {
		if len(out) == maxLoops {
			break
		}
		if ok(l.header) {
			out = append(out, l)
		}
	}
	return out
}

// allLoops returns every loop of d that iterates at least twice per
// entry by the weights w, heaviest first (so a loop comes before the
// loops nested in it). The loops are found on the function's control
// flow as the DAG records it (see flowOf), so a loop whose header the DAG
// cuts, as a function of many paths is cut at its loop headers, is found
// as any other.
func allLoops(d *cfg.DAG, w []float64) []*loopCost {
	if d == nil || w == nil {
		return nil
	}
	// The sequences the copies' probes run, per DAG edge, as costs
	// count them.
	var c coster
	c.w = w
	ops, err := c.wholeProbes(d)
	if err != nil {
		return nil
	}
	weight := make([]float64, len(d.Edges))
	var total float64
	probes := 0
	for i, op := range ops {
		if seq(d, nil, i, op) {
			weight[i] = w[i]
			total += w[i]
			probes += multiplicity(d, nil, i)
		}
	}
	f := flowOf(d, w)
	// Every loop's entries, iterations and latches first, so that a loop
	// can add up the iterations of those nested in it.
	type header struct {
		entries, iterate float64
		latches          []int32
	}
	heads := make([]header, d.NumNodes)
	for h := int32(2); int(h) < d.NumNodes; h++ {
		var entries, backs float64
		var latches []int32
		for _, e := range f.in[h] {
			if x := f.edges[e]; x.back {
				backs += x.runs
				latches = append(latches, x.from)
			} else {
				entries += x.runs
			}
		}
		if de := dummyEntry(d, h); de >= 0 && f.allBack(d.Edges[de].Back) {
			// Uncut, the header's dummy entry edge holds its back
			// edges only: their runs together, whatever the split.
			backs = w[de]
		}
		if len(latches) > 0 && backs > 0 {
			heads[h] = header{entries, entries + backs, latches}
		}
	}
	var all []*loopCost
	for h := int32(2); int(h) < d.NumNodes; h++ {
		entries, latches := heads[h].entries, heads[h].latches
		if len(latches) == 0 || entries == 0 || heads[h].iterate/entries < 2 {
			continue
		}
		in := f.region(h, latches)
		var nested float64
		for v, x := range heads {
			if in[v] {
				nested += x.iterate
			}
		}
		var inside float64
		for i, e := range d.Edges {
			if in[e.From] && e.Kind != cfg.EdgeDummyEntry {
				inside += weight[i]
			}
		}
		// The tails: what the real edges out of the loop reach
		// before their paths end.
		tail := make([]bool, d.NumNodes)
		var todo []int32
		for _, e := range d.Edges {
			if e.Orig >= 0 && in[e.From] && !in[e.To] && e.To != cfg.Exit && !tail[e.To] {
				tail[e.To] = true
				todo = append(todo, e.To)
			}
		}
		for len(todo) > 0 {
			x := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			for _, e := range d.Out[x] {
				if y := d.Edges[e]; y.Orig >= 0 && y.To != cfg.Exit && !tail[y.To] && !in[y.To] {
					tail[y.To] = true
					todo = append(todo, y.To)
				}
			}
		}
		var tails float64
		for i, e := range d.Edges {
			if tail[e.From] {
				tails += weight[i]
			}
		}
		all = append(all, &loopCost{header: h, inside: inside, outside: total - inside, tails: tails, entries: entries, iterate: heads[h].iterate, nested: nested, probes: probes})
	}
	slices.SortStableFunc(all, func(a, b *loopCost) int { return cmp.Compare(b.inside, a.inside) })
	return all
}

// together is the cost of several loops of one function shared out alike
// (none nested in another): their iterations, entries and probes inside
// and on their tails added up, and slotCosts prices the slots as if they
// were one loop's.
func together(ls []*loopCost) *loopCost {
	t := &loopCost{header: ls[0].header, outside: ls[0].outside + ls[0].inside, probes: ls[0].probes}
	for _, l := range ls {
		t.inside += l.inside
		t.tails += l.tails
		t.entries += l.entries
		t.iterate += l.iterate
	}
	t.outside -= t.inside
	return t
}

// flow is a function's control flow graph as its DAG records it: the
// DAG's real edges, and every edge that ends paths (a back edge, or an
// edge into a vertex the DAG was cut at), which the DAG keeps only in
// the Back lists of a dummy exit edge from its source and a dummy entry
// edge into its target. Each edge has its runs by the DAG's weights.
type flow struct {
	edges   []flowEdge
	in, out [][]int32
	index   map[int32]int // Graph edge -> its flow edge, for edges that end paths
	// determined says that the dummy edges' sums determined every
	// edge's runs.
	determined bool
}

type flowEdge struct {
	from, to int32
	orig     int32 // the Graph edge
	runs     float64
	// back marks a loop's back edge: its target is on the stack of a
	// depth-first search from the entry. Wasm's control flow is
	// reducible, so every such search finds the same back edges.
	back bool
}

// flowOf rebuilds the control flow of d with runs by the weights w. The
// weights give a dummy edge the runs of all the edges in its Back list
// together; an edge's own runs are found where some dummy edge holds one
// edge whose runs are not known yet (the difference), and otherwise, on
// a cycle of such dummy edges, by sharing what remains evenly. So the
// runs are exact wherever the dummy edges' sums determine them, as for a
// block that ends one loop and falls into the next, whose dummy exit
// edge holds both the back edge and the entry into the next loop: the
// next loop's header's dummy entry edge determines the latter.
func flowOf(d *cfg.DAG, w []float64) *flow {
	f := &flow{in: make([][]int32, d.NumNodes), out: make([][]int32, d.NumNodes)}
	add := func(e flowEdge) int {
		i := len(f.edges)
		f.edges = append(f.edges, e)
		f.out[e.from] = append(f.out[e.from], int32(i))
		f.in[e.to] = append(f.in[e.to], int32(i))
		return i
	}
	type end struct{ from, to int32 }
	ends := map[int32]*end{} // Graph edge -> its ends
	for i, e := range d.Edges {
		switch {
		case e.Orig >= 0:
			add(flowEdge{from: e.From, to: e.To, orig: e.Orig, runs: w[i]})
		case e.Kind == cfg.EdgeDummyExit || e.Kind == cfg.EdgeDummyEntry:
			for _, b := range e.Back {
				x := ends[b]
				if x == nil {
					x = &end{-1, -1}
					ends[b] = x
				}
				if e.Kind == cfg.EdgeDummyExit {
					x.from = e.From
				} else {
					x.to = e.To
				}
			}
		}
	}
	// The edges that end paths, in Graph order, and the sums of their
	// runs that each dummy edge gives.
	ids := make([]int32, 0, len(ends))
	for b, x := range ends {
		if x.from >= 0 && x.to >= 0 {
			ids = append(ids, b)
		}
	}
	slices.Sort(ids)
	index := map[int32]int{}
	f.index = index
	for _, b := range ids {
		index[b] = add(flowEdge{from: ends[b].from, to: ends[b].to, orig: b})
	}
	type sum struct {
		members []int
		total   float64
	}
	var sums []sum
	for i, e := range d.Edges {
		if e.Orig >= 0 || len(e.Back) == 0 {
			continue
		}
		s := sum{total: w[i]}
		for _, b := range e.Back {
			if j, ok := index[b]; ok {
				s.members = append(s.members, j)
			}
		}
		if len(s.members) > 0 {
			sums = append(sums, s)
		}
	}
	f.determined = true
	known := make([]bool, len(f.edges))
	unknown := func(s sum) (n int, rest float64) {
		rest = s.total
		for _, j := range s.members {
			if known[j] {
				rest -= f.edges[j].runs
			} else {
				n++
			}
		}
		return n, max(rest, 0)
	}
	for {
		progress, open := false, -1
		for i, s := range sums {
			n, rest := unknown(s)
			switch {
			case n == 1:
				for _, j := range s.members {
					if !known[j] {
						f.edges[j].runs, known[j] = rest, true
					}
				}
				progress = true
			case n > 1 && open < 0:
				open = i
			}
		}
		if progress {
			continue
		}
		if open < 0 {
			break
		}
		f.determined = false
		n, rest := unknown(sums[open])
		for _, j := range sums[open].members {
			if !known[j] {
				f.edges[j].runs, known[j] = rest/float64(n), true
			}
		}
	}
	f.findBackEdges()
	return f
}

// allBack reports whether every Graph edge of back (a dummy edge's Back
// list) is a back edge.
func (f *flow) allBack(back []int32) bool {
	for _, b := range back {
		if j, ok := f.index[b]; !ok || !f.edges[j].back {
			return false
		}
	}
	return true
}

// findBackEdges marks the edges whose target is on the stack of a
// depth-first search from the entry.
func (f *flow) findBackEdges() {
	cfg.BackEdges(len(f.out),
		func(v int32) []int32 { return f.out[v] },
		func(e int32) (int32, bool) { return f.edges[e].to, true },
		func(e int32) { f.edges[e].back = true })
}

// region returns the nodes of the loop with header h and back edges from
// latches: h, and every node from which a latch is reached without
// passing h (the natural loop, nested loops included).
func (f *flow) region(h int32, latches []int32) []bool {
	in := make([]bool, len(f.out))
	in[h] = true
	var todo []int32
	for _, l := range latches {
		if !in[l] {
			in[l] = true
			todo = append(todo, l)
		}
	}
	for len(todo) > 0 {
		x := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, e := range f.in[x] {
			if y := f.edges[e].from; !in[y] {
				in[y] = true
				todo = append(todo, y)
			}
		}
	}
	return in
}

// maxLoops bounds the loops of a function that chooseSlices tries.
const maxLoops = 3
