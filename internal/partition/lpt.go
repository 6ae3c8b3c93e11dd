package partition

// This file distributes tasks over the copies longest processing time
// first, and prices the largest load that results.

import (
	"cmp"
	"slices"
)

// LPT distributes jobs over k machines longest processing time first: in
// decreasing cost, ties in index order, each job goes to the machine with
// the least load so far, ties to the lowest machine. It returns the machine
// of each job. The greedy schedule's largest load is within 4/3 of the
// optimum (Graham 1969); the optimum is NP-hard.
func LPT(costs []int64, k int) []int {
	return lpt(costs, make([]int64, k))
}

// lpt is LPT onto machines that start with the given loads (updated).
func lpt(costs []int64, load []int64) []int {
	k := len(load)
	order := make([]int, len(costs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(costs[b], costs[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	assign := make([]int, len(costs))
	for _, j := range order {
		best := 0
		for c := 1; c < k; c++ {
			if load[c] < load[best] {
				best = c
			}
		}
		assign[j] = best
		load[best] += costs[j]
	}
	return assign
}

// taskCosts is costsOf for a function's own tasks.
func taskCosts(ts []task) []int64 {
	c := make([]int64, len(ts))
	for i, t := range ts {
		c[i] = t.cost
	}
	return c
}

// loadSet holds the task costs of a plan in decreasing order, so that
// the largest LPT load with one function's tasks replaced is found in
// one pass, without sorting all the tasks again: the planner tries
// hundreds of replacements on modules of tens of thousands of tasks.
// LPT's largest load depends only on the costs, not on which task
// has which: tasks of equal cost, and copies of equal load, are
// interchangeable.
type loadSet struct {
	k      int
	sorted []int64 // decreasing
	loads  []int64 // scratch
}

func newLoadSet(costs [][]int64, k int) *loadSet {
	s := &loadSet{k: k, sorted: slices.Concat(costs...), loads: make([]int64, k)}
	slices.SortFunc(s.sorted, func(a, b int64) int { return cmp.Compare(b, a) })
	return s
}

// maxWith is the largest LPT load over k copies of the set's costs
// without out's (which the set must hold) and with in's.
func (s *loadSet) maxWith(out, in []int64) int64 {
	out, in = decreasing(out), decreasing(in)
	clear(s.loads)
	i, o, n := 0, 0, 0
	for {
		if i < len(s.sorted) && o < len(out) && s.sorted[i] == out[o] {
			i, o = i+1, o+1
			continue
		}
		var x int64
		switch {
		case i < len(s.sorted) && (n == len(in) || s.sorted[i] >= in[n]):
			x = s.sorted[i]
			i++
		case n < len(in):
			x = in[n]
			n++
		default:
			return slices.Max(s.loads)
		}
		if x == 0 {
			continue // adds nothing to any load
		}
		least := 0
		for c := 1; c < s.k; c++ {
			if s.loads[c] < s.loads[least] {
				least = c
			}
		}
		s.loads[least] += x
	}
}

// replace takes out's costs out of the set and puts in's in.
func (s *loadSet) replace(out, in []int64) {
	out, in = decreasing(out), decreasing(in)
	next := make([]int64, 0, len(s.sorted)-len(out)+len(in))
	i, o, n := 0, 0, 0
	for i < len(s.sorted) || n < len(in) {
		if i < len(s.sorted) && o < len(out) && s.sorted[i] == out[o] {
			i, o = i+1, o+1
			continue
		}
		if i < len(s.sorted) && (n == len(in) || s.sorted[i] >= in[n]) {
			next = append(next, s.sorted[i])
			i++
		} else {
			next = append(next, in[n])
			n++
		}
	}
	s.sorted = next
}

// decreasing returns the costs sorted in decreasing order, a copy.
func decreasing(costs []int64) []int64 {
	c := slices.Clone(costs)
	slices.SortFunc(c, func(a, b int64) int { return cmp.Compare(b, a) })
	return c
}
