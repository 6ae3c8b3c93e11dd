package cfg

import (
	"fmt"
	"os"
	"reflect"
	"testing"

	"pathprof/internal/testprogs"
	"pathprof/wasm"
)

// checkModule builds every function's graph and compares it with the
// oracle and brute-force path enumeration.
func checkModule(t *testing.T, name string, m *wasm.Module) (checked, enumerated int) {
	t.Helper()
	for i := range m.Code {
		g, err := Build(m, i, Options{})
		if err != nil {
			t.Errorf("%s: function %d: %v", name, i, err)
			continue
		}
		d := g.DAG()
		if err := checkTopo(g, d); err != "" {
			t.Errorf("%s: function %d: %s", name, i, err)
		}
		pc := d.NumPaths()
		if n, ok := enumeratePaths(d, 20000); ok {
			enumerated++
			if pc.Big != nil || pc.Small != uint64(n) {
				t.Errorf("%s: function %d: %s paths counted, %d enumerated", name, i, pc, n)
			}
		}
		o, err := newOracle(&m.Code[i])
		if err != nil {
			continue // exception handling: outside the oracle's scope
		}
		want, got := o.graph(), builderGraph(g)
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s: function %d: graph differs from the independent walk:\n blocks %v\n oracle %v\n edges %v\n oracle %v", name, i, got.blockStarts, want.blockStarts, got.edges, want.edges)
			continue
		}
		checked++
	}
	return
}

// checkTopo checks that the DAG keeps every node reachable in the graph,
// has no cycle, and that Topo orders every edge forward.
func checkTopo(g *Graph, d *DAG) string {
	pos := make([]int, d.NumNodes)
	for i := range pos {
		pos[i] = -1
	}
	for i, v := range d.Topo {
		pos[v] = i
	}
	for n := range g.Blocks {
		if pos[n] < 0 && reaches(g, int32(n)) {
			return fmt.Sprintf("node %d reachable but not in the topological order", n)
		}
	}
	for _, e := range d.Edges {
		if pos[e.From] >= 0 && pos[e.To] <= pos[e.From] {
			return fmt.Sprintf("edge %d->%d goes backwards in the topological order", e.From, e.To)
		}
	}
	return ""
}

func reaches(g *Graph, n int32) bool {
	seen := make([]bool, len(g.Blocks))
	work := []int32{Entry}
	seen[Entry] = true
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		for _, e := range g.Blocks[v].Out {
			if to := g.Edges[e].To; !seen[to] {
				seen[to] = true
				work = append(work, to)
			}
		}
	}
	return seen[n]
}

func TestSpecModules(t *testing.T) {
	var checked, enumerated, modules int
	for _, sm := range testprogs.SpecModules(t) {
		b, err := os.ReadFile(sm.Path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := wasm.Decode(b)
		if err != nil {
			continue
		}
		if sm.Kind != "module" {
			// Invalid modules must give errors or graphs, never panics.
			for i := range m.Code {
				if g, err := Build(m, i, Options{}); err == nil {
					g.DAG().NumPaths()
				}
			}
			continue
		}
		modules++
		c, e := checkModule(t, sm.Path, m)
		checked += c
		enumerated += e
	}
	t.Logf("%d modules: %d functions matched the independent walk, %d path counts matched enumeration", modules, checked, enumerated)
	if checked < 1000 || enumerated < 1000 {
		t.Errorf("too few functions checked")
	}
}

func TestRealPrograms(t *testing.T) {
	paths := []string{testprogs.GoHello(t), testprogs.GoStdTest(t, "regexp")}
	for _, p := range testprogs.CPrograms(t) {
		paths = append(paths, p.Wasm)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := wasm.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		checked, enumerated := checkModule(t, p, m)
		t.Logf("%s: %d of %d functions matched the independent walk, %d path counts matched enumeration", p, checked, len(m.Code), enumerated)
		if checked != len(m.Code) {
			t.Errorf("%s: only %d of %d functions checked", p, checked, len(m.Code))
		}
	}
}
