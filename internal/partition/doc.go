// Package partition plans parallel path profiling: which paths of which
// functions each of k copies of a program profiles, so that the copies'
// profiles merge into the complete one while the slowest copy does as little
// as possible. It implements the planning of P3 (partitioned path
// profiling, §3.2 of the P3 paper), with PBL (every function profiled whole
// in one copy) and SBL (one copy) as special cases.
//
// The steps are
//
//	callers, err := FindCallers(m)     // candidates: at most one call site, no unknown callers
//	red := Reduce(d)                   // diamonds and triangles collapsed
//	classes := red.Classes(Tau(d, k))  // tasks: disjoint path classes of a function
//	assign := LPT(costs, k)            // longest processing time first
//
// and Make runs them all over a module and returns a Plan: per copy, the
// functions it profiles with Ball-Larus and those it profiles selectively
// (PSPP) on a set of interesting DAG edges.
//
// Planning works on counts and edge sets, never on enumerated paths, so its
// time is linear in the DAGs' sizes times the number of tasks per function,
// plus one probe placement per task for its cost.
package partition
