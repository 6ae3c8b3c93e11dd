package estimate

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
)

// analyze returns a C program's module, its functions as the estimate
// takes them, and their names.
func analyze(t *testing.T, name string) (*wasm.Module, []Func, []string) {
	t.Helper()
	orig, err := os.ReadFile(testprogs.CProgramByName(t, name).Wasm)
	if err != nil {
		t.Fatal(err)
	}
	res, err := instrument.Instrument(orig, instrument.Options{Mode: func(*instrument.Func) instrument.Mode { return instrument.Mode{Kind: partition.None} }})
	if err != nil {
		t.Fatal(err)
	}
	m, err := wasm.Decode(orig)
	if err != nil {
		t.Fatal(err)
	}
	funcs := make([]Func, len(res.Funcs))
	names := make([]string, len(res.Funcs))
	for i, f := range res.Funcs {
		names[i] = f.Name
		if f.Num != nil {
			funcs[i] = Func{Graph: f.Graph, DAG: f.DAG, Offset: f.InstrOffset}
		}
	}
	return m, funcs, names
}

// TestFrequencies checks the estimate's form on every C program: whole,
// finite, non-negative numbers, one per DAG edge, none above Scale; the
// program's entry runs; and every function estimated to run has a
// caller estimated to run, or is exported.
func TestFrequencies(t *testing.T) {
	for _, p := range testprogs.CPrograms(t) {
		t.Run(p.Name, func(t *testing.T) {
			m, funcs, names := analyze(t, p.Name)
			est, err := Run(m, funcs)
			if err != nil {
				t.Fatal(err)
			}
			w := est.Weights
			ran := 0
			for i, f := range w {
				if f == nil {
					continue
				}
				ran++
				if funcs[i].DAG == nil || len(f) != len(funcs[i].DAG.Edges) {
					t.Fatalf("%s: %d frequencies", names[i], len(f))
				}
				for _, x := range f {
					if x < 0 || x != math.Trunc(x) || x > Scale || math.IsNaN(x) {
						t.Fatalf("%s: frequency %v", names[i], x)
					}
				}
			}
			start := -1
			for _, e := range m.Exports {
				if e.Name == "_start" {
					start = int(e.Index - m.NumImportedFuncs)
				}
			}
			if start < 0 || w[start] == nil {
				t.Fatalf("_start is not estimated to run")
			}
			if ran < 10 {
				t.Fatalf("only %d functions estimated to run", ran)
			}
		})
	}
}

// TestDispatchLoop checks that the estimate finds the interpreter's
// dispatch loop of vm (a loop around a switch on the next instruction's
// code) and wordfreq's scanner (a loop around a switch on the next
// character, some of whose arms leave an inner loop around it), and not
// printf_core's loop over a format string, whose switch on the conversion
// is reached through the loops that read the flags and the width, nor
// vfscanf's, whose switches' many labels share a few targets.
func TestDispatchLoop(t *testing.T) {
	for _, c := range []struct {
		prog      string
		want, not []string
	}{{"vm", []string{"__original_main"}, []string{"vfscanf"}}, {"wordfreq", []string{"scan"}, []string{"printf_core"}}, {"sort", nil, []string{"printf_core"}}} {
		got := dispatchingFuncs(t, c.prog)
		for _, f := range c.want {
			if !slices.Contains(got, f) {
				t.Errorf("%s: dispatch loops in %q, want one in %s", c.prog, got, f)
			}
		}
		for _, f := range c.not {
			if slices.Contains(got, f) {
				t.Errorf("%s: dispatch loops in %q, want none in %s", c.prog, got, f)
			}
		}
	}
}

// dispatchingFuncs returns the functions of a C program in which the
// estimate finds dispatch loops.
func dispatchingFuncs(t *testing.T, name string) []string {
	m, funcs, names := analyze(t, name)
	var found []string
	for i, f := range funcs {
		if f.Graph == nil {
			continue
		}
		ins, err := scan(&m.Code[i], &f)
		if err != nil {
			t.Fatal(err)
		}
		if len(dispatchLoops(f.Graph, loopsOf(f.Graph), ins)) > 0 && !slices.Contains(found, names[i]) {
			found = append(found, names[i])
		}
	}
	return found
}

// loopsOf returns a graph's loops as estimateFunc finds them, innermost
// first.
func loopsOf(g *cfg.Graph) []*loop {
	topo := cfg.ReversePostorder(len(g.Blocks), func(v int32) []int32 { return g.Blocks[v].Out }, func(e int32) (int32, bool) {
		return g.Edges[e].To, !g.Edges[e].Back
	})
	return findLoops(g, topo)
}

// TestComponents checks the call graph's components come callers first.
func TestComponents(t *testing.T) {
	// 0 -> 1 <-> 2 -> 3, 4 alone, 3 -> 3.
	succ := [][]int{{1}, {2}, {1, 3}, {3}, nil}
	cs := components(5, func(i int) []int { return succ[i] })
	at := map[int]int{}
	for c, members := range cs {
		for _, v := range members {
			at[v] = c
		}
	}
	if len(cs) != 4 || at[1] != at[2] {
		t.Fatalf("components %v", cs)
	}
	for v, out := range succ {
		for _, w := range out {
			if at[v] > at[w] {
				t.Fatalf("components %v: %d before its caller %d", cs, w, v)
			}
		}
	}
}

// TestPropagate checks the calls propagate finds on random call graphs,
// with indirect calls to groups, against the linear system they solve,
// calls = outside calls + the arcs' calls (an arc to a group one arc to
// each member), each arc within a cycle scaled as propagate scales it,
// solved by elimination, its cycles found by reachability; and against
// propagating over those arcs one by one, as the estimate did before it
// summed a group's calls (propagate without groups), within rounding.
func TestPropagate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 3000 {
		n := 1 + rng.IntN(8)
		g := &callGraph{ext: make([]float64, n), direct: make([][]arc, n), indirect: make([][]arc, n)}
		freq := func() float64 {
			if rng.IntN(4) == 0 {
				return rng.Float64() * 0.2
			}
			return rng.Float64() * 3
		}
		for _, i := range rng.Perm(n) {
			switch x := rng.IntN(3); {
			case x == 0 && len(g.groups) > 0:
				gi := rng.IntN(len(g.groups))
				g.groups[gi] = append(g.groups[gi], i)
			case x == 1:
				g.groups = append(g.groups, []int{i})
			}
		}
		for i := range n {
			for range rng.IntN(4) {
				if len(g.groups) > 0 && rng.IntN(2) == 0 {
					gi := rng.IntN(len(g.groups))
					g.indirect[i] = append(g.indirect[i], arc{gi, freq() / float64(len(g.groups[gi]))})
				} else {
					g.direct[i] = append(g.direct[i], arc{rng.IntN(n), freq()})
				}
			}
			if rng.IntN(2) == 0 {
				g.ext[i] = float64(1 + rng.IntN(3))
			}
		}
		arcs := make([][]arc, n)
		for i := range n {
			arcs[i] = slices.Clone(g.direct[i])
			for _, a := range g.indirect[i] {
				for _, j := range g.groups[a.to] {
					arcs[i] = append(arcs[i], arc{j, a.freq})
				}
			}
		}
		got, recursive := propagate(g)
		old, _ := propagate(&callGraph{ext: g.ext, direct: arcs, indirect: make([][]arc, n)})
		want := solveCalls(g.ext, arcs)
		// Recursive: a call of i reaches i again.
		reach := make([][]bool, n)
		for i := range n {
			reach[i] = make([]bool, n)
			reach[i][i] = true
			for stack := []int{i}; len(stack) > 0; {
				v := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, a := range arcs[v] {
					if !reach[i][a.to] {
						reach[i][a.to] = true
						stack = append(stack, a.to)
					}
				}
			}
		}
		for i := range n {
			rec := slices.ContainsFunc(arcs[i], func(a arc) bool { return a.freq > 0 && reach[a.to][i] })
			if recursive[i] != rec {
				t.Fatalf("trial %d: %+v: function %d recursive %v, want %v", trial, g, i, recursive[i], rec)
			}
		}
		for i := range n {
			if math.Abs(got[i]-want[i]) > 1e-6*max(1, want[i]) {
				t.Fatalf("trial %d: %+v: function %d has %v calls, want %v", trial, g, i, got[i], want[i])
			}
			if math.Abs(got[i]-old[i]) > 1e-9*max(1, old[i]) {
				t.Fatalf("trial %d: %+v: function %d has %v calls, %v arc by arc", trial, g, i, got[i], old[i])
			}
		}
	}
}

// solveCalls solves calls = ext + the arcs' calls, each arc within a
// cycle scaled as propagate scales it, by elimination.
func solveCalls(ext []float64, arcs [][]arc) []float64 {
	n := len(ext)
	// reach[i][j]: a path of one arc or more from i to j.
	reach := make([][]bool, n)
	for i := range reach {
		reach[i] = make([]bool, n)
		for _, a := range arcs[i] {
			reach[i][a.to] = true
		}
	}
	for k := range n {
		for i := range n {
			for j := range n {
				reach[i][j] = reach[i][j] || reach[i][k] && reach[k][j]
			}
		}
	}
	cyc := func(i, j int) bool { return i == j && reach[i][i] || reach[i][j] && reach[j][i] }
	// (I - A'^T) c = ext.
	mat := make([][]float64, n)
	for i := range mat {
		mat[i] = make([]float64, n+1)
		mat[i][i] = 1
		mat[i][n] = ext[i]
	}
	for i := range n {
		var in float64
		for _, a := range arcs[i] {
			if cyc(i, a.to) {
				in += a.freq
			}
		}
		for _, a := range arcs[i] {
			f := a.freq
			if cyc(i, a.to) && in > recursionCalls {
				f *= recursionCalls / in
			}
			mat[a.to][i] -= f
		}
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(mat[r][c]) > math.Abs(mat[p][c]) {
				p = r
			}
		}
		mat[c], mat[p] = mat[p], mat[c]
		for r := range n {
			if r != c && mat[r][c] != 0 {
				q := mat[r][c] / mat[c][c]
				for k := c; k <= n; k++ {
					mat[r][k] -= q * mat[c][k]
				}
			}
		}
	}
	out := make([]float64, n)
	for i := range n {
		out[i] = mat[i][n] / mat[i][i]
	}
	return out
}

// TestRecursionBounded checks that a function calling itself from a loop
// many times per call is called loopTrips times per call from outside,
// not without bound, whether it calls itself directly or through a group.
func TestRecursionBounded(t *testing.T) {
	for _, g := range []*callGraph{
		{ext: []float64{1, 0}, direct: [][]arc{{{1, 2}}, {{1, 1000}, {1, 500}}}, indirect: make([][]arc, 2)},
		{ext: []float64{1, 0}, direct: [][]arc{{{1, 2}}, nil}, indirect: [][]arc{nil, {{0, 1000}, {0, 500}}}, groups: [][]int{{1}}},
	} {
		got, recursive := propagate(g)
		if want := 2 * float64(loopTrips); math.Abs(got[1]-want) > 1e-6*want {
			t.Fatalf("%+v: %v calls, want %v", g, got[1], want)
		}
		if recursive[0] || !recursive[1] {
			t.Fatalf("%+v: recursive %v, want [false true]", g, recursive)
		}
	}
}

// TestBranchOdds checks the odds of a branch between going on, returning
// and failing: an early return, a check that traps, a branch whose every
// way fails, and a join whose ways both go on.
func TestBranchOdds(t *testing.T) {
	// 2: early return to 3 (-> exit) or on to 4; 4: a trap at 5 or on to
	// 9; 9: to 6, whose ways 7 and 8 both trap, or on to 10; 10: to 11 or
	// 12, both on to 12.
	g := &cfg.Graph{}
	add := func(from, to int32, k cfg.EdgeKind) int32 {
		for int(max(from, to)) >= len(g.Blocks) {
			g.Blocks = append(g.Blocks, cfg.Block{})
		}
		e := int32(len(g.Edges))
		g.Edges = append(g.Edges, cfg.Edge{From: from, To: to, Kind: k})
		g.Blocks[from].Out = append(g.Blocks[from].Out, e)
		g.Blocks[to].In = append(g.Blocks[to].In, e)
		return e
	}
	add(cfg.Entry, 2, cfg.EdgeEntry)
	early := add(2, 3, cfg.EdgeBrIfTaken)
	on1 := add(2, 4, cfg.EdgeBrIfNot)
	add(3, cfg.Exit, cfg.EdgeReturn)
	trap := add(4, 5, cfg.EdgeIfThen)
	on2 := add(4, 9, cfg.EdgeIfElse)
	noret := add(9, 6, cfg.EdgeIfThen)
	add(6, 7, cfg.EdgeIfThen)
	add(6, 8, cfg.EdgeIfElse)
	on3 := add(9, 10, cfg.EdgeIfElse)
	a := add(10, 11, cfg.EdgeIfThen)
	b := add(10, 12, cfg.EdgeIfElse)
	add(11, 12, cfg.EdgeFallthrough)
	add(12, cfg.Exit, cfg.EdgeReturn)
	topo := cfg.ReversePostorder(len(g.Blocks), func(v int32) []int32 { return g.Blocks[v].Out }, func(e int32) (int32, bool) { return g.Edges[e].To, true })
	odds := branchOdds(g, topo, nil)
	for _, c := range []struct {
		e    int32
		want float64
	}{{early, returnOdds}, {on1, 1}, {trap, failOdds}, {on2, 1}, {noret, failOdds}, {on3, 1}, {a, 1}, {b, 1}} {
		if odds[c.e] != c.want {
			t.Errorf("edge %d -> %d: odds %v, want %v", g.Edges[c.e].From, g.Edges[c.e].To, odds[c.e], c.want)
		}
	}
	// Block 11 calls a failing function (a Go nil check's panic, which
	// returns to be unwound by hand): it fails, though it goes on.
	odds = branchOdds(g, topo, map[int32]bool{11: true})
	if odds[a] != failOdds || odds[b] != 1 {
		t.Errorf("a call that fails: odds %v and %v, want %v and 1", odds[a], odds[b], failOdds)
	}
}

// TestFailingName checks the names taken for functions that report a
// failure and end the run.
func TestFailingName(t *testing.T) {
	for _, name := range []string{"abort", "__assert_fail", "runtime.sigpanic", "runtime.panicIndex", "runtime.goPanicIndex", "runtime.throw", "core::panicking::panic_fmt", "_ZN4core9panicking9panic_fmt17h0123456789abcdefE", "__cxa_throw", "_ZSt20__throw_length_errorPKc"} {
		if !failingName(name) {
			t.Errorf("%s is not taken to fail", name)
		}
	}
	// exit ends the run the normal way, _start's last call.
	for _, name := range []string{"", "main", "exit", "runtime.mallocgc", "printf"} {
		if failingName(name) {
			t.Errorf("%s is taken to fail", name)
		}
	}
}

// graphBuilder builds a control-flow graph edge by edge.
type graphBuilder struct{ g cfg.Graph }

func (b *graphBuilder) add(from, to int32, k cfg.EdgeKind) int32 {
	for int(max(from, to)) >= len(b.g.Blocks) {
		b.g.Blocks = append(b.g.Blocks, cfg.Block{})
	}
	e := int32(len(b.g.Edges))
	b.g.Edges = append(b.g.Edges, cfg.Edge{From: from, To: to, Kind: k, Back: k == cfg.EdgeBr && to <= from})
	b.g.Blocks[from].Out = append(b.g.Blocks[from].Out, e)
	b.g.Blocks[to].In = append(b.g.Blocks[to].In, e)
	return e
}

// TestHostBound checks which functions the estimate takes for calls to
// the host, on a module of one import and these defined functions (each
// call in block 2 unless said):
//
//	0 wrapper: calls the import, returns
//	1 checks its argument, returns early, else calls 0, then checks its result
//	2 a loop that calls 1 until done (the retry of a partial write)
//	3 calls 2 on one of two even ways (a flush when a buffer is full)
//	4 a loop around a call of 3, its every iteration
//	5 calls 0 on its rarer way only (before an early return)
//	6 calls 7 and 7 calls 6, neither the host
//
// 0, 1 and 2 are bound: 1 reaches the host on the way on, not the early
// return; 2 on its first iteration. 3 and 4 are not, 5 is not, and a
// cycle without a host call is not.
func TestHostBound(t *testing.T) {
	const imp = 1
	graphs := make([]*cfg.Graph, 8)
	calls := make([][]call, 8)
	direct := func(f int, callee uint32, block int32) {
		calls[f] = append(calls[f], call{wasm.OpCall, callee, block})
	}
	straight := func(f int, callee uint32) {
		var b graphBuilder
		b.add(cfg.Entry, 2, cfg.EdgeEntry)
		b.add(2, cfg.Exit, cfg.EdgeReturn)
		graphs[f] = &b.g
		direct(f, callee, 2)
	}
	straight(0, 0)
	{
		var b graphBuilder
		b.add(cfg.Entry, 2, cfg.EdgeEntry)
		b.add(2, 3, cfg.EdgeBrIfTaken)
		b.add(3, cfg.Exit, cfg.EdgeReturn)
		b.add(2, 4, cfg.EdgeBrIfNot)
		b.add(4, 5, cfg.EdgeIfThen)
		b.add(4, 6, cfg.EdgeIfElse)
		b.add(5, cfg.Exit, cfg.EdgeReturn)
		b.add(6, cfg.Exit, cfg.EdgeReturn)
		graphs[1] = &b.g
		direct(1, imp+0, 4)
	}
	{
		var b graphBuilder
		b.add(cfg.Entry, 2, cfg.EdgeEntry)
		b.add(2, 3, cfg.EdgeFallthrough)
		b.add(3, 2, cfg.EdgeBr)
		b.add(3, cfg.Exit, cfg.EdgeReturn)
		graphs[2] = &b.g
		direct(2, imp+1, 2)
	}
	{
		var b graphBuilder
		b.add(cfg.Entry, 2, cfg.EdgeEntry)
		b.add(2, 3, cfg.EdgeIfThen)
		b.add(2, 4, cfg.EdgeIfElse)
		b.add(3, 4, cfg.EdgeFallthrough)
		b.add(4, cfg.Exit, cfg.EdgeReturn)
		graphs[3] = &b.g
		direct(3, imp+2, 3)
	}
	{
		var b graphBuilder
		b.add(cfg.Entry, 2, cfg.EdgeEntry)
		b.add(2, 3, cfg.EdgeFallthrough)
		b.add(3, 2, cfg.EdgeBr)
		b.add(3, cfg.Exit, cfg.EdgeReturn)
		graphs[4] = &b.g
		direct(4, imp+3, 2)
	}
	{
		var b graphBuilder
		b.add(cfg.Entry, 2, cfg.EdgeEntry)
		b.add(2, 3, cfg.EdgeBrIfTaken)
		b.add(3, cfg.Exit, cfg.EdgeReturn)
		b.add(2, 4, cfg.EdgeBrIfNot)
		b.add(4, 5, cfg.EdgeIfThen)
		b.add(4, 6, cfg.EdgeIfElse)
		b.add(5, cfg.Exit, cfg.EdgeReturn)
		b.add(6, cfg.Exit, cfg.EdgeReturn)
		graphs[5] = &b.g
		direct(5, imp+0, 3)
	}
	straight(6, imp+7)
	straight(7, imp+6)
	m := &wasm.Module{NumImportedFuncs: imp}
	funcs := make([]Func, len(graphs))
	local := make([]*funcEstimate, len(graphs))
	for i, g := range graphs {
		funcs[i] = Func{Graph: g}
		local[i] = &funcEstimate{calls: calls[i]}
	}
	got := hostBound(m, funcs, local)
	want := []bool{true, true, true, false, false, false, false, false}
	if !slices.Equal(got, want) {
		t.Fatalf("host-bound %v, want %v", got, want)
	}
}

// TestHostBoundC checks, in a C program, that the output path's system
// call wrappers and the write that retries are taken for calls to the
// host, and that the functions that format and buffer the output, which
// call them only when a buffer fills, are not; and that the estimate
// calls a host-bound function hostCalls times at most.
func TestHostBoundC(t *testing.T) {
	m, funcs, names := analyze(t, "records")
	local := make([]*funcEstimate, len(funcs))
	for i, f := range funcs {
		if f.Graph == nil {
			continue
		}
		fe, err := estimateFunc(&m.Code[i], &f, nil)
		if err != nil {
			t.Fatal(err)
		}
		local[i] = fe
	}
	bound := hostBound(m, funcs, local)
	is := map[string]bool{}
	for i, b := range bound {
		is[names[i]] = b
	}
	for _, f := range []string{"__wasi_fd_write", "writev", "__stdio_write"} {
		if !is[f] {
			t.Errorf("%s is not host-bound", f)
		}
	}
	for _, f := range []string{"printf_core", "__fwritex", "memcpy", "__original_main"} {
		if is[f] {
			t.Errorf("%s is host-bound", f)
		}
	}
	loose, _ := invocations(m, local)
	calls, _ := callsOf(m, funcs, local)
	capped := 0
	for i, b := range bound {
		switch {
		case b && calls[i] > hostCalls:
			t.Errorf("%s: %v calls, want %v at most", names[i], calls[i], float64(hostCalls))
		case !b && calls[i] != loose[i]:
			t.Errorf("%s: %v calls, want %v", names[i], calls[i], loose[i])
		case b && loose[i] > hostCalls:
			capped++
		}
	}
	if capped == 0 {
		t.Errorf("no host-bound function estimated above %d calls before the bound", hostCalls)
	}
}

// TestLoopsNest checks that the loops the estimate finds nest: an
// interpreter's dispatch loop (3, a switch whose handlers 4 and 5 go back
// to it) inside the loop its calls go round (2, which handler 6 goes
// back to) is inside that loop, though its handlers reach 6 only through
// its header; and that in every function of the C programs any two loops
// are nested or disjoint.
func TestLoopsNest(t *testing.T) {
	var b graphBuilder
	b.add(cfg.Entry, 2, cfg.EdgeEntry)
	b.add(2, 3, cfg.EdgeFallthrough)
	for _, h := range []int32{4, 5, 6, 7} {
		b.add(3, h, cfg.EdgeBrTable)
	}
	b.add(4, 3, cfg.EdgeBr)
	b.add(5, 3, cfg.EdgeBr)
	b.add(6, 2, cfg.EdgeBr)
	b.add(7, cfg.Exit, cfg.EdgeReturn)
	loops := loopsOf(&b.g)
	if len(loops) != 2 || loops[0].header != 3 || loops[1].header != 2 {
		t.Fatalf("loops at %v", loops)
	}
	if got := slices.Sorted(slices.Values(loops[1].nodes)); !slices.Equal(got, []int32{2, 3, 4, 5, 6}) {
		t.Fatalf("the outer loop has nodes %v, want 2 to 6", got)
	}
	nested(t, "dispatch", loops)
	for _, p := range testprogs.CPrograms(t) {
		_, funcs, names := analyze(t, p.Name)
		for i, f := range funcs {
			if f.Graph != nil {
				nested(t, p.Name+" "+names[i], loopsOf(f.Graph))
			}
		}
	}
}

// nested fails unless any two of loops are nested or disjoint.
func nested(t *testing.T, what string, loops []*loop) {
	t.Helper()
	for i, a := range loops {
		for _, b := range loops[i+1:] {
			var both, onlyA, onlyB bool
			for v := range a.in {
				both = both || a.in[v] && b.in[v]
				onlyA = onlyA || a.in[v] && !b.in[v]
				onlyB = onlyB || b.in[v] && !a.in[v]
			}
			if both && onlyA && onlyB {
				t.Fatalf("%s: the loops at %d and %d overlap", what, a.header, b.header)
			}
		}
	}
}

// TestRepeated checks which functions the estimate has called over and
// over: in records, the string functions its formatting calls for every
// record (__strchrnul, __stpcpy) are, and main, _start and the exit path
// are not.
func TestRepeated(t *testing.T) {
	m, funcs, names := analyze(t, "records")
	est, err := Run(m, funcs)
	if err != nil {
		t.Fatal(err)
	}
	if len(est.Repeated) != len(funcs) {
		t.Fatalf("%d of %d functions", len(est.Repeated), len(funcs))
	}
	want := map[string]bool{"__strchrnul": true, "__stpcpy": true, "__original_main": false, "_start": false, "exit": false}
	for i, name := range names {
		if r, ok := want[name]; ok {
			if est.Repeated[i] != r {
				t.Errorf("%s: repeated %v, want %v", name, est.Repeated[i], r)
			}
			delete(want, name)
		}
	}
	if len(want) > 0 {
		t.Errorf("no functions %v", want)
	}
}
