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
	header           int32
	inside, outside  float64
	entries, iterate float64 // entries, and iterations (entries plus back edges)
}

// perEntry is the average number of iterations per entry.
func (l *loopCost) perEntry() float64 { return l.iterate / l.entries }

// slotCosts prices g slots of the loop's iterations, total being the
// function's whole cost: slot j runs the iterations n with n mod g = j of
// each entry (each entry taken to run the average number), pays the
// probes around the loop, which every copy runs, and the setting of the
// copy's flag where the loop is left; a slot other than 0 also sets the
// path register at each entry. Iterations differ, and the profile does
// not say how: a slot of few iterations may run far more than its share,
// so its share is raised by 1/√(its iterations), which steers the choice
// to the inner of two loops that cost alike (an interpreter's dispatch
// loop rather than the loop over the programs it runs).
func (l *loopCost) slotCosts(total int64, g int) []int64 {
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
		if j > 0 {
			x += l.entries
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

// heavyLoops returns the loops whose probes cost most by the weights w,
// at most maxLoops of them, heaviest first, among those that iterate at
// least twice per entry and that ok accepts.
func heavyLoops(d *cfg.DAG, w []float64, ok func(int32) bool) []*loopCost {
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
	for i, op := range ops {
		if seq(d, nil, i, op) {
			weight[i] = w[i]
			total += w[i]
		}
	}
	var all []*loopCost
	for h := int32(2); int(h) < d.NumNodes; h++ {
		de := dummyEntry(d, h)
		if de < 0 || w[de] == 0 {
			continue
		}
		var entries float64
		for _, e := range d.In[h] {
			if d.Edges[e].Orig >= 0 {
				entries += w[e]
			}
		}
		if entries == 0 || (entries+w[de])/entries < 2 {
			continue
		}
		in := loopRegion(d, h)
		var inside float64
		for i, e := range d.Edges {
			if in[e.From] && e.Kind != cfg.EdgeDummyEntry {
				inside += weight[i]
			}
		}
		all = append(all, &loopCost{header: h, inside: inside, outside: total - inside, entries: entries, iterate: entries + w[de]})
	}
	slices.SortStableFunc(all, func(a, b *loopCost) int { return cmp.Compare(b.inside, a.inside) })
	var out []*loopCost
	for _, l := range all {
		if len(out) == maxLoops {
			break
		}
		if ok(l.header) {
			out = append(out, l)
		}
	}
	return out
}

// maxLoops bounds the loops of a function that chooseSlices tries.
const maxLoops = 3

// loopRegion returns the nodes of the loop with header h, as far as the
// DAG tells: those on a path from h to a back edge into h, and the nodes
// of the loops nested in it.
func loopRegion(d *cfg.DAG, h int32) []bool {
	from := reach(d, []int32{h}, true)
	in := make([]bool, d.NumNodes)
	in[h] = true
	todo := []int32{h}
	for len(todo) > 0 {
		x := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		back := reach(d, latches(d, x), false)
		for n, b := range back {
			if b && from[n] && !in[n] {
				in[n] = true
				if isHeader(d, int32(n)) {
					todo = append(todo, int32(n))
				}
			}
		}
	}
	return in
}

// latches returns the sources of the back edges into header h.
func latches(d *cfg.DAG, h int32) []int32 {
	de := dummyEntry(d, h)
	if de < 0 {
		return nil
	}
	backs := map[int32]bool{}
	for _, b := range d.Edges[de].Back {
		backs[b] = true
	}
	var out []int32
	for _, e := range d.In[cfg.Exit] {
		x := d.Edges[e]
		if x.Kind != cfg.EdgeDummyExit {
			continue
		}
		for _, b := range x.Back {
			if backs[b] {
				out = append(out, x.From)
				break
			}
		}
	}
	return out
}

// reach returns the nodes reachable from starts (forward) or reaching them
// (backward) along the DAG's real edges.
func reach(d *cfg.DAG, starts []int32, forward bool) []bool {
	seen := make([]bool, d.NumNodes)
	stack := append([]int32(nil), starts...)
	for _, s := range starts {
		seen[s] = true
	}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		list := d.In[x]
		if forward {
			list = d.Out[x]
		}
		for _, e := range list {
			de := d.Edges[e]
			if de.Orig < 0 {
				continue
			}
			y := de.From
			if forward {
				y = de.To
			}
			if !seen[y] {
				seen[y] = true
				stack = append(stack, y)
			}
		}
	}
	return seen
}
