package partition

// This file chooses which functions P3 splits into classes, and groups
// their classes into tasks.

import (
	"cmp"
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/parallel"
)

// chooseSplits decides which functions P3 splits, and into how many
// tasks. Splitting a function costs probes (its classes share most of
// them, and a copy given two classes of a function pays their shared
// probes once, not twice), so the classes are offered in g contiguous
// groups for g = 2 .. min(k, classes), each group priced as one task on
// the union of its classes' edges, and a split is kept only where it
// lowers the largest copy load of the LPT assignment. Starting from every
// function whole (PBL's plan, perFunc's one task per function), the
// functions that can split (splittable, with more than one class) are
// tried one by one, heaviest whole cost first, each kept with the
// grouping that lowers the largest load most below the best so far; if
// the splits kept lower PBL's largest load by less than minSplitGain in
// all, none is kept. P3 is never planned worse than PBL by its own
// estimate, and does not double its copies' total work for a negligible
// gain. Make uses it only with profile weights, whose costs estimate
// probe executions; static probe counts say too little about load. Only
// the functions tried have their classes found and priced, by workers
// goroutines.
func chooseSplits(perFunc [][]task, k int, graphs []*cfg.DAG, lives [][]bool, weights [][]float64, splittable []bool, workers int) error {
	type option struct {
		def   int
		whole int64
	}
	var order []option
	costs := make([][]int64, len(perFunc))
	for i, ts := range perFunc {
		if len(ts) == 0 {
			continue
		}
		costs[i] = []int64{ts[0].cost}
		if splittable != nil && splittable[i] {
			order = append(order, option{i, ts[0].cost})
		}
	}
	slices.SortStableFunc(order, func(a, b option) int { return cmp.Compare(b.whole, a.whole) })
	var tries []option
	var sets [][][]bool
	for _, t := range order {
		if len(tries) == maxSplitTries {
			break
		}
		d := graphs[t.def]
		if classes := Reduce(d).WeightedClasses(Tau(d, k), weights[t.def]); len(classes) > 1 {
			tries = append(tries, t)
			sets = append(sets, classes)
		}
	}
	split := make([][]task, len(tries))
	if err := parallel.For(len(tries), workers, func(j int) error {
		def := tries[j].def
		c := coster{w: weights[def]}
		split[j] = make([]task, len(sets[j]))
		for i, set := range sets[j] {
			cost, err := c.cost(graphs[def], lives[def], set)
			if err != nil {
				return err
			}
			split[j][i] = task{def: def, cost: int64(cost), edges: set}
		}
		return nil
	}); err != nil {
		return err
	}
	set := newLoadSet(costs, k)
	best := set.maxWith(nil, nil)
	// A split adds the probes its groups share to every copy that gets
	// one, often doubling the total work; the splits must lower the
	// largest load by at least minSplitGain of PBL's to be worth that.
	cutoff := best - int64(float64(best)*minSplitGain)
	chosen := make([][]task, len(perFunc))
	var c coster
	for j, t := range tries {
		classes := split[j]
		whole := costs[t.def]
		c.w = weights[t.def]
		for g := 2; g <= min(k, len(classes)); g++ {
			groups, err := groupClasses(classes, g, graphs[t.def], lives[t.def], &c)
			if err != nil {
				return err
			}
			if l := set.maxWith(whole, taskCosts(groups)); l < best {
				best, chosen[t.def] = l, groups
			}
		}
		if chosen[t.def] != nil {
			set.replace(whole, taskCosts(chosen[t.def]))
		}
	}
	if best > cutoff {
		return nil // together the splits save too little
	}
	for i, ts := range chosen {
		if ts != nil {
			perFunc[i] = ts
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
