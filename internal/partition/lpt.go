package partition

// This file distributes tasks over the copies longest processing time
// first, and prices the largest load that results.

import (
	"slices"
	"sort"
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
	sort.SliceStable(order, func(a, b int) bool { return costs[order[a]] > costs[order[b]] })
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

// maxLoad is the largest copy load of the LPT assignment of costs.
func maxLoad(costs []int64, k int) int64 {
	loads := make([]int64, k)
	for i, c := range LPT(costs, k) {
		loads[c] += costs[i]
	}
	return slices.Max(loads)
}
