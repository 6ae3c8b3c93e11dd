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
		if err := checkSplitCalls(m, i, g); err != "" {
			t.Errorf("%s: function %d: %s", name, i, err)
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

// checkSplitCalls builds the graph again with SplitCalls and checks it
// against g, built without: the same blocks, each now followed by one
// continuation per call in it that may return (an EdgeCall edge into it);
// the other edges the same; no EdgeCall edge and no cycle in the DAG, where
// each continuation starts paths through a dummy entry edge.
func checkSplitCalls(m *wasm.Module, def int, g *Graph) string {
	s, err := Build(m, def, Options{SplitCalls: true})
	if err != nil {
		return err.Error()
	}
	// Map the split graph's nodes to g's: a continuation belongs to the
	// block it continues.
	of := make([]int32, len(s.Blocks))
	byStart := map[uint32]int32{}
	for n := 2; n < len(g.Blocks); n++ {
		byStart[g.Blocks[n].Start] = int32(n)
	}
	of[Entry], of[Exit] = Entry, Exit
	conts := 0
	for n := 2; n < len(s.Blocks); n++ {
		b := s.Blocks[n]
		if !b.Cont {
			o, ok := byStart[b.Start]
			if !ok {
				return fmt.Sprintf("split node %d starts at 0x%x, where no block does", n, b.Start)
			}
			of[n] = o
			continue
		}
		conts++
		if len(b.In) != 1 || s.Edges[b.In[0]].Kind != EdgeCall {
			return fmt.Sprintf("continuation %d is entered by %d edges, not one call edge", n, len(b.In))
		}
		of[n] = of[s.Edges[b.In[0]].From]
		if b.Instrs == 0 {
			return fmt.Sprintf("continuation %d holds no instruction", n)
		}
	}
	if len(s.Blocks)-conts != len(g.Blocks) {
		return fmt.Sprintf("%d split nodes but continuations, %d blocks", len(s.Blocks)-conts, len(g.Blocks))
	}
	calls := 0
	type key struct {
		from, to int32
		kind     EdgeKind
		instr    uint32
	}
	want := map[key]int{}
	for _, e := range g.Edges {
		want[key{e.From, e.To, e.Kind, e.Instr}]++
	}
	for _, e := range s.Edges {
		if e.Kind == EdgeCall {
			calls++
			if !s.Blocks[e.To].Cont || of[e.From] != of[e.To] {
				return fmt.Sprintf("call edge %d->%d does not continue its block", e.From, e.To)
			}
			continue
		}
		k := key{of[e.From], of[e.To], e.Kind, e.Instr}
		if want[k] == 0 {
			return fmt.Sprintf("split edge %+v has no counterpart", e)
		}
		want[k]--
	}
	if calls != conts {
		return fmt.Sprintf("%d call edges for %d continuations", calls, conts)
	}
	// Every call in a reachable block splits it.
	c := &m.Code[def]
	inBlocks := 0
	for n := 2; n < len(g.Blocks); n++ {
		r := wasm.NewReader(c.Body, c.OrigOff, "code")
		r.Seek(int(g.Blocks[n].Start))
		var in wasm.Instr
		for r.Pos() < int(g.Blocks[n].End) {
			if err := r.Next(&in); err != nil {
				return err.Error()
			}
			switch in.Op {
			case wasm.OpCall, wasm.OpCallIndirect, wasm.OpCallRef:
				inBlocks++
			}
		}
	}
	if inBlocks != calls {
		return fmt.Sprintf("%d calls in the blocks, %d call edges", inBlocks, calls)
	}
	d := s.DAG()
	if err := checkTopo(s, d); err != "" {
		return "split: " + err
	}
	entered := map[int32]bool{}
	for _, e := range d.Edges {
		if e.Kind == EdgeCall {
			return "a call edge in the DAG"
		}
		if e.Kind == EdgeDummyEntry {
			entered[e.To] = true
		}
	}
	for n := range s.Blocks {
		if s.Blocks[n].Cont && !entered[int32(n)] {
			return fmt.Sprintf("continuation %d has no dummy entry edge", n)
		}
	}
	return ""
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
