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
// evenly, and a loop is left once per entry, by its exits in proportion
// to how often they are reached. Across functions, the exported functions
// and the start function are called once; every call site adds its
// block's estimated runs, times its caller's calls, to its callee's (an
// indirect call spreads over the table's functions of its type), callers
// before callees, and recursion is unrolled a few times.
//
// The estimate decides nothing about exactness: the profile a plan made
// from it produces is the same whatever the weights.
package estimate

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/wasm"
)

// Trips per entry into a loop, and into an interpreter's dispatch loop.
const (
	loopTrips     = 10
	dispatchTrips = 10000
)

// dispatchLabels is the fewest br_table labels of a dispatch loop's
// switch.
const dispatchLabels = 8

// recursionRounds is how many times calls within a cycle of the call
// graph are followed.
const recursionRounds = 3

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

// Frequencies estimates, per defined function, the frequency of each edge
// of its DAG (a dummy edge's frequency is that of the graph edges it
// stands for). A function with no DAG, or estimated never to run, gets
// nil.
func Frequencies(m *wasm.Module, funcs []Func) ([][]float64, error) {
	n := len(m.Code)
	if len(funcs) != n {
		return nil, fmt.Errorf("estimate: %d functions for %d", len(funcs), n)
	}
	local := make([]*funcEstimate, n)
	for i, f := range funcs {
		if f.Graph == nil || f.DAG == nil {
			continue
		}
		fe, err := estimateFunc(&m.Code[i], &f)
		if err != nil {
			return nil, err
		}
		local[i] = fe
	}
	calls := invocations(m, local)
	var most float64
	for i, fe := range local {
		if fe != nil {
			most = max(most, damp(calls[i]*fe.total))
		}
	}
	out := make([][]float64, n)
	if most == 0 {
		return out, nil
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
	return out, nil
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
func estimateFunc(code *wasm.Code, f *Func) (*funcEstimate, error) {
	g := f.Graph
	n := len(g.Blocks)
	topo := cfg.ReversePostorder(n, func(v int32) []int32 { return g.Blocks[v].Out }, func(e int32) (int32, bool) {
		return g.Edges[e].To, !g.Edges[e].Back
	})
	pos := make([]int, n)
	for i := range pos {
		pos[i] = -1
	}
	for i, v := range topo {
		pos[v] = i
	}
	ins, err := scan(code, f)
	if err != nil {
		return nil, err
	}

	// The loops, innermost first, and the body as the last, outermost.
	latches := map[int32][]int32{}
	for _, e := range g.Edges {
		if e.Back && pos[e.To] >= 0 {
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
		if dispatches(g, l, ins) {
			l.trips = dispatchTrips
		}
		loops = append(loops, l)
	}
	sort.Slice(loops, func(a, b int) bool {
		if len(loops[a].nodes) != len(loops[b].nodes) {
			return len(loops[a].nodes) < len(loops[b].nodes)
		}
		return loops[a].header < loops[b].header
	})
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
			stay := 0
			for _, e := range out {
				if staysIn(g, l, li, e) {
					stay++
				}
			}
			for _, e := range out {
				switch {
				case staysIn(g, l, li, e):
					flow[e] = val / float64(stay)
					if g.Edges[e].Back {
						l.back += flow[e]
					} else {
						acc[g.Edges[e].To] += flow[e]
					}
				default:
					l.exits[e] += val / float64(len(out))
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
	return fe, nil
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
// reached from h and reaching a latch along forward edges.
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
			if !x.Back && from[x.From] && !in[x.From] {
				in[x.From] = true
				stack = append(stack, x.From)
			}
		}
	}
	return in
}

// dispatches reports whether loop l is an interpreter's dispatch loop: a
// block of it ends in a br_table of at least dispatchLabels labels, after
// reading memory (the next instruction's code) in that block or in one
// that leads to it, and most of the table's targets are in the loop. (Go
// begins every function with a loop around a br_table, which resumes the
// function at a point its index selects: it reads no memory.)
func dispatches(g *cfg.Graph, l *loop, ins *instrs) bool {
	for _, v := range l.nodes {
		labels, ok := ins.tables[v]
		if !ok || labels < dispatchLabels {
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
		var inside, all int
		for _, e := range g.Blocks[v].Out {
			if g.Edges[e].Kind != cfg.EdgeBrTable {
				continue
			}
			all++
			if x := g.Edges[e]; x.Back && x.To == l.header || !x.Back && l.in[x.To] {
				inside++
			}
		}
		if all > 0 && 2*inside > all {
			return true
		}
	}
	return false
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
// its estimated runs.
func invocations(m *wasm.Module, local []*funcEstimate) []float64 {
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
	// The functions an indirect call of each type may reach.
	byType := map[uint32][]int{}
	seen := map[int]bool{}
	for _, el := range m.Elements {
		for _, fn := range el.Funcs {
			if i := def(fn); i >= 0 && !seen[i] {
				seen[i] = true
				byType[m.Funcs[i]] = append(byType[m.Funcs[i]], i)
			}
		}
	}
	type arc struct {
		to   int
		freq float64
	}
	arcs := make([][]arc, n)
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
					arcs[i] = append(arcs[i], arc{j, s.freq})
				}
			default:
				ts := byType[s.callee]
				for _, j := range ts {
					arcs[i] = append(arcs[i], arc{j, s.freq / float64(len(ts))})
				}
			}
		}
	}
	// Callers before callees: the call graph's strongly connected
	// components in topological order.
	sccs := components(n, func(i int) []int {
		out := make([]int, len(arcs[i]))
		for j, a := range arcs[i] {
			out[j] = a.to
		}
		return out
	})
	calls := slices.Clone(ext)
	comp := make([]int, n)
	for c, members := range sccs {
		for _, i := range members {
			comp[i] = c
		}
	}
	for c, members := range sccs {
		// Within a cycle, calls are followed recursionRounds times.
		base := make([]float64, len(members))
		for j, i := range members {
			base[j] = calls[i]
		}
		for round := 0; round < recursionRounds; round++ {
			add := map[int]float64{}
			for _, i := range members {
				for _, a := range arcs[i] {
					if comp[a.to] == c {
						add[a.to] += calls[i] * a.freq
					}
				}
			}
			if len(add) == 0 {
				break
			}
			for j, i := range members {
				calls[i] = min(base[j]+add[i], math.MaxFloat64/1e6)
			}
		}
		for _, i := range members {
			for _, a := range arcs[i] {
				if comp[a.to] != c {
					calls[a.to] = min(calls[a.to]+calls[i]*a.freq, math.MaxFloat64/1e6)
				}
			}
		}
	}
	return calls
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
