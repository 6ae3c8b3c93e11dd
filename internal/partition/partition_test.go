package partition

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/dagtest"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
	"github.com/pathprof/pathprof/profile"
)

// checkReduced checks the structure of a reduced DAG against its DAG: every
// live edge owned once, dummies free of the entry and exit, Topo a
// topological order of exactly the nodes with edges, and each reduced edge
// connecting the nodes (or dummies) its DAG edges connect.
func checkReduced(t *testing.T, d *cfg.DAG, red *Reduced) {
	t.Helper()
	live := Live(d)
	owned := make([]int, len(d.Edges))
	for i, e := range red.Edges {
		if len(e.Orig) == 0 {
			t.Fatalf("reduced edge %d stands for nothing", i)
		}
		for _, o := range e.Orig {
			owned[o]++
			if red.Owner[o] != int32(i) {
				t.Fatalf("edge %d: owner %d, listed by %d", o, red.Owner[o], i)
			}
		}
	}
	nodeOf := make([]int32, d.NumNodes) // DAG node -> reduced node
	for v := range nodeOf {
		nodeOf[v] = int32(v)
	}
	for j, dm := range red.Dummies {
		if dm.Node != int32(red.DAGNodes+j) {
			t.Fatalf("dummy %d has node %d", j, dm.Node)
		}
		if len(dm.Nodes) < 3 {
			t.Fatalf("dummy %d replaces %v", j, dm.Nodes)
		}
		for _, v := range dm.Nodes {
			if v == cfg.Entry || v == cfg.Exit {
				t.Fatalf("dummy %d swallowed node %d", j, v)
			}
			nodeOf[v] = dm.Node
		}
		for _, o := range dm.Edges {
			owned[o]++
			if red.Owner[o] != -int32(j)-1 {
				t.Fatalf("edge %d inside dummy %d has owner %d", o, j, red.Owner[o])
			}
		}
	}
	for i, n := range owned {
		if live[i] != (n == 1) || n > 1 {
			t.Fatalf("edge %d (live %v) owned %d times", i, live[i], n)
		}
		if !live[i] {
			continue
		}
		e := d.Edges[i]
		f, to := nodeOf[e.From], nodeOf[e.To]
		if o := red.Owner[i]; o >= 0 {
			if re := red.Edges[o]; re.From != f || re.To != to {
				t.Fatalf("edge %d %d->%d is reduced edge %d->%d", i, f, to, re.From, re.To)
			}
		} else if dn := red.Dummies[-o-1].Node; f != dn || to != dn {
			t.Fatalf("edge %d inside dummy %d connects %d->%d", i, dn, f, to)
		}
	}
	pos := make([]int, red.NumNodes)
	for i := range pos {
		pos[i] = -1
	}
	for i, v := range red.Topo {
		pos[v] = i
	}
	if len(red.Edges) > 0 && (red.Topo[0] != cfg.Entry || red.Topo[len(red.Topo)-1] != cfg.Exit) {
		t.Fatalf("Topo %v", red.Topo)
	}
	seen := make([]bool, red.NumNodes)
	for i, e := range red.Edges {
		if pos[e.From] < 0 || pos[e.To] <= pos[e.From] {
			t.Fatalf("reduced edge %d %d->%d against Topo", i, e.From, e.To)
		}
		if !slices.Contains(red.Out[e.From], int32(i)) || !slices.Contains(red.In[e.To], int32(i)) {
			t.Fatalf("reduced edge %d missing from its lists", i)
		}
		seen[e.From], seen[e.To] = true, true
	}
	for _, v := range red.Topo {
		if !seen[v] {
			t.Fatalf("Topo lists node %d without edges", v)
		}
	}
	// Parallel edges are merged.
	for v, out := range red.Out {
		var tos []int32
		for _, e := range out {
			tos = append(tos, red.Edges[e].To)
		}
		slices.Sort(tos)
		if len(slices.Compact(tos)) != len(out) {
			t.Fatalf("node %d has parallel out edges", v)
		}
	}
}

// checkClasses enumerates the DAG's paths and checks that each uses only
// the edges of exactly one class, that every class has a path, and that the
// classes' edges are the live edges.
func checkClasses(t *testing.T, d *cfg.DAG, classes [][]bool, tau int) bool {
	t.Helper()
	if len(classes) < 1 || len(classes) > max(tau, 1) {
		t.Fatalf("%d classes for tau %d", len(classes), tau)
	}
	paths, ok := dagtest.Paths(d, cfg.Entry, 5000)
	if !ok {
		return false
	}
	hits := make([]int, len(classes))
	for _, p := range paths {
		n := 0
		for ci, c := range classes {
			in := true
			for _, e := range p {
				in = in && c[e]
			}
			if in {
				n++
				hits[ci]++
			}
		}
		if n != 1 {
			t.Fatalf("path %v is interesting in %d classes", p, n)
		}
	}
	if len(paths) > 0 {
		for ci, h := range hits {
			if h == 0 {
				t.Fatalf("class %d has no path", ci)
			}
		}
	}
	live := Live(d)
	for e, l := range live {
		in := false
		for _, c := range classes {
			in = in || c[e]
		}
		if in != l {
			t.Fatalf("edge %d live %v, in a class %v", e, l, in)
		}
	}
	return true
}

func TestClassesPartitionPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	checked, multi, dummies := 0, 0, 0
	for it := range 3000 {
		var d *cfg.DAG
		if it%2 == 0 {
			d = randDAG(r, 12)
		} else {
			d = structuredDAG(t, r, 2+r.IntN(14))
		}
		red := Reduce(d)
		checkReduced(t, d, red)
		dummies += len(red.Dummies)
		// Random frequencies: growing the heaviest prefix first must keep
		// the classes a partition of the paths.
		w := make([]float64, len(d.Edges))
		for i := range w {
			w[i] = float64(r.IntN(100))
		}
		for _, tau := range []int{1, 2, 3, 5, 8, Tau(d, 4)} {
			for _, classes := range [][][]bool{red.Classes(tau), red.WeightedClasses(tau, w)} {
				if checkClasses(t, d, classes, tau) {
					checked++
					if len(classes) > 1 {
						multi++
					}
				}
			}
		}
	}
	t.Logf("%d checks, %d with several classes, %d dummies", checked, multi, dummies)
	if checked < 15000 || multi < 5000 || dummies < 1000 {
		t.Fatalf("too few interesting cases: %d checks, %d split, %d dummies", checked, multi, dummies)
	}
}

// dummySets lists the DAG nodes of each dummy, sorted for comparison.
func dummySets(red *Reduced) [][]int32 {
	var s [][]int32
	for _, dm := range red.Dummies {
		s = append(s, dm.Nodes)
	}
	slices.SortFunc(s, slices.Compare)
	return s
}

func TestReduceHandMade(t *testing.T) {
	E, X := int32(cfg.Entry), int32(cfg.Exit)
	cases := []struct {
		name    string
		d       *cfg.DAG
		dummies [][]int32
		edges   int // reduced edges
	}{
		{"diamond", edgesDAG(6, [2]int32{E, 2}, [2]int32{2, 3}, [2]int32{2, 4}, [2]int32{3, 5}, [2]int32{4, 5}, [2]int32{5, X}),
			[][]int32{{2, 3, 4, 5}}, 2},
		{"triangle", edgesDAG(5, [2]int32{E, 2}, [2]int32{2, 3}, [2]int32{2, 4}, [2]int32{3, 4}, [2]int32{4, X}),
			[][]int32{{2, 3, 4}}, 2},
		// if (p) { if (q) A else B } else C: the inner diamond, then the
		// outer one around it.
		{"nested if/else", edgesDAG(9,
			[2]int32{E, 2}, [2]int32{2, 3}, [2]int32{2, 7}, [2]int32{3, 4}, [2]int32{3, 5},
			[2]int32{4, 6}, [2]int32{5, 6}, [2]int32{6, 8}, [2]int32{7, 8}, [2]int32{8, X}),
			[][]int32{{2, 3, 4, 5, 6, 7, 8}}, 2},
		// if (p) { if (q) A } else C, then if (r) D: a triangle in an
		// arm, the diamond around it, and a triangle after it.
		{"triangle in diamond, then triangle", edgesDAG(12,
			[2]int32{E, 2}, [2]int32{2, 3}, [2]int32{2, 7}, [2]int32{3, 4}, [2]int32{3, 5},
			[2]int32{4, 5}, [2]int32{5, 8}, [2]int32{7, 8}, [2]int32{8, 9}, [2]int32{8, 10},
			[2]int32{9, 10}, [2]int32{10, 11}, [2]int32{11, X}),
			[][]int32{{2, 3, 4, 5, 7, 8, 9, 10}}, 3},
		// Two if/else in a row with an if/else in between that calls out
		// to the exit: the return breaks the second structure.
		{"return in arm", edgesDAG(10,
			[2]int32{E, 2}, [2]int32{2, 3}, [2]int32{2, 4}, [2]int32{3, 5}, [2]int32{4, 5},
			[2]int32{5, 6}, [2]int32{5, 7}, [2]int32{6, X}, [2]int32{6, 8}, [2]int32{7, 8}, [2]int32{8, X}),
			[][]int32{{2, 3, 4, 5}}, 7},
		{"diamond from the entry", edgesDAG(5, [2]int32{E, 2}, [2]int32{E, 3}, [2]int32{2, 4}, [2]int32{3, 4}, [2]int32{4, X}),
			nil, 5},
		{"diamond into the exit", edgesDAG(5, [2]int32{E, 2}, [2]int32{2, 3}, [2]int32{2, 4}, [2]int32{3, X}, [2]int32{4, X}),
			nil, 5},
		// a -> x -> d around the diamond, with x also entered from
		// elsewhere: collapsing would put the dummy on a cycle.
		{"way around", edgesDAG(8,
			[2]int32{E, 2}, [2]int32{E, 6}, [2]int32{2, 3}, [2]int32{2, 4}, [2]int32{3, 5},
			[2]int32{4, 5}, [2]int32{2, 7}, [2]int32{6, 7}, [2]int32{7, 5}, [2]int32{5, X}),
			nil, 10},
		// The end also entered from elsewhere, but a has no other way out.
		{"end entered from elsewhere", edgesDAG(7,
			[2]int32{E, 2}, [2]int32{E, 6}, [2]int32{2, 3}, [2]int32{2, 4}, [2]int32{3, 5},
			[2]int32{4, 5}, [2]int32{6, 5}, [2]int32{5, X}),
			[][]int32{{2, 3, 4, 5}}, 4},
		// Parallel edges a => b count as one: b has one in edge.
		{"parallel arm", edgesDAG(6, [2]int32{E, 2}, [2]int32{2, 3}, [2]int32{2, 3}, [2]int32{2, 4},
			[2]int32{3, 5}, [2]int32{4, 5}, [2]int32{5, X}),
			[][]int32{{2, 3, 4, 5}}, 2},
		{"switch with three arms", edgesDAG(7, [2]int32{E, 2}, [2]int32{2, 3}, [2]int32{2, 4}, [2]int32{2, 5},
			[2]int32{3, 6}, [2]int32{4, 6}, [2]int32{5, 6}, [2]int32{6, X}),
			[][]int32{{2, 3, 4, 5, 6}}, 2},
		{"two diamonds in a row", edgesDAG(9, [2]int32{E, 2}, [2]int32{2, 3}, [2]int32{2, 4}, [2]int32{3, 5},
			[2]int32{4, 5}, [2]int32{5, 6}, [2]int32{5, 7}, [2]int32{6, 8}, [2]int32{7, 8}, [2]int32{8, X}),
			[][]int32{{2, 3, 4, 5, 6, 7, 8}}, 2},
		// An arm with two blocks is no diamond.
		{"long arm", edgesDAG(7, [2]int32{E, 2}, [2]int32{2, 3}, [2]int32{3, 6}, [2]int32{2, 4}, [2]int32{4, 5},
			[2]int32{5, 6}, [2]int32{6, X}),
			nil, 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			red := Reduce(c.d)
			checkReduced(t, c.d, red)
			if got := dummySets(red); !reflect.DeepEqual(got, c.dummies) {
				t.Errorf("dummies %v, want %v", got, c.dummies)
			}
			if len(red.Edges) != c.edges {
				t.Errorf("%d reduced edges, want %d", len(red.Edges), c.edges)
			}
			checkClasses(t, c.d, red.Classes(8), 8)
		})
	}
}

// TestReduceLoop: a loop whose body is an if/else, as the cfg package
// builds it, with the dummy edges of the back edge.
func TestReduceLoop(t *testing.T) {
	var a wasm.Asm
	a.B = []byte{1, 1, 0x7F}
	a.Block(wasm.OpLoop)
	a.Idx(wasm.OpLocalGet, 0).Block(wasm.OpIf).I32(1).Op(wasm.OpDrop)
	a.Op(wasm.OpElse).I32(2).Op(wasm.OpDrop).Op(wasm.OpEnd)
	a.Idx(wasm.OpLocalGet, 0).Idx(wasm.OpBrIf, 0)
	a.Op(wasm.OpEnd).Op(wasm.OpEnd)
	g, err := cfg.BuildBody(&wasm.Code{Body: a.B, ExprOff: 3}, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := g.DAG()
	red := Reduce(d)
	checkReduced(t, d, red)
	t.Logf("DAG %v\nreduced %v dummies %v", d.Edges, red.Edges, red.Dummies)
	// The loop header's if/else becomes one dummy with its join, which
	// the back edge leaves: entry -> 2 -> D and the dummy entry -> D in,
	// D -> exit (dummy exit) and D -> 7 -> exit out.
	if want := [][]int32{{3, 4, 5, 6}}; len(red.Edges) != 6 || !reflect.DeepEqual(dummySets(red), want) {
		t.Fatalf("reduced to %d edges and dummies %v", len(red.Edges), dummySets(red))
	}
	for tau, want := range map[int]int{1: 1, 2: 2, 3: 3, 4: 4, 8: 4} {
		classes := red.Classes(tau)
		if len(classes) != want {
			t.Fatalf("tau %d: %d classes, want %d", tau, len(classes), want)
		}
		checkClasses(t, d, classes, tau)
	}
}

// TestClassesHandMade splits a branch whose arms hold diamonds.
func TestClassesHandMade(t *testing.T) {
	E, X := int32(cfg.Entry), int32(cfg.Exit)
	// entry -> 2; 2 -> 3 | 8; 3 -> {4, 5} -> 6 -> 7 (a diamond);
	// 8 -> {9, 10} -> 11 (a diamond); 7 -> X; 11 -> X; 7 -> 11.
	d := edgesDAG(12,
		[2]int32{E, 2}, [2]int32{2, 3}, [2]int32{2, 8}, // 0 1 2
		[2]int32{3, 4}, [2]int32{3, 5}, [2]int32{4, 6}, [2]int32{5, 6}, [2]int32{6, 7}, // 3..7
		[2]int32{8, 9}, [2]int32{8, 10}, [2]int32{9, 11}, [2]int32{10, 11}, // 8..11
		[2]int32{7, X}, [2]int32{11, X}, [2]int32{7, 11}) // 12 13 14
	for _, tc := range []struct {
		tau  int
		want [][]int32
	}{
		{1, [][]int32{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}}},
		{2, [][]int32{{0, 1, 3, 4, 5, 6, 7, 12, 14, 13}, {0, 2, 8, 9, 10, 11, 13}}},
		// Three prefixes: 2 -> 3 ... 7 branches into 7 -> X and 7 -> 11.
		{3, [][]int32{{0, 2, 8, 9, 10, 11, 13}, {0, 1, 3, 4, 5, 6, 7, 12}, {0, 1, 3, 4, 5, 6, 7, 14, 13}}},
	} {
		classes := Classes(d, tc.tau)
		var got [][]int32
		for _, c := range classes {
			var es []int32
			for e, in := range c {
				if in {
					es = append(es, int32(e))
				}
			}
			got = append(got, es)
		}
		for _, w := range tc.want {
			slices.Sort(w)
		}
		slices.SortFunc(got, slices.Compare)
		slices.SortFunc(tc.want, slices.Compare)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("tau %d: classes %v, want %v", tc.tau, got, tc.want)
		}
		checkClasses(t, d, classes, tc.tau)
	}
}

func TestLPT(t *testing.T) {
	for _, c := range []struct {
		costs []int64
		k     int
		want  []int
	}{
		// 8 -> 0; 7 -> 1; 5 -> 1 (7 < 8); 3 -> 0 (8 < 12); 3 -> 0
		// (11 < 12); 2 -> 1 (12 < 14).
		{[]int64{5, 7, 3, 3, 2, 8}, 2, []int{1, 1, 0, 0, 1, 0}},
		// Equal costs go round the copies in index order.
		{[]int64{4, 4, 4, 4, 4}, 3, []int{0, 1, 2, 0, 1}},
		// Zero costs still go to the least loaded copy.
		{[]int64{0, 9, 0, 1}, 2, []int{1, 0, 1, 1}},
		{[]int64{1, 2, 3}, 1, []int{0, 0, 0}},
		// Graham's bad case for m = 2: LPT 7 against the optimum 6.
		{[]int64{3, 3, 2, 2, 2}, 2, []int{0, 1, 0, 1, 0}},
	} {
		if got := LPT(c.costs, c.k); !reflect.DeepEqual(got, c.want) {
			t.Errorf("LPT(%v, %d) = %v, want %v", c.costs, c.k, got, c.want)
		}
	}
}

// TestLoadSet checks the largest LPT load with one function's tasks
// replaced, and the set after the replacement is made, against LPT
// over all the tasks, on random plans: many ties, zero costs, and k
// from 1 to 8.
func TestLoadSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lptMax := func(costs [][]int64, k int) int64 {
		all := slices.Concat(costs...)
		loads := make([]int64, k)
		for i, c := range LPT(all, k) {
			loads[c] += all[i]
		}
		return slices.Max(loads)
	}
	random := func() []int64 {
		c := make([]int64, rng.IntN(5))
		for i := range c {
			c[i] = int64(rng.IntN(4) * rng.IntN(20))
		}
		return c
	}
	for trial := range 2000 {
		k := 1 + rng.IntN(8)
		costs := make([][]int64, 1+rng.IntN(12))
		for i := range costs {
			costs[i] = random()
		}
		set := newLoadSet(costs, k)
		if got, want := set.maxWith(nil, nil), lptMax(costs, k); got != want {
			t.Fatalf("trial %d: %v over %d: %d, want %d", trial, costs, k, got, want)
		}
		for range 5 {
			f, in := rng.IntN(len(costs)), random()
			tried := slices.Clone(costs)
			tried[f] = in
			if got, want := set.maxWith(costs[f], in), lptMax(tried, k); got != want {
				t.Fatalf("trial %d: %v over %d, function %d as %v: %d, want %d", trial, costs, k, f, in, got, want)
			}
			if rng.IntN(2) == 0 {
				set.replace(costs[f], in)
				costs = tried
				if want := decreasing(slices.Concat(costs...)); !slices.Equal(set.sorted, want) {
					t.Fatalf("trial %d: set %v, want %v", trial, set.sorted, want)
				}
			}
		}
	}
}

func TestCandidatesC(t *testing.T) {
	_, m := wasmtest.DecodeFile(t, testprogs.CProgramByName(t, "sort").Wasm)
	c, err := FindCallers(m)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]uint32{}
	for fn := range m.NumFuncs() {
		byName[m.FuncName(fn)] = fn
	}
	for _, w := range []struct {
		name      string
		sites     int
		candidate bool
	}{
		{"_start.command_export", 0, false}, // exported
		{"_start", 1, true},                 // called by the export
		{"__original_main", 1, true},        // main: called once, from _start
		{"qsort", 1, true},                  // main's callees called once
		{"bsearch", 1, true},                //
		{"quick_sort", 4, false},            // twice from main, twice from itself
		{"printf", 3, false},                //
		{"cmp_key", 0, false},               // in the element segment
		{"cmp_bucket", 0, false},            //
		{"__stdio_write", 1, false},         // called once, but also in the table
		{"vfprintf", 1, true},               // printf's callee
		{"exit", 1, true},                   //
		{"__wasi_proc_exit", 1, true},       //
		{"__stdio_exit", 2, false},          //
		{"__wasm_call_dtors", 1, true},      //
	} {
		fn, ok := byName[w.name]
		if !ok {
			t.Errorf("no function %s", w.name)
			continue
		}
		if c.Sites[fn] != w.sites || c.Candidate(fn) != w.candidate {
			t.Errorf("%s: %d sites, candidate %v; want %d, %v", w.name, c.Sites[fn], c.Candidate(fn), w.sites, w.candidate)
		}
	}
	// Exported and table functions are never candidates.
	for _, e := range m.Exports {
		if e.Kind == wasm.KindFunc && c.Candidate(e.Index) {
			t.Errorf("export %s is a candidate", e.Name)
		}
	}
	for _, el := range m.Elements {
		for _, fn := range el.Funcs {
			if c.Candidate(fn) {
				t.Errorf("table function %s is a candidate", m.FuncName(fn))
			}
		}
	}
}

// TestCandidatesSynthetic covers the ways a reference escapes: exports,
// start, globals, active and expression element segments, declarative
// segments, ref.func in code; and return_call as a call site.
func TestCandidatesSynthetic(t *testing.T) {
	body := func(ins ...func(a *wasm.Asm)) []byte {
		a := &wasm.Asm{B: []byte{0}}
		for _, f := range ins {
			f(a)
		}
		a.Op(wasm.OpEnd)
		return a.B
	}
	call := func(fn uint32) func(a *wasm.Asm) { return func(a *wasm.Asm) { a.Idx(wasm.OpCall, fn) } }
	mb := &moduleBuilder{start: 11, tableMin: 4}
	mb.bodies = [][]byte{
		0: body(call(1), call(2), call(2), func(a *wasm.Asm) { a.Idx(wasm.OpRefFunc, 5).Op(wasm.OpDrop) }),
		1: body(func(a *wasm.Asm) { a.Idx(wasm.OpReturnCall, 4) }),
		2: body(), 3: body(), 4: body(), 5: body(), 6: body(), 7: body(),
		8: body(), 9: body(), 10: body(), 11: body(), 12: body(), 13: body(),
	}
	mb.exports = []uint32{10}
	mb.globals = [][]byte{{0xD2, 7, 0x0B}}
	mb.elems = [][]byte{
		{0, 0x41, 0, 0x0B, 1, 8},                               // active, function indices
		{4, 0x41, 1, 0x0B, 2, 0xD2, 9, 0x0B, 0xD0, 0x70, 0x0B}, // active, expressions
		{3, 0, 1, 13}, // declarative
	}
	m, err := wasm.Decode(mb.bytes())
	if err != nil {
		t.Fatal(err)
	}
	c, err := FindCallers(m)
	if err != nil {
		t.Fatal(err)
	}
	wantSites := []int{0, 1, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	wantCand := []bool{true, true, false, true, true, false, true, false, false, false, false, false, true, false}
	for fn := range uint32(14) {
		if c.Sites[fn] != wantSites[fn] || c.Candidate(fn) != wantCand[fn] {
			t.Errorf("function %d: %d sites, candidate %v; want %d, %v", fn, c.Sites[fn], c.Candidate(fn), wantSites[fn], wantCand[fn])
		}
	}
}

// TestBallLarusCostIsProbeCount compares the default cost of a whole
// function with the probes the numbering package places for it as the
// instrumenter asks: counts at path ends, no r = 0 where the register is
// still 0 from the entry.
func TestBallLarusCostIsProbeCount(t *testing.T) {
	names, _, gs := realModules(t)
	for k, graphs := range gs {
		for i, d := range graphs {
			n, err := numbering.Number(d)
			if err != nil {
				t.Fatal(err)
			}
			w, err := numbering.StaticWeights(d)
			if err != nil {
				t.Fatal(err)
			}
			inc, err := numbering.Chords(d, n, w)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := numbering.Place(d, n, inc, numbering.PlaceOptions{NoCountFolding: true, ZeroAtEntry: true})
			if err != nil {
				t.Fatal(err)
			}
			all := make([]bool, len(d.Edges))
			for j := range all {
				all[j] = true
			}
			for _, set := range [][]bool{nil, all} {
				c, err := BallLarusCost(d, set)
				if err != nil {
					t.Fatal(err)
				}
				if c != len(plan.Probes) {
					t.Fatalf("%s function %d: cost %d, %d probes", names[k], i, c, len(plan.Probes))
				}
			}
		}
	}
}

// TestCosts checks the PSPP cost and the weighted cost on random DAGs: every
// class with a path costs at least its count, and unit weights on every
// edge give the static count.
func TestCosts(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for range 500 {
		d := structuredDAG(t, r, 2+r.IntN(20))
		ones := make([]float64, len(d.Edges))
		for i := range ones {
			ones[i] = 1
		}
		// Unit weights count a sequence once per DAG edge: an operation
		// on a real edge, and one per dummy exit edge (the back edge's
		// sequence, holding the dummy entry's initialisation), of the
		// probes those weights place. Static costs count operations.
		for _, c := range Classes(d, 4) {
			cs := coster{w: ones}
			ops, _, err := cs.partProbes(d, Live(d), c)
			if err != nil {
				t.Fatal(err)
			}
			seqs := 0
			for i, op := range ops {
				switch e := d.Edges[i]; {
				case e.Kind == cfg.EdgeDummyExit:
					seqs++
				case e.Kind != cfg.EdgeDummyEntry && op.Kind != numbering.None:
					seqs++
				}
			}
			s, err := BallLarusCost(d, c)
			if err != nil {
				t.Fatal(err)
			}
			w, err := WeightedCost(ones)(d, c)
			if err != nil {
				t.Fatal(err)
			}
			if s < 1 || s > len(d.Edges) || w != seqs {
				t.Fatalf("class of %d edges: static cost %d, weighted %d", countTrue(c), s, w)
			}
		}
	}
	d := edgesDAG(4, [2]int32{0, 2}, [2]int32{2, 3}, [2]int32{2, 1}, [2]int32{3, 1})
	if _, err := WeightedCost([]float64{1})(d, nil); err == nil {
		t.Fatal("wrong number of weights accepted")
	}
	// Frequencies price the probes: with all traffic on 2 -> 1, the
	// probes there cost it.
	c, err := WeightedCost([]float64{100, 0, 100, 0})(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c < 100 {
		t.Fatalf("weighted cost %d", c)
	}
}

// realModules returns some real modules and their DAGs: the C programs.
func realModules(t *testing.T) (names []string, ms []*wasm.Module, gs [][]*cfg.DAG) {
	for _, p := range testprogs.CPrograms(t) {
		_, m := wasmtest.DecodeFile(t, p.Wasm)
		names = append(names, p.Name)
		ms = append(ms, m)
		gs = append(gs, dagsOf(t, m))
	}
	return
}

func TestMakeStrategies(t *testing.T) {
	names, ms, gs := realModules(t)
	for i, m := range ms {
		graphs := gs[i]
		for _, strategy := range []profile.Strategy{profile.SBL, profile.PBL, profile.P3} {
			for _, k := range []int{1, 2, 4, 8} {
				if strategy == profile.SBL && k != 1 {
					continue
				}
				p, err := Make(m, graphs, strategy, k, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := p.Check(graphs); err != nil {
					t.Fatalf("%s %s k=%d: %v", names[i], strategy, k, err)
				}
				checkPlan(t, m, graphs, p)
				if strategy == profile.P3 && k == 4 {
					profitable, loads := planLoads(p)
					t.Logf("%s: %d of %d functions profitable, loads %v", names[i], profitable, len(m.Code), loads)
				}
			}
		}
	}
}

// checkPlan checks a plan against its strategy: loads are the sums of the
// task costs; PBL and SBL profile every function whole in exactly one copy;
// under P3 only candidates split, each function's classes in all copies
// together are all its live edges, and a copy's mode for a function follows
// from its classes there.
func checkPlan(t *testing.T, m *wasm.Module, graphs []*cfg.DAG, p *Plan, weights ...[][]float64) {
	t.Helper()
	loads := make([]int64, p.K)
	for def, f := range p.Funcs {
		if graphs[def] == nil {
			if len(f.Tasks) != 0 {
				t.Fatalf("function %d without DAG has tasks", def)
			}
			continue
		}
		if len(f.Tasks) == 0 {
			t.Fatalf("function %d has no task", def)
		}
		for _, ts := range f.Tasks {
			loads[ts.Copy] += ts.Cost
		}
		if f.Profitable() && (p.Strategy != profile.P3 || !f.Candidate) {
			t.Fatalf("%s: function %d (candidate %v) split", p.Strategy, def, f.Candidate)
		}
		var modes []Mode
		var union []bool
		copies := map[int]bool{}
		for c := range p.Copies {
			mode, edges := p.Copies[c].Mode(def)
			modes = append(modes, mode)
			if mode != None {
				copies[c] = true
			}
			if mode == Selective {
				if union == nil {
					union = make([]bool, len(graphs[def].Edges))
				}
				for _, e := range edges {
					union[e] = true
				}
			}
		}
		for _, ts := range f.Tasks {
			if !copies[ts.Copy] {
				t.Fatalf("function %d: task in copy %d, which does not profile it (%v)", def, ts.Copy, modes)
			}
		}
		if f.Slices > 0 {
			// Its tasks are its slots, in order, each in the copy
			// that lists it.
			if p.Strategy != profile.P3 || len(f.Tasks) != f.Slices {
				t.Fatalf("%s: function %d has %d slots and %d tasks", p.Strategy, def, f.Slices, len(f.Tasks))
			}
			for j, ts := range f.Tasks {
				if modes[ts.Copy] != Sliced || !slices.Contains(p.Copies[ts.Copy].Slots(def), j) {
					t.Fatalf("function %d: slot %d in copy %d, which has slots %v", def, j, ts.Copy, p.Copies[ts.Copy].Slots(def))
				}
			}
			continue
		}
		if !f.Profitable() {
			if len(copies) != 1 || modes[f.Tasks[0].Copy] != BallLarus {
				t.Fatalf("function %d with one task: modes %v", def, modes)
			}
			continue
		}
		// Recompute the classes and check where they went.
		d := graphs[def]
		classes := Classes(d, Tau(d, p.K))
		if len(weights) > 0 && weights[0][def] != nil {
			classes = Reduce(d).WeightedClasses(Tau(d, p.K), weights[0][def])
		}
		// Tasks hold the classes in order, one each or Classes of them.
		var copyOf []int
		for _, ts := range f.Tasks {
			for range max(1, ts.Classes) {
				copyOf = append(copyOf, ts.Copy)
			}
		}
		if len(classes) != len(copyOf) {
			t.Fatalf("function %d: %d tasks hold %d classes, not %d", def, len(f.Tasks), len(copyOf), len(classes))
		}
		live := Live(d)
		perCopy := map[int][]bool{}
		for j, c := range classes {
			cp := copyOf[j]
			if perCopy[cp] == nil {
				perCopy[cp] = make([]bool, len(d.Edges))
			}
			for e, in := range c {
				perCopy[cp][e] = perCopy[cp][e] || in
			}
		}
		all := make([]bool, len(d.Edges))
		for cp, u := range perCopy {
			whole := true
			for e := range u {
				all[e] = all[e] || u[e]
				if live[e] && !u[e] {
					whole = false
				}
			}
			mode, edges := p.Copies[cp].Mode(def)
			switch {
			case whole && mode != BallLarus:
				t.Fatalf("function %d copy %d: whole union but mode %v", def, cp, mode)
			case !whole && (mode != Selective || !reflect.DeepEqual(EdgeSet(edges, len(d.Edges)), u)):
				t.Fatalf("function %d copy %d: mode %v edges %v, union %v", def, cp, mode, edges, u)
			}
		}
		if !reflect.DeepEqual(all, live) {
			t.Fatalf("function %d: classes cover %v, live %v", def, all, live)
		}
	}
	for c := range p.Copies {
		if p.Copies[c].Load != loads[c] {
			t.Fatalf("copy %d: load %d, tasks sum to %d", c, p.Copies[c].Load, loads[c])
		}
	}
	if p.Strategy != profile.P3 {
		for def := range p.Funcs {
			n := 0
			for c := range p.Copies {
				if mode, _ := p.Copies[c].Mode(def); mode != None {
					n++
					if mode != BallLarus {
						t.Fatalf("%s: function %d mode %v", p.Strategy, def, mode)
					}
				}
			}
			if want := map[bool]int{true: 1, false: 0}[graphs[def] != nil]; n != want {
				t.Fatalf("%s: function %d in %d copies", p.Strategy, def, n)
			}
		}
	}
}

func TestMakeDeterministicAndJSON(t *testing.T) {
	_, ms, gs := realModules(t)
	for i, m := range ms {
		var prev []byte
		for _, workers := range []int{1, 3, 0} {
			p, err := Make(m, gs[i], profile.P3, 4, Options{Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if prev != nil && !bytes.Equal(b, prev) {
				t.Fatalf("plans differ between runs")
			}
			prev = b
			var q Plan
			if err := json.Unmarshal(b, &q); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p, &q) {
				t.Fatalf("plan does not round-trip through JSON")
			}
		}
	}
}

func TestMakeErrorsAndNilGraphs(t *testing.T) {
	_, ms, gs := realModules(t)
	m, graphs := ms[0], slices.Clone(gs[0])
	for _, c := range []struct {
		strategy profile.Strategy
		k        int
	}{{"xyz", 2}, {profile.P3, 0}, {profile.SBL, 2}} {
		if _, err := Make(m, graphs, c.strategy, c.k, Options{}); err == nil {
			t.Errorf("Make(%s, %d) succeeded", c.strategy, c.k)
		}
	}
	if _, err := Make(m, graphs[1:], profile.P3, 2, Options{}); err == nil {
		t.Error("Make with too few graphs succeeded")
	}
	graphs[0], graphs[3] = nil, nil
	p, err := Make(m, graphs, profile.P3, 3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(graphs); err != nil {
		t.Fatal(err)
	}
	checkPlan(t, m, graphs, p)
	// A cost function's error names the function.
	p8, err := Make(m, gs[0], profile.P3, 8, Options{})
	if err != nil {
		t.Fatal(err)
	}
	profitable := false
	for _, f := range p8.Funcs {
		profitable = profitable || f.Profitable()
	}
	boom := fmt.Errorf("boom")
	_, err = Make(m, gs[0], profile.P3, 8, Options{Cost: func(*cfg.DAG, []bool) (int, error) { return 0, boom }})
	if !profitable || err == nil || !errors.Is(err, boom) {
		t.Fatalf("profitable %v, error %v", profitable, err)
	}
}

// TestMakeWeights: weights change costs, which prefixes grow first and
// which functions stay split.
func TestMakeWeights(t *testing.T) {
	_, ms, gs := realModules(t)
	m, graphs := ms[0], gs[0]
	ws := make([][]float64, len(graphs))
	for i, d := range graphs {
		w, err := numbering.StaticWeights(d)
		if err != nil {
			t.Fatal(err)
		}
		for j := range w {
			w[j] *= 1000
		}
		ws[i] = w
	}
	p, pbl := weightedPlans(t, m, graphs, ws)
	q, err := Make(m, graphs, profile.P3, 4, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// With weights, a function stays split only where that lowers the
	// largest load, and the plan is never worse than PBL's by its costs.
	if largestLoad(p) > largestLoad(pbl) {
		t.Fatalf("weighted P3 plan's largest load %d above PBL's %d", largestLoad(p), largestLoad(pbl))
	}
	differ := false
	for i := range p.Funcs {
		if len(p.Funcs[i].Tasks) == 0 || len(q.Funcs[i].Tasks) == 0 {
			continue
		}
		differ = differ || p.Funcs[i].Tasks[0].Cost != q.Funcs[i].Tasks[0].Cost
	}
	if !differ {
		t.Fatal("weights changed no cost")
	}
}

func positive(x float64) bool { return x > 0 }

// TestPlanFreq: a plan made with weights carries each function's
// frequencies, which place its probes, only where it ran; they survive
// JSON, and Check refuses frequencies that do not fit the DAG.
func TestPlanFreq(t *testing.T) {
	_, ms, gs := realModules(t)
	m, graphs := ms[0], gs[0]
	ws := make([][]float64, len(graphs))
	ran := 0
	for i, d := range graphs {
		if d == nil || i%3 == 0 {
			continue // never ran
		}
		ws[i] = make([]float64, len(d.Edges))
		for j := range ws[i] {
			ws[i][j] = float64((i + j) % 4)
		}
		if slices.ContainsFunc(ws[i], positive) {
			ran++
		}
	}
	for _, st := range []profile.Strategy{profile.SBL, profile.PBL, profile.P3} {
		k := 4
		if st == profile.SBL {
			k = 1
		}
		p, err := Make(m, graphs, st, k, Options{Weights: ws})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i, f := range p.Funcs {
			want := ws[i]
			if !slices.ContainsFunc(want, positive) {
				want = nil // all zero: it never ran
			}
			if !slices.Equal([]float64(f.Freq), want) {
				t.Fatalf("%s: function %d has frequencies %v, given %v", st, i, f.Freq, ws[i])
			}
			if f.Freq != nil {
				n++
			}
		}
		if n != ran {
			t.Fatalf("%s: %d functions with frequencies, %d ran", st, n, ran)
		}
		var back Plan
		if err := json.Unmarshal(roundTrip(t, p, graphs), &back); err != nil {
			t.Fatal(err)
		}
		for i := range p.Funcs {
			if !slices.Equal(back.Funcs[i].Freq, p.Funcs[i].Freq) {
				t.Fatalf("%s: function %d's frequencies changed through JSON", st, i)
			}
		}
		for i := range back.Funcs {
			f := &back.Funcs[i]
			if f.Freq == nil {
				continue
			}
			keep := f.Freq
			f.Freq = keep[1:]
			if err := back.Check(graphs); err == nil {
				t.Fatalf("%s: %d frequencies for %d edges accepted", st, len(f.Freq), len(keep))
			}
			f.Freq = slices.Clone(keep)
			f.Freq[0] = math.NaN()
			if err := back.Check(graphs); err == nil {
				t.Fatalf("%s: a NaN frequency accepted", st)
			}
			f.Freq = keep
			break
		}
	}
	p, err := Make(m, graphs, profile.P3, 4, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range p.Funcs {
		if f.Freq != nil {
			t.Fatalf("planned without weights, function %d has frequencies", i)
		}
	}
}

// TestMakeCandidatesOverride: forcing every function to be a candidate
// splits more of them, and the plan stays sound.
func TestMakeCandidatesOverride(t *testing.T) {
	_, ms, gs := realModules(t)
	m, graphs := ms[0], gs[0]
	all := make([]bool, len(graphs))
	for i := range all {
		all[i] = true
	}
	count := func(p *Plan) int {
		n := 0
		for _, f := range p.Funcs {
			if f.Profitable() {
				n++
			}
		}
		return n
	}
	p, err := Make(m, graphs, profile.P3, 4, Options{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := Make(m, graphs, profile.P3, 4, Options{Candidates: all})
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, m, graphs, q)
	if count(q) <= count(p) {
		t.Fatalf("%d profitable with every function a candidate, %d without", count(q), count(p))
	}
	none := make([]bool, len(graphs))
	r, err := Make(m, graphs, profile.P3, 4, Options{Candidates: none})
	if err != nil {
		t.Fatal(err)
	}
	if count(r) != 0 {
		t.Fatalf("%d profitable without candidates", count(r))
	}
	if _, err := Make(m, graphs, profile.P3, 4, Options{Candidates: none[1:]}); err == nil {
		t.Fatal("short candidate list accepted")
	}
}

func TestEdgeListJSON(t *testing.T) {
	for _, c := range []struct {
		l    EdgeList
		json string
	}{
		{EdgeList{}, `""`},
		{EdgeList{3}, `"3"`},
		{EdgeList{0, 1, 2, 3, 4, 5, 7, 9, 10, 11, 12}, `"0-5,7,9-12"`},
		{EdgeList{1, 3, 4}, `"1,3-4"`},
	} {
		b, err := json.Marshal(c.l)
		if err != nil || string(b) != c.json {
			t.Errorf("%v: %s, %v; want %s", c.l, b, err, c.json)
		}
		var back EdgeList
		if err := json.Unmarshal(b, &back); err != nil || len(back) != len(c.l) || len(c.l) > 0 && !reflect.DeepEqual(back, c.l) {
			t.Errorf("%s: %v, %v", b, back, err)
		}
	}
	for _, bad := range []string{`"3,2"`, `"5-4"`, `"1-2,2"`, `"x"`, `"-1"`, `3`} {
		var l EdgeList
		if err := json.Unmarshal([]byte(bad), &l); err == nil {
			t.Errorf("%s accepted as %v", bad, l)
		}
	}
}

// TestMakeWeightsSplitAnyFunction: planned with weights, a function the
// call-site rule refuses (several callers or an escaping reference) is
// split when it dominates the load, and the split lowers the largest
// copy load; planned without weights it stays whole.
func TestMakeWeightsSplitAnyFunction(t *testing.T) {
	names, ms, gs := realModules(t)
	tried := 0
	for i, m := range ms {
		graphs := gs[i]
		callers, err := FindCallers(m)
		if err != nil {
			t.Fatal(err)
		}
		// The heaviest function by static weight that the rule refuses
		// and that has several classes.
		hot, hotCost := -1, 0.0
		ws := make([][]float64, len(graphs))
		for def, d := range graphs {
			if d == nil {
				continue
			}
			w, err := numbering.StaticWeights(d)
			if err != nil {
				t.Fatal(err)
			}
			// Static weights grow tenfold a loop level and saturate the
			// costs of deep functions: bring every function to at most 100.
			top := max(1, slices.Max(w))
			for j := range w {
				w[j] = math.Ceil(w[j] * 100 / top)
			}
			ws[def] = w
			fn := m.NumImportedFuncs + uint32(def)
			if callers.Candidate(fn) || len(Classes(d, Tau(d, 4))) < 2 {
				continue
			}
			var sum float64
			for _, x := range w {
				sum += x
			}
			if sum > hotCost {
				hot, hotCost = def, sum
			}
		}
		if hot < 0 {
			continue
		}
		var rest float64
		for def, w := range ws {
			for _, x := range w {
				if def != hot {
					rest += x
				}
			}
		}
		for j := range ws[hot] {
			ws[hot][j] *= 4 * rest / hotCost // it dominates every copy's load
		}
		tried++
		static, err := Make(m, graphs, profile.P3, 4, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if static.Funcs[hot].Candidate || static.Funcs[hot].Profitable() {
			t.Fatalf("%s: function %d split without weights", names[i], hot)
		}
		p, pbl := weightedPlans(t, m, graphs, ws)
		if !p.Funcs[hot].Candidate || !p.Funcs[hot].Profitable() || largestLoad(p) >= largestLoad(pbl) {
			t.Errorf("%s: function %d (%d call sites): candidate %v, split %v; largest load %d, PBL's %d",
				names[i], hot, p.Funcs[hot].CallSites, p.Funcs[hot].Candidate, p.Funcs[hot].Profitable(), largestLoad(p), largestLoad(pbl))
		}
	}
	if tried == 0 {
		t.Fatal("no program has a function the call-site rule refuses")
	}
}

// largestLoad is the largest load of a plan's copies.
func largestLoad(p *Plan) int64 {
	var mx int64
	for _, c := range p.Copies {
		mx = max(mx, c.Load)
	}
	return mx
}

// TestGroupClasses: g runs of neighbouring classes, every class in one
// run, each run priced on the union of its classes' edges.
func TestGroupClasses(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	tried := 0
	for range 200 {
		d := structuredDAG(t, r, 2+r.IntN(20))
		sets := Classes(d, 8)
		if len(sets) < 2 {
			continue
		}
		tried++
		live := Live(d)
		var c coster
		classes := make([]task, len(sets))
		for j, set := range sets {
			cost, err := c.cost(d, live, set)
			if err != nil {
				t.Fatal(err)
			}
			if r.IntN(3) == 0 {
				cost *= 100 // skewed costs
			}
			classes[j] = task{def: 7, cost: int64(cost), edges: set}
		}
		for g := 2; g <= len(classes); g++ {
			groups, err := groupClasses(classes, g, d, live, &c)
			if err != nil {
				t.Fatal(err)
			}
			if len(groups) != g {
				t.Fatalf("%d groups of %d classes, want %d", len(groups), len(classes), g)
			}
			next := 0
			for _, gr := range groups {
				n := max(1, gr.classes)
				if gr.def != 7 || n == 1 && gr.classes != 0 {
					t.Fatalf("group %+v", gr)
				}
				union := make([]bool, len(d.Edges))
				for _, cl := range classes[next : next+n] {
					for e, in := range cl.edges {
						union[e] = union[e] || in
					}
				}
				if !slices.Equal(union, gr.edges) {
					t.Fatalf("group of classes %d..%d has other edges", next, next+n-1)
				}
				cost, err := c.cost(d, live, union)
				if err != nil || int64(cost) != gr.cost {
					t.Fatalf("group cost %d, its union's %d (%v)", gr.cost, cost, err)
				}
				next += n
			}
			if next != len(classes) {
				t.Fatalf("groups hold %d of %d classes", next, len(classes))
			}
		}
	}
	if tried < 50 {
		t.Fatalf("only %d DAGs with several classes", tried)
	}
}

// weightedPlans makes the P3 and PBL plans at k = 4 with weights ws, and
// checks the P3 plan.
func weightedPlans(t *testing.T, m *wasm.Module, graphs []*cfg.DAG, ws [][]float64) (p3, pbl *Plan) {
	t.Helper()
	p3, err := Make(m, graphs, profile.P3, 4, Options{Weights: ws})
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, m, graphs, p3, ws)
	if pbl, err = Make(m, graphs, profile.PBL, 4, Options{Weights: ws}); err != nil {
		t.Fatal(err)
	}
	return p3, pbl
}

// TestFreqListJSON: counts go out as a string with runs of zeros and come
// back the same; other numbers as an array; malformed strings are refused.
func TestFreqListJSON(t *testing.T) {
	for _, tc := range []struct {
		in   FreqList
		want string
	}{
		{FreqList{12, 0, 0, 0, 7, 0, 1e15}, `"12,0*3,7,0,1000000000000000"`},
		{FreqList{0, 0}, `"0*2"`},
		{FreqList{3}, `"3"`},
		{FreqList{1.5, 0}, `[1.5,0]`},
		{FreqList{1 << 60}, `[1152921504606847000]`},
	} {
		b, err := json.Marshal(tc.in)
		if err != nil || string(b) != tc.want {
			t.Fatalf("%v: %s, %v; want %s", tc.in, b, err, tc.want)
		}
		var back FreqList
		if err := json.Unmarshal(b, &back); err != nil || !slices.Equal(back, tc.in) {
			t.Fatalf("%s came back as %v, %v", b, back, err)
		}
	}
	for _, bad := range []string{`"1,,2"`, `"+3"`, `"0*+2"`, `","`, `"1*2"`, `"0*0"`, `"0*-1"`, `"x"`, `"0*99999999999"`, `"0*67108864,0*2"`, `{}`, `"1.5"`} {
		var l FreqList
		if err := json.Unmarshal([]byte(bad), &l); err == nil {
			t.Errorf("%s accepted as %v", bad, l)
		}
	}
}

// roundTrip checks that a plan comes back the same through JSON and that
// Check accepts it, and returns the JSON.
func roundTrip(t *testing.T, p *Plan, graphs []*cfg.DAG) []byte {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q Plan
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, &q) {
		t.Fatal("the plan changed through JSON")
	}
	if err := q.Check(graphs); err != nil {
		t.Fatal(err)
	}
	return b
}

// refused checks that Check refuses the plan of JSON b once spoiled.
func refused(t *testing.T, b []byte, graphs []*cfg.DAG, spoil func(*Plan)) {
	t.Helper()
	var bad Plan
	if err := json.Unmarshal(b, &bad); err != nil {
		t.Fatal(err)
	}
	spoil(&bad)
	if err := bad.Check(graphs); err == nil {
		t.Fatal("Check accepted it")
	}
}

// loopFuncs makes a random DAG with weights for every function of m:
// function 0 has a loop whose paths from a back edge run 1000 times each,
// and whose paths from the entry run entry(how many there are) times
// each; the others have a few paths that run 3 times each.
func loopFuncs(t *testing.T, m *wasm.Module, seed uint64, entry func(paths float64) float64) ([]*cfg.DAG, [][]float64) {
	t.Helper()
	r := rand.New(rand.NewPCG(7, seed))
	graphs := make([]*cfg.DAG, len(m.Code))
	ws := make([][]float64, len(m.Code))
	for def := range graphs {
		for {
			d := structuredDAG(t, r, 12)
			paths, ok := dagtest.Paths(d, cfg.Entry, 200)
			loop := slices.ContainsFunc(d.Edges, func(e cfg.DAGEdge) bool { return e.Kind == cfg.EdgeDummyEntry })
			if !ok || len(paths) < 3 || def == 0 && !loop {
				continue
			}
			var fromEntry float64
			for _, p := range paths {
				if d.Edges[p[0]].Kind != cfg.EdgeDummyEntry {
					fromEntry++
				}
			}
			w := make([]float64, len(d.Edges))
			for _, p := range paths {
				n := entry(fromEntry)
				if d.Edges[p[0]].Kind == cfg.EdgeDummyEntry {
					n = 1000
				}
				if def > 0 {
					n = 3
				}
				for _, e := range p {
					w[e] += n
				}
			}
			graphs[def], ws[def] = d, w
			break
		}
	}
	return graphs, ws
}

// TestPlanSlices: a function that runs many paths per call, heavier than
// everything else, has its calls shared out among copies, and the plan
// says so in JSON; Check refuses slot lists that leave out or repeat a
// slot, or that mix slots with other modes.
func TestPlanSlices(t *testing.T) {
	_, ms, _ := realModules(t)
	m := ms[0]
	// Function 0: a loop with several paths, 10 calls of 1000
	// iterations each; the others: a few paths, as many calls.
	graphs, ws := loopFuncs(t, m, 9, func(float64) float64 { return 10 })
	p, pbl := weightedPlans(t, m, graphs, ws)
	if p.Funcs[0].Slices < 2 {
		t.Fatalf("the loop is not sliced: %+v", p.Funcs[0].Tasks)
	}
	if largestLoad(p) >= largestLoad(pbl) {
		t.Fatalf("sliced plan's largest load %d, PBL's %d", largestLoad(p), largestLoad(pbl))
	}
	for def := range pbl.Funcs {
		if pbl.Funcs[def].Slices != 0 {
			t.Fatalf("PBL slices function %d", def)
		}
	}
	b := roundTrip(t, p, graphs)

	holder := func(p *Plan, slot int) *SlicedFunc {
		for c := range p.Copies {
			for i := range p.Copies[c].Sliced {
				if s := &p.Copies[c].Sliced[i]; s.Func == 0 && slices.Contains(s.Slots, slot) {
					return s
				}
			}
		}
		t.Fatalf("no copy has slot %d", slot)
		return nil
	}
	for name, spoil := range map[string]func(p *Plan){
		"slot left out": func(p *Plan) {
			s := holder(p, 0)
			s.Slots = slices.DeleteFunc(s.Slots, func(x int) bool { return x == 0 })
		},
		"slot twice": func(p *Plan) {
			s, o := holder(p, 0), holder(p, 1)
			if s == o {
				t.Skip("slots 0 and 1 in one copy")
			}
			o.Slots = append([]int{0}, o.Slots...)
		},
		"slot out of range": func(p *Plan) { s := holder(p, 0); s.Slots = append(s.Slots, p.Funcs[0].Slices) },
		"one slot":          func(p *Plan) { p.Funcs[0].Slices = 1 },
		"too many slots":    func(p *Plan) { p.Funcs[0].Slices = MaxSlices + 1 },
		"no copy":           func(p *Plan) { p.Funcs[1].Slices = 2 },
		"also whole": func(p *Plan) {
			c := p.Funcs[0].Tasks[0].Copy
			p.Copies[c].BallLarus = append([]int{0}, p.Copies[c].BallLarus...)
		},
	} {
		t.Run(name, func(t *testing.T) { refused(t, b, graphs, spoil) })
	}
}

// TestPlanLoopSlices: a function called once whose loop runs 1000
// iterations is shared out by its loop's iterations when the instrumenter
// can share the loop, and not otherwise; the plan goes through JSON and
// Check, which refuses a loop that is no header or has no slots.
func TestPlanLoopSlices(t *testing.T) {
	_, ms, _ := realModules(t)
	m := ms[0]
	// One call in all: the paths from the entry share it.
	graphs, ws := loopFuncs(t, m, 11, func(paths float64) float64 { return 1 / paths })
	var asked []int32
	opt := Options{Weights: ws, ShareLoop: func(def int, h int32) bool {
		if def == 0 {
			asked = append(asked, h)
		}
		return true
	}}
	p, err := Make(m, graphs, profile.P3, 4, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, m, graphs, p, ws)
	pbl, err := Make(m, graphs, profile.PBL, 4, opt)
	if err != nil {
		t.Fatal(err)
	}
	f := p.Funcs[0]
	if f.Slices < 2 || f.Loop == 0 || !isHeader(graphs[0], f.Loop) || !slices.Contains(asked, f.Loop) {
		t.Fatalf("the loop is not shared out: slices %d, loop %d (asked %v)", f.Slices, f.Loop, asked)
	}
	if largestLoad(p) >= largestLoad(pbl) {
		t.Fatalf("plan's largest load %d, PBL's %d", largestLoad(p), largestLoad(pbl))
	}
	opt.ShareLoop = func(int, int32) bool { return false }
	if q, err := Make(m, graphs, profile.P3, 4, opt); err != nil || q.Funcs[0].Slices != 0 {
		t.Fatalf("a loop the instrumenter refuses is shared out (%v)", err)
	}
	b := roundTrip(t, p, graphs)
	for name, spoil := range map[string]func(p *Plan){
		"no header": func(p *Plan) {
			for h := int32(2); int(h) < graphs[0].NumNodes; h++ {
				if !isHeader(graphs[0], h) {
					p.Funcs[0].Loop = h
					return
				}
			}
			t.Skip("every node is a header")
		},
		"out of range": func(p *Plan) { p.Funcs[0].Loop = int32(graphs[0].NumNodes) },
		"no slots":     func(p *Plan) { p.Funcs[1].Loop = 2 },
	} {
		t.Run(name, func(t *testing.T) { refused(t, b, graphs, spoil) })
	}
}

// calledOnceLoop is the first C program with loopFuncs' graphs and
// weights, function 0 (called from one place at most) having a loop and
// the functions from maxSplitTries/2 on never run, so that function 0 is
// among those the planner tries.
func calledOnceLoop(t *testing.T) (*wasm.Module, []*cfg.DAG, [][]float64) {
	t.Helper()
	_, ms, _ := realModules(t)
	m := ms[0]
	callers, err := FindCallers(m)
	if err != nil {
		t.Fatal(err)
	}
	if n := callers.Sites[m.NumImportedFuncs]; n > 1 {
		t.Fatalf("function 0 of the first C program has %d call sites", n)
	}
	graphs, ws := loopFuncs(t, m, 11, func(paths float64) float64 { return 1 / paths })
	for def := maxSplitTries / 2; def < len(ws); def++ {
		ws[def] = nil
	}
	return m, graphs, ws
}

// TestGuessedHedges: planned by an estimate (Options.Guessed), P3 shares
// out the loop of a function called from one place at most even when
// the estimate calls the function cold, which a profile's plan does not,
// one slot per copy; not when the estimate calls it over and over
// (Options.Repeated).
func TestGuessedHedges(t *testing.T) {
	m, graphs, ws := calledOnceLoop(t)
	for e := range ws[0] {
		ws[0][e] = math.Ceil(ws[0][e] / 1000) // cold, by the estimate
	}
	opt := Options{Weights: ws, ShareLoop: func(int, int32) bool { return true }}
	p, err := Make(m, graphs, profile.P3, 4, opt)
	if err != nil {
		t.Fatal(err)
	}
	if p.Funcs[0].Slices != 0 {
		t.Fatalf("planned by a profile, the cold loop is shared out in %d slots", p.Funcs[0].Slices)
	}
	opt.Guessed = true
	if p, err = Make(m, graphs, profile.P3, 4, opt); err != nil {
		t.Fatal(err)
	}
	checkPlan(t, m, graphs, p, ws)
	f := p.Funcs[0]
	if f.Slices != 4 || f.Loop == 0 {
		t.Fatalf("hedged: slices %d, loop %d", f.Slices, f.Loop)
	}
	for j, task := range f.Tasks {
		if task.Copy != j {
			t.Fatalf("slot %d in copy %d", j, task.Copy)
		}
	}
	// Called over and over by the estimate, it is not hedged: every copy
	// would pay the probes around its loop at every call.
	opt.Repeated = make([]bool, len(ws))
	opt.Repeated[0] = true
	if p, err = Make(m, graphs, profile.P3, 4, opt); err != nil {
		t.Fatal(err)
	}
	if f := p.Funcs[0]; f.Slices != 0 {
		t.Fatalf("a repeated function hedged in %d slots", f.Slices)
	}
}

// TestWholeHits: given the instrumenter's hits of whole functions
// (Options.WholeHits), a whole-function task costs them, and a function
// that class splits would then divide is still shared out by its loop's
// iterations when that divides it better: every class pays the loop.
func TestWholeHits(t *testing.T) {
	_, ms, _ := realModules(t)
	m := ms[0]
	graphs, ws := loopFuncs(t, m, 11, func(paths float64) float64 { return 1 / paths })
	opt := Options{Weights: ws, ShareLoop: func(int, int32) bool { return true }}
	p, err := Make(m, graphs, profile.PBL, 4, opt)
	if err != nil {
		t.Fatal(err)
	}
	// What the instrumenter adds around the probes: a tenth more.
	opt.WholeHits = make([]float64, len(ws))
	for def, f := range p.Funcs {
		opt.WholeHits[def] = -1
		if ws[def] != nil && len(f.Tasks) == 1 {
			opt.WholeHits[def] = float64(f.Tasks[0].Cost) * 1.1
		}
	}
	if p, err = Make(m, graphs, profile.PBL, 4, opt); err != nil {
		t.Fatal(err)
	}
	for def, f := range p.Funcs {
		if opt.WholeHits[def] >= 0 && float64(f.Tasks[0].Cost) != math.Round(opt.WholeHits[def]) {
			t.Fatalf("function %d: whole task costs %d, its hits %v", def, f.Tasks[0].Cost, opt.WholeHits[def])
		}
	}
	pbl := p
	if p, err = Make(m, graphs, profile.P3, 4, opt); err != nil {
		t.Fatal(err)
	}
	checkPlan(t, m, graphs, p, ws)
	if f := p.Funcs[0]; f.Slices < 2 || f.Loop == 0 {
		t.Fatalf("the loop is not shared out: slices %d, loop %d, %d tasks", f.Slices, f.Loop, len(f.Tasks))
	}
	if largestLoad(p) >= largestLoad(pbl) {
		t.Fatalf("plan's largest load %d, PBL's %d", largestLoad(p), largestLoad(pbl))
	}
}

// TestGuessedHedgesLongLoops: planned by an estimate, a loop the estimate
// gives at least hedgedTrips iterations per entry (a dispatch loop) is
// hedged even in a function that several call instructions name.
func TestGuessedHedgesLongLoops(t *testing.T) {
	_, ms, _ := realModules(t)
	m := ms[0]
	callers, err := FindCallers(m)
	if err != nil {
		t.Fatal(err)
	}
	j := -1
	for def := 1; def < len(m.Code) && def < maxSplitTries/2; def++ {
		if callers.Sites[m.NumImportedFuncs+uint32(def)] > 1 {
			j = def
			break
		}
	}
	if j < 0 {
		t.Fatal("no function named by several call instructions")
	}
	plan := func(perEntry float64) FuncInfo {
		t.Helper()
		graphs, ws := loopFuncs(t, m, 11, func(paths float64) float64 { return 1 / paths })
		// Function 0 has a loop: every path from the entry runs once
		// and every path that starts at a loop header perEntry times.
		d, w := graphs[0], ws[0]
		clear(w)
		paths, _ := dagtest.Paths(d, cfg.Entry, 200)
		for _, p := range paths {
			n := 1.0
			if d.Edges[p[0]].Kind == cfg.EdgeDummyEntry {
				n = perEntry
			}
			for _, e := range p {
				w[e] += n
			}
		}
		graphs[0], graphs[j] = graphs[j], graphs[0]
		ws[0], ws[j] = ws[j], ws[0]
		for def := maxSplitTries / 2; def < len(ws); def++ {
			ws[def] = nil
		}
		p, err := Make(m, graphs, profile.P3, 4, Options{Weights: ws, Guessed: true, ShareLoop: func(int, int32) bool { return true }})
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, m, graphs, p, ws)
		return p.Funcs[j]
	}
	if f := plan(2 * hedgedTrips); f.Slices != 4 || f.Loop == 0 {
		t.Fatalf("a long loop is not hedged: slices %d, loop %d", f.Slices, f.Loop)
	}
	for j, task := range plan(2 * hedgedTrips).Tasks {
		if task.Copy != j {
			t.Fatalf("slot %d in copy %d", j, task.Copy)
		}
	}
	if f := plan(1); f.Slices != 0 {
		t.Fatalf("a short loop of a function called from several places is shared out in %d slots", f.Slices)
	}
}
