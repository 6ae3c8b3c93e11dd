package cfg

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
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
		if err := checkLists(g); err != "" {
			t.Errorf("%s: function %d: %s", name, i, err)
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
		if err := checkThread(m, i); err != "" {
			t.Errorf("%s: function %d: %s", name, i, err)
		}
		if err := checkLocals(m, i, g); err != "" {
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

// checkLists checks each block's Out and In against the edges: every edge
// out of (into) the block, in index order, and no room past the list, so
// that appending to one list never writes into another's.
func checkLists(g *Graph) string {
	out, in := make([][]int32, len(g.Blocks)), make([][]int32, len(g.Blocks))
	for i, e := range g.Edges {
		out[e.From] = append(out[e.From], int32(i))
		in[e.To] = append(in[e.To], int32(i))
	}
	for v, b := range g.Blocks {
		if !slices.Equal(b.Out, out[v]) || !slices.Equal(b.In, in[v]) {
			return fmt.Sprintf("block %d: out %v, in %v; its edges say out %v, in %v", v, b.Out, b.In, out[v], in[v])
		}
		if cap(b.Out) != len(b.Out) || cap(b.In) != len(b.In) {
			return fmt.Sprintf("block %d: lists of %d and %d with room for %d and %d", v, len(b.Out), len(b.In), cap(b.Out), cap(b.In))
		}
	}
	return ""
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
	want := edgeCounts(g)
	for _, e := range s.Edges {
		if e.Kind == EdgeCall {
			calls++
			if !s.Blocks[e.To].Cont || of[e.From] != of[e.To] {
				return fmt.Sprintf("call edge %d->%d does not continue its block", e.From, e.To)
			}
			continue
		}
		k := edgeKey{of[e.From], of[e.To], e.Kind, e.Instr}
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

// edgeKey is an edge as two builds of a graph can share it.
type edgeKey struct {
	from, to int32
	kind     EdgeKind
	instr    uint32
}

// edgeCounts counts g's edges by key.
func edgeCounts(g *Graph) map[edgeKey]int {
	n := map[edgeKey]int{}
	for _, e := range g.Edges {
		n[edgeKey{e.From, e.To, e.Kind, e.Instr}]++
	}
	return n
}

// checkThread builds the graph with SplitCalls, and again with Thread
// too, and checks the second against the first: the same nodes but for
// copies of dispatch headers (Same); the same edges but for threaded
// jumps, which go to a copy instead of the header, and the copies' one
// EdgeThread edge each, to the header's target for the jump's constant,
// which comes later in the code; and a DAG whose threaded jumps and
// header arms they share are not back edges.
func checkThread(m *wasm.Module, def int) string {
	s, err := Build(m, def, Options{SplitCalls: true})
	if err != nil {
		return err.Error()
	}
	g, err := Build(m, def, Options{SplitCalls: true, Thread: true})
	if err != nil {
		return "thread: " + err.Error()
	}
	type at struct {
		start uint32
		cont  bool
	}
	byStart := map[at]int32{}
	for n := 2; n < len(s.Blocks); n++ {
		byStart[at{s.Blocks[n].Start, s.Blocks[n].Cont}] = int32(n)
	}
	of := make([]int32, len(g.Blocks))
	of[Entry], of[Exit] = Entry, Exit
	copies := 0
	for n := 2; n < len(g.Blocks); n++ {
		b := g.Blocks[n]
		if b.Same != 0 {
			copies++
			continue
		}
		o, ok := byStart[at{b.Start, b.Cont}]
		if !ok {
			return fmt.Sprintf("thread: node %d starts at 0x%x, where no node does", n, b.Start)
		}
		of[n] = o
	}
	if len(g.Blocks)-copies != len(s.Blocks) {
		return fmt.Sprintf("thread: %d nodes but copies, %d without", len(g.Blocks)-copies, len(s.Blocks))
	}
	for n := 2; n < len(g.Blocks); n++ {
		b := g.Blocks[n]
		if b.Same == 0 {
			continue
		}
		h := g.Blocks[b.Same]
		of[n] = of[b.Same]
		if b.Start != h.Start || b.End != h.End || h.Same != 0 || len(b.Out) != 1 || g.Edges[b.Out[0]].Kind != EdgeThread {
			return fmt.Sprintf("thread: copy %d of %d is not the header with one thread edge", n, b.Same)
		}
	}
	want := edgeCounts(s)
	c := &m.Code[def]
	instrs := func(from, to uint32) []wasm.Instr {
		var out []wasm.Instr
		r := wasm.NewReader(c.Body, c.OrigOff, "code")
		r.Seek(int(from))
		for r.Pos() < int(to) {
			var in wasm.Instr
			if r.Next(&in) != nil {
				return nil
			}
			out = append(out, in)
		}
		return out
	}
	threads := 0
	for _, e := range g.Edges {
		k := edgeKey{of[e.From], of[e.To], e.Kind, e.Instr}
		switch {
		case e.Kind == EdgeThread:
			threads++
			if e.Back {
				return fmt.Sprintf("thread: thread edge %d->%d is a back edge", e.From, e.To)
			}
			k.from, k.kind = of[e.From], EdgeBrTable
			// The header's own arm to the target, in the split graph.
			found := false
			for _, a := range s.Blocks[k.from].Out {
				if se := s.Edges[a]; se.To == of[e.To] && se.Kind == EdgeBrTable && se.Instr == e.Instr {
					found = true
				}
			}
			for _, a := range g.Blocks[g.Blocks[e.From].Same].Out {
				if ge := g.Edges[a]; ge.To == e.To && ge.Back {
					return fmt.Sprintf("thread: the header's arm to %d is a back edge", e.To)
				}
			}
			if !found || len(e.Arms) != 1 {
				return fmt.Sprintf("thread: thread edge %d->%d is no arm of the header", e.From, e.To)
			}
			continue
		case g.Blocks[e.To].Same != 0:
			// A threaded jump: i32.const K, local.set x, br, to a header
			// "local.get x, br_table" whose arm K comes later.
			x := g.Blocks[e.From]
			is := instrs(x.Start, x.End)
			h := g.Blocks[e.To]
			hs := instrs(h.Start, h.End)
			if e.Kind != EdgeBr || e.Back || len(is) < 3 || len(hs) < 2 {
				return fmt.Sprintf("thread: jump %d->%d is no forward br", e.From, e.To)
			}
			cst, set, get, bt := is[len(is)-3], is[len(is)-2], hs[len(hs)-2], hs[len(hs)-1]
			if cst.Op != wasm.OpI32Const || set.Op != wasm.OpLocalSet || get.Op != wasm.OpLocalGet || set.A != get.A || bt.Op != wasm.OpBrTable {
				return fmt.Sprintf("thread: jump %d->%d does not set the header's local", e.From, e.To)
			}
			te := g.Edges[g.Blocks[e.To].Out[0]]
			if arm := min(uint64(uint32(cst.Const)), uint64(len(bt.Labels)-1)); te.Arms[0] != uint32(arm) {
				return fmt.Sprintf("thread: jump %d->%d sets %d, its copy takes arm %d", e.From, e.To, uint32(cst.Const), te.Arms[0])
			}
			if te.To == Exit || g.Blocks[te.To].Start <= x.Start {
				return fmt.Sprintf("thread: jump %d->%d goes back to 0x%x", e.From, e.To, g.Blocks[te.To].Start)
			}
			k.to = of[g.Blocks[e.To].Same]
		}
		if want[k] == 0 {
			return fmt.Sprintf("thread: edge %+v has no counterpart", e)
		}
		want[k]--
	}
	if threads != copies {
		return fmt.Sprintf("thread: %d thread edges for %d copies", threads, copies)
	}
	if err := checkTopo(g, g.DAG()); err != "" {
		return "thread: " + err
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
	return n == Entry || g.Reached([]int32{Entry})[n]
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
		_, m := wasmtest.DecodeFile(t, p)
		checked, enumerated := checkModule(t, p, m)
		t.Logf("%s: %d of %d functions matched the independent walk, %d path counts matched enumeration", p, checked, len(m.Code), enumerated)
		if checked != len(m.Code) {
			t.Errorf("%s: only %d of %d functions checked", p, checked, len(m.Code))
		}
	}
}

// dispatchBody is a function shaped as Go's compiler shapes them, with
// its jumps as "i32.const K; local.set 0; br $L" to a loop whose header
// is "local.get 0; br_table":
//
//	block $out
//	  loop $L
//	    block $c2 block $c1 block $c0
//	      local.get 0  br_table $c0 $c1 $c2 $out
//	    end                                   ;; case 0
//	    local.get 1  if  i32.const 2  local.set 0  br $L  end   ;; forward: threaded
//	    i32.const 1  local.set 1  i32.const 2  local.set 1  br $L ;; sets another local
//	    end                                   ;; case 1
//	    i32.const 0  local.set 0  br $L         ;; backward
//	  end                                     ;; case 2
//	  i32.const 9  local.set 0  br $L           ;; default arm: forward, threaded
//	end                                       ;; the end of $out
//	end
//
// The function's parameters are two i32s.
func dispatchBody(extra bool) *wasm.Code {
	var a wasm.Asm
	a.Block(wasm.OpBlock).Block(wasm.OpLoop)
	a.Block(wasm.OpBlock).Block(wasm.OpBlock).Block(wasm.OpBlock)
	if extra {
		a.Op(wasm.OpNop)
	}
	a.Idx(wasm.OpLocalGet, 0).BrTable([]uint32{0, 1, 2, 4})
	a.Op(wasm.OpEnd)
	a.Idx(wasm.OpLocalGet, 1).Block(wasm.OpIf).I32(2).Idx(wasm.OpLocalSet, 0).Idx(wasm.OpBr, 3).Op(wasm.OpEnd)
	a.I32(1).Idx(wasm.OpLocalSet, 1).I32(2).Idx(wasm.OpLocalSet, 1).Idx(wasm.OpBr, 2)
	a.Op(wasm.OpEnd)
	a.I32(0).Idx(wasm.OpLocalSet, 0).Idx(wasm.OpBr, 1)
	a.Op(wasm.OpEnd)
	a.I32(9).Idx(wasm.OpLocalSet, 0).Idx(wasm.OpBr, 0)
	a.Op(wasm.OpEnd).Op(wasm.OpEnd).Op(wasm.OpEnd)
	return &wasm.Code{Body: append([]byte{0}, a.B...), ExprOff: 1}
}

func TestThread(t *testing.T) {
	g, err := BuildBody(dispatchBody(false), Options{Thread: true})
	if err != nil {
		t.Fatal(err)
	}
	// The forward jump to case 2 and the one that takes the default arm
	// to the end of $out each go through a copy of the header, whose one
	// edge goes where the header's arm goes.
	h := int32(-1)
	arms := map[uint32]int32{}
	for n, b := range g.Blocks {
		if b.Same == 0 {
			continue
		}
		h = b.Same
		if len(b.In) != 1 || g.Edges[b.In[0]].Kind != EdgeBr || g.Edges[b.In[0]].Back || len(b.Out) != 1 {
			t.Fatalf("copy %d: in %v, out %v", n, b.In, b.Out)
		}
		te := g.Edges[b.Out[0]]
		if te.Kind != EdgeThread || len(te.Arms) != 1 {
			t.Fatalf("copy %d leaves by %+v", n, te)
		}
		arms[te.Arms[0]] = te.To
	}
	if len(arms) != 2 {
		t.Fatalf("copies for arms %v, want 2 and 3", arms)
	}
	for _, e := range g.Blocks[h].Out {
		he := g.Edges[e]
		for _, a := range he.Arms {
			if to, ok := arms[a]; ok && to != he.To {
				t.Errorf("arm %d: the copy goes to %d, the header to %d", a, to, he.To)
			}
			delete(arms, a)
		}
	}
	if len(arms) != 0 {
		t.Fatalf("copies for arms %v that the header lacks", arms)
	}
	// The other jumps go to the header itself: the one that sets another
	// local, and the backward one.
	intoH := 0
	for _, e := range g.Blocks[h].In {
		if g.Edges[e].Kind == EdgeBr {
			intoH++
		}
	}
	if intoH != 2 {
		t.Fatalf("%d jumps to the header, want 2", intoH)
	}
	if err := checkTopo(g, g.DAG()); err != "" {
		t.Fatal(err)
	}
	// With anything else in the header, or without Thread, no copies.
	for _, c := range []struct {
		extra, thread bool
	}{{true, true}, {false, false}} {
		g, err := BuildBody(dispatchBody(c.extra), Options{Thread: c.thread})
		if err != nil {
			t.Fatal(err)
		}
		for n, b := range g.Blocks {
			if b.Same != 0 {
				t.Errorf("%+v: node %d is a copy", c, n)
			}
		}
	}
}
