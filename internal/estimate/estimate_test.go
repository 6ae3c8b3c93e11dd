package estimate

import (
	"math"
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
			w, err := Frequencies(m, funcs)
			if err != nil {
				t.Fatal(err)
			}
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
// code) and no dispatch loop in sort, which has none.
func TestDispatchLoop(t *testing.T) {
	if got := dispatchLoops(t, "vm"); !slices.Contains(got, "__original_main") {
		t.Fatalf("dispatch loops in %q, want one in __original_main (vm's run, inlined)", got)
	}
	if got := dispatchLoops(t, "sort"); slices.ContainsFunc(got, func(s string) bool { return s != "printf_core" }) {
		t.Fatalf("dispatch loops in %q: sort has none outside printf_core's format loop", got)
	}
}

// dispatchLoops returns the functions of a C program in which the
// estimate finds dispatch loops.
func dispatchLoops(t *testing.T, name string) []string {
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
		for _, l := range loopsOf(f.Graph) {
			if dispatches(f.Graph, l, ins) && !slices.Contains(found, names[i]) {
				found = append(found, names[i])
			}
		}
	}
	return found
}

// loopsOf returns a graph's loops as estimateFunc finds them.
func loopsOf(g *cfg.Graph) []*loop {
	latches := map[int32][]int32{}
	for _, e := range g.Edges {
		if e.Back {
			latches[e.To] = append(latches[e.To], e.From)
		}
	}
	var out []*loop
	for h, ls := range latches {
		in := region(g, h, ls)
		l := &loop{header: h, in: in}
		for v, ok := range in {
			if ok {
				l.nodes = append(l.nodes, int32(v))
			}
		}
		out = append(out, l)
	}
	return out
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
