// Package estimate guesses, without running a module, how often each edge
// of each function's Ball-Larus DAG runs: the weights a partitioned plan
// is made with when no profile of the program is at hand. A plan priced by
// static probe counts cannot tell a hot loop from code that runs once, so
// it balances probes rather than work; the estimate finds the hot loops
// and functions from the code's shape instead.
//
// Within a function, every loop runs a fixed number of iterations per
// entry (more for an interpreter's dispatch loop: a loop around a
// br_table that selects on a value read from memory), branches split
// evenly except towards a return or a failure, which are the rarer ways,
// and a loop is left once per entry, by its exits in proportion to how
// often they are reached. Across functions, the exported functions and
// the start function are called once; every call site adds its block's
// estimated runs, times its caller's calls, to its callee's (an indirect
// call spreads over the table's functions of its type), callers before
// callees, and a recursive call is made less than once per call. A
// function that calls the host on most calls (a system call's wrapper, an
// output function that writes out) is called a few times at most:
// programs batch their host calls, so loops around them are rare.
//
// The estimate decides nothing about exactness: the profile a plan made
// from it produces is the same whatever the weights.
package estimate

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/parallel"
	"github.com/pathprof/pathprof/internal/wasm"
)

// Trips per entry into a loop, and into an interpreter's dispatch loop.
const (
	loopTrips     = 10
	dispatchTrips = 10000
)

// dispatchLabels is the fewest distinct targets of a dispatch loop's
// switch.
const dispatchLabels = 8

// recursionCalls is the most calls into its own cycle of the call graph
// a call makes on average, so that recursion multiplies a cycle's calls
// at most as much as a loop does: 1/(1-recursionCalls) = loopTrips.
const recursionCalls = 1 - 1.0/loopTrips

// recursionRounds bounds the rounds that solve a cycle's calls; each
// shrinks the error by recursionCalls at least, and the rounds stop once
// no function's calls change by more than recursionPrecision of them.
const (
	recursionRounds    = 1000
	recursionPrecision = 1e-9
)

// Scale is the estimated edge frequency sum of the heaviest function:
// frequencies are whole numbers, so that a plan prices them as counts,
// and the heaviest function's cost stays well inside the planner's range.
const Scale = 1e9

// Func is what the estimate needs of one defined function.
type Func struct {
	// Graph is the function's control-flow graph and DAG its DAG (nil
	// for a function that is not profiled).
	Graph *cfg.Graph
	DAG   *cfg.DAG
	// Offset gives the module file offset of the original instruction
	// at a Graph block offset: the graph may be of an edited body.
	Offset func(off uint32) int
}

// Estimate is the estimate of a run.
type Estimate struct {
	// Weights holds, per defined function, the frequency of each edge
	// of its DAG (a dummy edge's frequency is that of the graph edges it
	// stands for); nil for a function with no DAG, or estimated never to
	// run.
	Weights [][]float64
	// Repeated says, per defined function, whether it is estimated to be
	// called over and over: at least repeatedCalls times, as from a loop
	// or a recursion of some caller on its way from the exported
	// functions.
	Repeated []bool
	// Recursive says, per defined function, whether it calls into its
	// own cycle of the call graph (itself, directly, through other
	// functions or through a table).
	Recursive []bool
}

// repeatedCalls is the fewest estimated calls of a repeated function:
// half a loop's trips, as a call in one arm of a branch in a loop gets.
const repeatedCalls = loopTrips / 2

// Run estimates the run of a module.
func Run(m *wasm.Module, funcs []Func) (*Estimate, error) {
	n := len(m.Code)
	if len(funcs) != n {
		return nil, fmt.Errorf("estimate: %d functions for %d", len(funcs), n)
	}
	local := make([]*funcEstimate, n)
	failing := failingFuncs(m)
	err := parallel.For(n, runtime.GOMAXPROCS(0), func(i int) error {
		f := &funcs[i]
		if f.Graph == nil || f.DAG == nil {
			return nil
		}
		fe, err := estimateFunc(&m.Code[i], f, failing)
		local[i] = fe
		return err
	})
	if err != nil {
		return nil, err
	}
	calls, recursive := callsOf(m, funcs, local)
	est := &Estimate{Weights: make([][]float64, n), Repeated: make([]bool, n), Recursive: recursive}
	for i, c := range calls {
		est.Repeated[i] = c >= repeatedCalls
	}
	var most float64
	for i, fe := range local {
		if fe != nil {
			most = max(most, damp(calls[i]*fe.total))
		}
	}
	out := est.Weights
	if most == 0 {
		return est, nil
	}
	for i, fe := range local {
		if fe == nil || calls[i] == 0 {
			continue
		}
		f := damp(calls[i]*fe.total) / fe.total * Scale / most
		w := make([]float64, len(funcs[i].DAG.Edges))
		ran := false
		for j, e := range funcs[i].DAG.Edges {
			var x float64
			if e.Orig >= 0 {
				x = fe.edge[e.Orig]
			} else {
				for _, b := range e.Back {
					x += fe.edge[b]
				}
			}
			w[j] = math.Round(x * f)
			ran = ran || w[j] > 0
		}
		if ran {
			out[i] = w
		}
	}
	return est, nil
}

// damp compresses a function's estimated work: the estimate can be
// wrong by orders of magnitude between functions, more than within one.
func damp(x float64) float64 { return math.Pow(x, damping) }

// damping is the exponent damp raises a function's work to.
const damping = 0.5

// funcEstimate is one function's estimate per call.
type funcEstimate struct {
	edge  []float64 // per graph edge
	total float64   // the sum of edge
	sites []site
	// calls are its call instructions, with their blocks.
	calls []call
}

// site is a call site and how often it runs per call of its function.
type site struct {
	op     wasm.Op
	callee uint32 // function, or type for an indirect call
	freq   float64
}

// loop is one loop of a function during the estimate: its header and
// region (the nodes on a path from the header to a back edge into it),
// and what the estimate finds of it per iteration.
type loop struct {
	header int32
	nodes  []int32 // the region, in topological order
	in     []bool  // per node
	parent int     // the innermost enclosing loop, or -1 (the body)
	trips  float64
	// back is the flow, per iteration, through its back edges; exits the
	// share of the loop's entries that leave by each edge.
	back  float64
	exits map[int32]float64
	// entry is, per iteration of the parent, its entries.
	entry float64
}

// estimateFunc estimates a function's edge frequencies per call.
func estimateFunc(code *wasm.Code, f *Func, failing map[uint32]bool) (*funcEstimate, error) {
	g := f.Graph
	n := len(g.Blocks)
	topo := cfg.ReversePostorder(n, func(v int32) []int32 { return g.Blocks[v].Out }, func(e int32) (int32, bool) {
		return g.Edges[e].To, !g.Edges[e].Back
	})
	ins, err := scan(code, f)
	if err != nil {
		return nil, err
	}

	// The loops, innermost first, and the body as the last, outermost.
	loops := findLoops(g, topo)
	for _, li := range dispatchLoops(g, loops, ins) {
		loops[li].trips = dispatchTrips
	}
	body := &loop{header: cfg.Entry, nodes: topo, in: make([]bool, n), trips: 1, exits: map[int32]float64{}}
	for _, v := range topo {
		body.in[v] = true
	}
	loops = append(loops, body)
	inner := make([]int, n) // each node's innermost loop
	for i := range inner {
		inner[i] = len(loops) - 1
	}
	for i := len(loops) - 2; i >= 0; i-- {
		for _, v := range loops[i].nodes {
			inner[v] = i
		}
	}
	for i, l := range loops[:len(loops)-1] {
		l.parent = len(loops) - 1
		for j := i + 1; j < len(loops)-1; j++ {
			if loops[j].in[l.header] {
				l.parent = j
				break
			}
		}
	}
	body.parent = -1
	child := map[int32]int{} // header -> loop
	for i, l := range loops[:len(loops)-1] {
		child[l.header] = i
	}

	fail := map[int32]bool{} // blocks that call a failing function
	for _, c := range ins.calls {
		if isDirect(c.op) && failing[c.callee] {
			fail[c.block] = true
		}
	}
	odds := branchOdds(g, topo, fail)

	// Inner loops first: each node's flow per iteration of its innermost
	// loop, and where each loop is left.
	rel := make([]float64, n)
	acc := make([]float64, n)
	flow := make([]float64, len(g.Edges))
	for li, l := range loops {
		for _, v := range l.nodes {
			acc[v] = 0
		}
		for _, v := range l.nodes {
			if c, ok := child[v]; ok && c != li && loops[c].parent == li {
				cl := loops[c]
				cl.entry = acc[v]
				for e, s := range cl.exits {
					leave(g, l, li, e, acc[v]*s, acc)
				}
				continue
			}
			if inner[v] != li {
				continue
			}
			val := acc[v]
			if v == l.header {
				val = 1
			}
			rel[v] = val
			out := g.Blocks[v].Out
			var stay, all float64
			for _, e := range out {
				all += odds[e]
				if staysIn(g, l, li, e) {
					stay += odds[e]
				}
			}
			for _, e := range out {
				switch {
				case staysIn(g, l, li, e):
					flow[e] = val * odds[e] / stay
					if g.Edges[e].Back {
						l.back += flow[e]
					} else {
						acc[g.Edges[e].To] += flow[e]
					}
				default:
					l.exits[e] += val * odds[e] / all
				}
			}
		}
		var sum float64
		for _, s := range l.exits {
			sum += s
		}
		for e := range l.exits {
			if sum > 0 {
				l.exits[e] /= sum
			}
		}
	}

	// Outer loops first: the runs of every edge per call.
	fe := &funcEstimate{edge: make([]float64, len(g.Edges))}
	set := make([]bool, len(g.Edges))
	put := func(e int32, x float64) {
		if !set[e] {
			set[e], fe.edge[e] = true, x
		}
	}
	node := make([]float64, n)
	entries := make([]float64, len(loops))
	entries[len(loops)-1] = 1
	for li := len(loops) - 1; li >= 0; li-- {
		l := loops[li]
		N := entries[li]
		for e, s := range l.exits {
			put(e, N*s)
		}
		for _, v := range l.nodes {
			if c, ok := child[v]; ok && c != li && loops[c].parent == li {
				entries[c] = N * l.trips * loops[c].entry
				continue
			}
			if inner[v] != li {
				continue
			}
			node[v] = N * l.trips * rel[v]
			for _, e := range g.Blocks[v].Out {
				if !staysIn(g, l, li, e) {
					continue
				}
				if g.Edges[e].Back {
					x := 0.0
					if l.back > 0 {
						x = N * (l.trips - 1) * flow[e] / l.back
					}
					put(e, x)
				} else {
					put(e, N*l.trips*flow[e])
				}
			}
		}
	}
	for _, x := range fe.edge {
		fe.total += x
	}
	for _, c := range ins.calls {
		fe.sites = append(fe.sites, site{op: c.op, callee: c.callee, freq: node[c.block]})
	}
	fe.calls = ins.calls
	return fe, nil
}

// callsOf estimates how often each defined function is called, a
// host-bound one hostCalls times at most, and which functions recurse
// (invocations).
func callsOf(m *wasm.Module, funcs []Func, local []*funcEstimate) ([]float64, []bool) {
	calls, recursive := invocations(m, local)
	for i, bound := range hostBound(m, funcs, local) {
		if bound {
			calls[i] = min(calls[i], hostCalls)
		}
	}
	return calls, recursive
}

// hostCalls is the most calls the estimate gives a host-bound function
// in a run: programs batch what they ask of the host (a buffer written
// out once full, read in once empty), so the code around a host call runs
// a handful of times, however deep in loops its callers' calls to it are.
const hostCalls = loopTrips

// hostBound reports, per defined function, whether a call of it calls
// the host more likely than not: it goes on to a call of an import or of
// a host-bound function more often than it returns without one, as it
// runs its loops once (a system call's wrapper, which also returns early
// on a bad argument; a write that retries until done; an output function
// that flushes). Calls made to it from loops are the program's calls to
// the host, which it batches.
func hostBound(m *wasm.Module, funcs []Func, local []*funcEstimate) []bool {
	n := len(local)
	imp := m.NumImportedFuncs
	bound := make([]bool, n)
	// callers[j]: the functions that call defined function j directly.
	callers := make([][]int, n)
	for i, fe := range local {
		if fe == nil {
			continue
		}
		for _, c := range fe.calls {
			if isDirect(c.op) && c.callee >= imp && int(c.callee-imp) < n {
				callers[c.callee-imp] = append(callers[c.callee-imp], i)
			}
		}
	}
	// A function's host calls only grow as its callees turn out bound:
	// each is checked first, then again whenever a callee is found bound.
	work := make([]int, 0, n)
	queued := make([]bool, n)
	for i := n - 1; i >= 0; i-- {
		if local[i] != nil {
			work = append(work, i)
			queued[i] = true
		}
	}
	host := map[int32]bool{}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		queued[i] = false
		if bound[i] {
			continue
		}
		clear(host)
		for _, c := range local[i].calls {
			if isDirect(c.op) && (c.callee < imp || int(c.callee-imp) < n && bound[c.callee-imp]) {
				host[c.block] = true
			}
		}
		if len(host) == 0 || reachOnce(funcs[i].Graph, host) <= 0.5 {
			continue
		}
		bound[i] = true
		for _, j := range callers[i] {
			if !bound[j] && !queued[j] {
				work = append(work, j)
				queued[j] = true
			}
		}
	}
	return bound
}

func isDirect(op wasm.Op) bool { return op == wasm.OpCall || op == wasm.OpReturnCall }

// reachOnce returns the share of g's calls that reach a block of target,
// its branches taken at branchOdds and its loops run once (back edges
// left out).
func reachOnce(g *cfg.Graph, target map[int32]bool) float64 {
	topo := cfg.ReversePostorder(len(g.Blocks), func(v int32) []int32 { return g.Blocks[v].Out }, func(e int32) (int32, bool) {
		return g.Edges[e].To, !g.Edges[e].Back
	})
	odds := branchOdds(g, topo, nil)
	p := make([]float64, len(g.Blocks))
	p[cfg.Entry] = 1
	var reached float64
	for _, v := range topo {
		if target[v] {
			reached += p[v]
			continue
		}
		var all float64
		for _, e := range g.Blocks[v].Out {
			if !g.Edges[e].Back {
				all += odds[e]
			}
		}
		for _, e := range g.Blocks[v].Out {
			if x := g.Edges[e]; !x.Back {
				p[x.To] += p[v] * odds[e] / all
			}
		}
	}
	return reached
}

// findLoops returns the loops of g whose headers topo (the reverse
// postorder of its forward edges) reaches, innermost first: fewest nodes
// first, then lowest header. Each has its nodes in topo's order and
// loopTrips trips.
func findLoops(g *cfg.Graph, topo []int32) []*loop {
	reached := make([]bool, len(g.Blocks))
	for _, v := range topo {
		reached[v] = true
	}
	latches := map[int32][]int32{}
	for _, e := range g.Edges {
		if e.Back && reached[e.To] {
			latches[e.To] = append(latches[e.To], e.From)
		}
	}
	var loops []*loop
	for h, ls := range latches {
		in := region(g, h, ls)
		l := &loop{header: h, in: in, trips: loopTrips, exits: map[int32]float64{}}
		for _, v := range topo {
			if in[v] {
				l.nodes = append(l.nodes, v)
			}
		}
		loops = append(loops, l)
	}
	sort.Slice(loops, func(a, b int) bool {
		if len(loops[a].nodes) != len(loops[b].nodes) {
			return len(loops[a].nodes) < len(loops[b].nodes)
		}
		return loops[a].header < loops[b].header
	})
	return loops
}

// failingFuncs returns the functions, by index, that by their names report
// a failure and end the run (abort, a failed assertion, a panic, a thrown
// C++ exception): the functions compilers know not to return. Go's wasm
// port returns from them, unwinding by hand, so their calls look like any
// other; and a nil check or bounds check of Go code calls one on a branch
// of its own.
func failingFuncs(m *wasm.Module) map[uint32]bool {
	out := map[uint32]bool{}
	for i := range m.NumFuncs() {
		if failingName(m.FuncName(i)) {
			out[i] = true
		}
	}
	return out
}

// failingName reports whether a function of that name reports a failure
// and ends the run.
func failingName(name string) bool {
	switch name {
	case "abort", "__assert_fail", "__stack_chk_fail", "__cxa_throw", "__cxa_rethrow", "__cxa_pure_virtual", "__cxa_bad_cast", "__cxa_bad_typeid",
		"runtime.gopanic", "runtime.sigpanic", "runtime.throw", "runtime.fatal", "runtime.fatalthrow", "runtime.fatalpanic",
		"rust_panic", "__rust_start_panic":
		return true
	}
	for _, p := range []string{"runtime.panic", "runtime.goPanic", "core::panicking::", "_ZN4core9panicking", "std::__throw_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	// libstdc++'s std::__throw_length_error and the like, mangled.
	return strings.HasPrefix(name, "_ZSt") && strings.Contains(name, "__throw_")
}

// Relative odds of a branch's edges: one towards a return, and one
// towards a trap or a call that never returns, against an edge that goes
// on. Code that is about to return or fail is the rarer way on (Ball and
// Larus's return heuristic, taken 28% of the time; a failure, rarer
// still), and splitting evenly at every early return of a long function
// would halve the runs of all that follows each one.
const (
	returnOdds = 0.28 / 0.72
	failOdds   = 1.0 / 1024
)

// branchOdds returns each edge's relative odds of being taken out of its
// block (1 unless the block's edges lead on differently).
// A block in fail calls a function that reports a failure and ends the
// run (failingFuncs), and so fails too.
func branchOdds(g *cfg.Graph, topo []int32, fail map[int32]bool) []float64 {
	const (
		goesOn = iota
		returns
		fails
	)
	// What a block leads to when it is straight-line code up to a
	// return or a failure: Exit returns; a block with no way out (an
	// unreachable) fails, as does one whose every way out fails.
	kind := make([]int8, len(g.Blocks))
	edgeKind := func(e int32) int8 {
		x := g.Edges[e]
		switch {
		case x.Back:
			return goesOn
		case x.Kind == cfg.EdgeNoReturn || x.Kind == cfg.EdgeThrow:
			return fails
		}
		return kind[x.To]
	}
	for i := len(topo) - 1; i >= 0; i-- {
		v := topo[i]
		out := g.Blocks[v].Out
		switch {
		case v == cfg.Exit:
			kind[v] = returns
		case len(out) == 0 || fail[v]:
			kind[v] = fails
		case len(out) == 1:
			kind[v] = edgeKind(out[0])
		default:
			kind[v] = fails
			for _, e := range out {
				if edgeKind(e) != fails {
					kind[v] = goesOn
				}
			}
		}
	}
	odds := make([]float64, len(g.Edges))
	for v := range g.Blocks {
		out := g.Blocks[v].Out
		best := int8(fails)
		for _, e := range out {
			best = min(best, edgeKind(e))
		}
		for _, e := range out {
			odds[e] = 1
			switch k := edgeKind(e); {
			case k == best:
			case k == returns:
				odds[e] = returnOdds
			case k == fails:
				odds[e] = failOdds
			}
		}
	}
	return odds
}

// staysIn reports whether edge e, from a node of loop l (index li),
// stays in it: a forward edge to one of its nodes, or a back edge to its
// header. In the function's body every forward edge stays.
func staysIn(g *cfg.Graph, l *loop, li int, e int32) bool {
	x := g.Edges[e]
	if x.Back {
		return l.parent >= 0 && x.To == l.header
	}
	return l.in[x.To]
}

// leave passes flow x of an exit edge e of a loop nested in l on: to the
// edge's target if it is in l, to l's iterations if it is l's back edge,
// and out of l otherwise.
func leave(g *cfg.Graph, l *loop, li int, e int32, x float64, acc []float64) {
	if staysIn(g, l, li, e) {
		if g.Edges[e].Back {
			l.back += x
		} else {
			acc[g.Edges[e].To] += x
		}
		return
	}
	l.exits[e] += x
}

// region returns the nodes of the loop with header h and latches ls: those
// reached from h along forward edges that reach a latch without passing
// h, through the back edges of loops nested in it too. Along forward
// edges alone, a nested loop whose handlers all go back to its header (an
// interpreter's dispatch loop inside the loop its calls and returns go
// round) would reach the latch only from its header, and the two loops
// would overlap instead of nesting.
func region(g *cfg.Graph, h int32, ls []int32) []bool {
	n := len(g.Blocks)
	from := make([]bool, n)
	from[h] = true
	stack := []int32{h}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range g.Blocks[v].Out {
			x := g.Edges[e]
			if !x.Back && !from[x.To] {
				from[x.To] = true
				stack = append(stack, x.To)
			}
		}
	}
	in := make([]bool, n)
	in[h] = true
	for _, v := range ls {
		if from[v] && !in[v] {
			in[v] = true
			stack = append(stack, v)
		}
	}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range g.Blocks[v].In {
			x := g.Edges[e]
			if from[x.From] && !in[x.From] {
				in[x.From] = true
				stack = append(stack, x.From)
			}
		}
	}
	return in
}

// dispatchLoops returns the interpreters' dispatch loops among loops
// (innermost first): for each br_table of at least dispatchLabels
// distinct targets (an instruction set's handlers; a switch whose labels
// share a few targets tests a character's class or a format's letter) in
// a block that reads memory (the next instruction's code) or follows one
// that does, the innermost loop around it that three quarters of the
// table's targets stay in, if the table is reached from the loop's header
// without running a loop nested in it. The loops around that one run the
// dispatch loop, not the switch: taken for dispatch loops too, nested
// ones would multiply their guessed iterations. A loop that must run
// other loops before its switch (a format string's flags and width
// before the conversion) does more per iteration and runs far fewer. (Go
// begins every function with a loop around a br_table, which resumes the
// function at a point its index selects: it reads no memory.)
func dispatchLoops(g *cfg.Graph, loops []*loop, ins *instrs) []int {
	var out []int
	for v := range ins.tables {
		if targets(g, v) < dispatchLabels {
			continue
		}
		load := ins.loads[v]
		for _, e := range g.Blocks[v].In {
			if x := g.Edges[e]; !x.Back && ins.loads[x.From] {
				load = true
			}
		}
		if !load {
			continue
		}
		for li, l := range loops {
			if l.in[v] && switchStays(g, l, v) {
				if !slices.Contains(out, li) && reachedDirectly(g, loops, li, v) {
					out = append(out, li)
				}
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// targets returns the distinct targets of block v's br_table.
func targets(g *cfg.Graph, v int32) int {
	n := 0
	for _, e := range g.Blocks[v].Out {
		if g.Edges[e].Kind == cfg.EdgeBrTable {
			n++
		}
	}
	return n
}

// reachedDirectly reports whether block v of loop li is reached from the
// loop's header without entering a loop nested in it that v is not in.
func reachedDirectly(g *cfg.Graph, loops []*loop, li int, v int32) bool {
	l := loops[li]
	blocked := map[int32]bool{}
	for lj, o := range loops {
		if lj != li && o.header != l.header && l.in[o.header] && len(o.nodes) < len(l.nodes) && !o.in[v] {
			blocked[o.header] = true
		}
	}
	seen := map[int32]bool{l.header: true}
	stack := []int32{l.header}
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if u == v {
			return true
		}
		for _, e := range g.Blocks[u].Out {
			x := g.Edges[e]
			if x.Back || !l.in[x.To] || seen[x.To] || blocked[x.To] {
				continue
			}
			seen[x.To] = true
			stack = append(stack, x.To)
		}
	}
	return false
}

// switchStays reports whether three quarters of the targets of block v's
// br_table at least stay in loop l (its nodes, or its header by a back
// edge): an interpreter's handlers go on to the next instruction, and few
// of them (halt, return) leave its loop.
func switchStays(g *cfg.Graph, l *loop, v int32) bool {
	var inside, all int
	for _, e := range g.Blocks[v].Out {
		x := g.Edges[e]
		if x.Kind != cfg.EdgeBrTable {
			continue
		}
		all++
		if x.Back && x.To == l.header || !x.Back && l.in[x.To] {
			inside++
		}
	}
	return all > 0 && 4*inside >= 3*all
}

// instrs is what estimateFunc needs of a function's instructions.
type instrs struct {
	calls  []call
	tables map[int32]int // br_table labels, by block
	loads  map[int32]bool
}

type call struct {
	op     wasm.Op
	callee uint32
	block  int32
}

// scan finds a function's calls and br_tables and the blocks they are in.
func scan(code *wasm.Code, f *Func) (*instrs, error) {
	type span struct {
		start, end int // module file offsets
		node       int32
	}
	var spans []span
	for v := 2; v < len(f.Graph.Blocks); v++ {
		b := f.Graph.Blocks[v]
		if b.End > b.Start && b.Same == 0 {
			spans = append(spans, span{f.Offset(b.Start), f.Offset(b.End-1) + 1, int32(v)})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	blockAt := func(rel uint32) int32 {
		off := code.OrigOff + int(rel)
		i := sort.Search(len(spans), func(i int) bool { return spans[i].start > off }) - 1
		if i < 0 || off >= spans[i].end {
			return -1
		}
		return spans[i].node
	}
	out := &instrs{tables: map[int32]int{}, loads: map[int32]bool{}}
	r := wasm.NewReader(code.Body, code.OrigOff, "code")
	r.Seek(int(code.ExprOff))
	var in wasm.Instr
	for !r.Done() {
		if err := r.Next(&in); err != nil {
			return nil, err
		}
		switch {
		case in.Op == wasm.OpCall || in.Op == wasm.OpReturnCall:
			if b := blockAt(in.Off); b >= 0 {
				out.calls = append(out.calls, call{in.Op, in.A, b})
			}
		case in.Op == wasm.OpCallIndirect || in.Op == wasm.OpReturnCallIndirect:
			if b := blockAt(in.Off); b >= 0 {
				out.calls = append(out.calls, call{in.Op, in.A, b})
			}
		case in.Op >= wasm.OpI32Load && in.Op <= opLastLoad:
			out.loads[blockAt(in.Off)] = true
		case in.Op == wasm.OpBrTable:
			if b := blockAt(in.Off); b >= 0 {
				out.tables[b] = len(in.Labels)
			}
		}
	}
	return out, nil
}

// invocations estimates how often each defined function is called: the
// exported functions and the start function once, and every call site
// its estimated runs. It also returns which functions recurse
// (propagate).
func invocations(m *wasm.Module, local []*funcEstimate) ([]float64, []bool) {
	n := len(local)
	imp := m.NumImportedFuncs
	def := func(fn uint32) int {
		if fn < imp || int(fn-imp) >= n {
			return -1
		}
		return int(fn - imp)
	}
	ext := make([]float64, n)
	for _, e := range m.Exports {
		if e.Kind == wasm.KindFunc {
			if i := def(e.Index); i >= 0 {
				ext[i] = 1
			}
		}
	}
	if m.HasStart {
		if i := def(m.Start); i >= 0 {
			ext[i] = 1
		}
	}
	if !slices.Contains(ext, 1) {
		for i := range ext {
			ext[i] = 1
		}
	}
	// The functions an indirect call of each type may reach: one group
	// per type, each function in one group at most.
	g := &callGraph{ext: ext, direct: make([][]arc, n), indirect: make([][]arc, n)}
	group := map[uint32]int{}
	seen := map[int]bool{}
	for _, el := range m.Elements {
		for _, fn := range el.Funcs {
			if i := def(fn); i >= 0 && !seen[i] {
				seen[i] = true
				gi, ok := group[m.Funcs[i]]
				if !ok {
					gi = len(g.groups)
					group[m.Funcs[i]] = gi
					g.groups = append(g.groups, nil)
				}
				g.groups[gi] = append(g.groups[gi], i)
			}
		}
	}
	for i, fe := range local {
		if fe == nil {
			continue
		}
		for _, s := range fe.sites {
			if s.freq == 0 {
				continue
			}
			switch s.op {
			case wasm.OpCall, wasm.OpReturnCall:
				if j := def(s.callee); j >= 0 {
					g.direct[i] = append(g.direct[i], arc{j, s.freq})
				}
			default:
				if gi, ok := group[s.callee]; ok {
					g.indirect[i] = append(g.indirect[i], arc{gi, s.freq / float64(len(g.groups[gi]))})
				}
			}
		}
	}
	return propagate(g)
}

// arc is a call graph edge: calls of to per call of its caller.
type arc struct {
	to   int
	freq float64
}

// callGraph is the estimated call graph. An indirect call reaches every
// function of a group (a table's functions of the call's type), each as
// often, so it is kept as one arc to the group rather than one to each
// member: a C++ module's virtual calls would otherwise make tens of
// millions of arcs.
type callGraph struct {
	ext []float64 // calls from outside, per function
	// direct holds each function's arcs to functions, indirect its arcs
	// to groups (calls of each member per call of the caller).
	direct, indirect [][]arc
	groups           [][]int // members of each group, disjoint
}

// propagate returns every function's calls: its outside calls ext plus
// each arc's calls times its caller's. Within a cycle of the call graph
// (recursion) a function's arcs into the cycle are scaled down to at most
// recursionCalls calls per call in all: recursion that ends makes fewer
// recursive calls than calls on average, and a loop around a recursive
// call would otherwise multiply without bound. Recursion then multiplies
// a cycle's calls from outside by 1/(1-recursionCalls) at most.
//
// It takes time linear in functions, arcs and group members: an arc to a
// group is summed per group, and what a member gets is read from the
// sums. Components are visited callers first, so every caller outside a
// function's component has added to its group's sum before the
// component is visited.
//
// It also returns, per function, whether it calls into its own component
// (recursion).
func propagate(g *callGraph) ([]float64, []bool) {
	n, ng := len(g.ext), len(g.groups)
	group := make([]int, n)
	for i := range group {
		group[i] = -1
	}
	for gi, members := range g.groups {
		for _, i := range members {
			group[i] = gi
		}
	}
	// Callers before callees: the components in topological order of
	// the graph of functions and groups (node n+gi is group gi), whose
	// components restricted to functions are the call graph's.
	sccs := components(n+ng, func(v int) []int {
		if v >= n {
			return g.groups[v-n]
		}
		out := make([]int, 0, len(g.direct[v])+len(g.indirect[v]))
		for _, a := range g.direct[v] {
			out = append(out, a.to)
		}
		for _, a := range g.indirect[v] {
			out = append(out, n+a.to)
		}
		return out
	})
	calls := slices.Clone(g.ext)
	comp := make([]int, n)
	for c, nodes := range sccs {
		for _, i := range nodes {
			if i < n {
				comp[i] = c
			}
		}
	}
	scale := make([]float64, n)
	recursive := make([]bool, n)
	add := make([]float64, n)
	pending := make([]float64, ng) // per member, from the callers visited
	inComp := make([]int, ng)      // members in the component visited
	share := make([]float64, ng)   // per member, in one round
	for c, nodes := range sccs {
		members := slices.DeleteFunc(nodes, func(i int) bool { return i >= n })
		for _, i := range members {
			if gi := group[i]; gi >= 0 {
				calls[i] = min(calls[i]+pending[gi], math.MaxFloat64/1e6)
				inComp[gi]++
			}
		}
		cyclic := false
		for _, i := range members {
			var in float64
			for _, a := range g.direct[i] {
				if comp[a.to] == c {
					in += a.freq
				}
			}
			for _, a := range g.indirect[i] {
				in += a.freq * float64(inComp[a.to])
			}
			scale[i] = 1
			if in > recursionCalls {
				scale[i] = recursionCalls / in
			}
			recursive[i] = in > 0
			cyclic = cyclic || in > 0
		}
		if cyclic {
			// Jacobi iteration of calls = base + scaled arcs: it
			// converges as fast as recursionCalls^rounds.
			// The arcs within the component, per member, once.
			base := make([]float64, len(members))
			within := make([][2][]arc, len(members))
			for j, i := range members {
				base[j] = calls[i]
				for _, a := range g.direct[i] {
					if comp[a.to] == c {
						within[j][0] = append(within[j][0], a)
					}
				}
				for _, a := range g.indirect[i] {
					if inComp[a.to] > 0 {
						within[j][1] = append(within[j][1], a)
					}
				}
			}
			for range recursionRounds {
				for j, i := range members {
					x := calls[i] * scale[i]
					for _, a := range within[j][0] {
						add[a.to] += x * a.freq
					}
					for _, a := range within[j][1] {
						share[a.to] += x * a.freq
					}
				}
				for _, i := range members {
					if gi := group[i]; gi >= 0 {
						add[i] += share[gi]
					}
				}
				settled := true
				for j, i := range members {
					if gi := group[i]; gi >= 0 {
						share[gi] = 0
					}
					x := min(base[j]+add[i], math.MaxFloat64/1e6)
					if math.Abs(x-calls[i]) > recursionPrecision*x {
						settled = false
					}
					calls[i], add[i] = x, 0
				}
				if settled {
					break
				}
			}
		}
		for _, i := range members {
			for _, a := range g.direct[i] {
				if comp[a.to] != c {
					calls[a.to] = min(calls[a.to]+calls[i]*a.freq, math.MaxFloat64/1e6)
				}
			}
			// Members in this component took their calls above; those
			// in components visited later read them from pending.
			for _, a := range g.indirect[i] {
				pending[a.to] = min(pending[a.to]+calls[i]*a.freq, math.MaxFloat64/1e6)
			}
		}
		for _, i := range members {
			if gi := group[i]; gi >= 0 {
				inComp[gi] = 0
			}
		}
	}
	return calls, recursive
}

// components returns the strongly connected components of a graph of n
// nodes in topological order (Tarjan's algorithm, iterative).
func components(n int, succ func(int) []int) [][]int {
	index := make([]int, n)
	low := make([]int, n)
	on := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var out [][]int
	next := 0
	type frame struct {
		v    int
		succ []int
		i    int
	}
	for root := range n {
		if index[root] >= 0 {
			continue
		}
		frames := []frame{{v: root, succ: succ(root)}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		on[root] = true
		for len(frames) > 0 {
			f := &frames[len(frames)-1]
			if f.i < len(f.succ) {
				w := f.succ[f.i]
				f.i++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					on[w] = true
					frames = append(frames, frame{v: w, succ: succ(w)})
				} else if on[w] {
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			frames = frames[:len(frames)-1]
			if len(frames) > 0 {
				p := frames[len(frames)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] == index[v] {
				var c []int
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					on[w] = false
					c = append(c, w)
					if w == v {
						break
					}
				}
				out = append(out, c)
			}
		}
	}
	slices.Reverse(out) // Tarjan finds callees' components first
	return out
}

// opLastLoad is i64.load32_u, the last of the loads: i32.load to it are
// the memory reads.
const opLastLoad wasm.Op = 0x35
