package partition

// This file chooses which functions P3 splits into classes, and groups
// their classes into tasks.

import (
	"cmp"
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
)

// chooseSplits decides which split functions stay split, and into how
// many tasks. Splitting a function costs probes (its classes share most of
// them, and a copy given two classes of a function pays their shared
// probes once, not twice), so the classes are offered in g contiguous
// groups for g = 2 .. min(k, classes), each group priced as one task on
// the union of its classes' edges, and a split is kept only where it
// lowers the largest copy load of the LPT assignment. Starting from every
// function whole (PBL's plan), the functions that can split are tried one
// by one, heaviest whole cost first, each kept with the grouping that
// lowers the largest load most below the best so far; if the splits kept
// lower PBL's largest load by less than minSplitGain in all, none is kept.
// P3 is never planned worse than PBL by its own estimate, and does not
// double its copies' total work for a negligible gain. Make uses it only with profile
// weights, whose costs estimate probe executions; static probe counts say
// too little about load.
func chooseSplits(perFunc [][]task, k int, graphs []*cfg.DAG, lives [][]bool, weights [][]float64) error {
	type option struct {
		def   int
		whole int64
	}
	var tries []option
	costs := make([][]int64, len(perFunc))
	for i, ts := range perFunc {
		if len(ts) == 0 {
			continue
		}
		costs[i] = []int64{ts[len(ts)-1].cost} // the whole task, or the only one
		if len(ts) > 1 {
			tries = append(tries, option{i, ts[len(ts)-1].cost})
		}
	}
	slices.SortStableFunc(tries, func(a, b option) int { return cmp.Compare(b.whole, a.whole) })
	if len(tries) > maxSplitTries {
		tries = tries[:maxSplitTries]
	}
	best := maxLoad(slices.Concat(costs...), k)
	// A split adds the probes its groups share to every copy that gets
	// one, often doubling the total work; the splits must lower the
	// largest load by at least minSplitGain of PBL's to be worth that.
	cutoff := best - int64(float64(best)*minSplitGain)
	chosen := make([][]task, len(perFunc))
	var c coster
	for _, t := range tries {
		ts := perFunc[t.def]
		classes := ts[:len(ts)-1]
		whole := costs[t.def]
		c.w = weights[t.def]
		for g := 2; g <= min(k, len(classes)); g++ {
			groups, err := groupClasses(classes, g, graphs[t.def], lives[t.def], &c)
			if err != nil {
				return err
			}
			costs[t.def] = taskCosts(groups)
			if l := maxLoad(slices.Concat(costs...), k); l < best {
				best, chosen[t.def] = l, groups
			}
		}
		costs[t.def] = whole
		if chosen[t.def] != nil {
			costs[t.def] = taskCosts(chosen[t.def])
		}
	}
	if best > cutoff {
		clear(chosen) // together the splits save too little
	}
	for i, ts := range perFunc {
		switch {
		case len(ts) <= 1:
		case chosen[i] != nil:
			perFunc[i] = chosen[i]
		default:
			w := ts[len(ts)-1]
			w.whole, w.edges = false, nil
			perFunc[i] = []task{w}
		}
	}
	return nil
}

// groupClasses joins a function's classes, in class order (neighbours
// share the longest prefixes, so the most probes), into g runs of about
// equal summed cost, and prices each run as one task on the union of its
// classes' edges.
func groupClasses(classes []task, g int, d *cfg.DAG, live []bool, c *coster) ([]task, error) {
	var total int64
	for _, t := range classes {
		total += t.cost
	}
	groups := make([]task, 0, g)
	var sum int64
	for i := 0; i < len(classes); {
		// Take classes until the run reaches its share of the total,
		// leaving at least one class for each later run.
		target := total * int64(len(groups)+1) / int64(g)
		first := i
		union := make([]bool, len(d.Edges))
		for j := i; ; {
			for e, in := range classes[j].edges {
				union[e] = union[e] || in
			}
			sum += classes[j].cost
			j++
			i = j
			left := len(classes) - j
			if left == 0 || left == g-len(groups)-1 || (sum >= target && len(groups) < g-1) {
				break
			}
		}
		cost, err := c.cost(d, live, union)
		if err != nil {
			return nil, err
		}
		n := 0
		if j := i - first; j > 1 {
			n = j
		}
		groups = append(groups, task{def: classes[0].def, cost: int64(cost), edges: union, classes: n})
	}
	return groups, nil
}

// minSplitGain is the least share of the largest copy load (PBL's plan)
// that the splits chooseSplits keeps must save, together.
const minSplitGain = 0.01

// maxSplitTries bounds the functions chooseSplits tries to split: a
// function far lighter than the largest copy load barely moves it, and
// each try plans the whole program once more.
const maxSplitTries = 64
