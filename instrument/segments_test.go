package instrument

import (
	"testing"

	"pathprof/cfg"
	"pathprof/numbering"
	"pathprof/wasm"
)

// dispatchModule has one function, (i32) -> (), shaped as Go's compiler
// shapes them: its jumps set local 0 and branch to a loop whose header is
// "local.get 0; br_table". Case 0 jumps forward to case 2, case 2 back
// to case 1, and case 1 returns.
func dispatchModule(t *testing.T) *wasm.Module {
	var a wasm.Asm
	a.Block(wasm.OpBlock).Block(wasm.OpLoop)
	a.Block(wasm.OpBlock).Block(wasm.OpBlock).Block(wasm.OpBlock)
	a.Idx(wasm.OpLocalGet, 0).BrTable([]uint32{0, 1, 2, 4})
	a.Op(wasm.OpEnd)
	a.I32(2).Idx(wasm.OpLocalSet, 0).Idx(wasm.OpBr, 2)
	a.Op(wasm.OpEnd)
	a.Op(wasm.OpReturn)
	a.Op(wasm.OpEnd)
	a.I32(1).Idx(wasm.OpLocalSet, 0).Idx(wasm.OpBr, 0)
	a.Op(wasm.OpEnd).Op(wasm.OpEnd).Op(wasm.OpEnd)
	m := &wasm.Module{
		Version: 1,
		Types:   []wasm.FuncType{{Params: []wasm.ValType{wasm.ValI32}}},
		Funcs:   []uint32{0},
		Code:    []wasm.Code{{Body: append([]byte{0}, a.B...), ExprOff: 1}},
	}
	for _, id := range []byte{wasm.SecType, wasm.SecFunction, wasm.SecCode} {
		m.Touch(id)
	}
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if m, err = wasm.Decode(b); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestThreadsKept checks that a Segments function built with Thread keeps
// its threaded jump free of probes, and that any probe on the thread edge
// or on the header's arm that the jump shares would make it fall back.
func TestThreadsKept(t *testing.T) {
	m := dispatchModule(t)
	f := &Func{Index: 0}
	if err := planFunc(m, 0, f, cfg.Options{SplitCalls: true, Thread: true}, nil, true); err != nil {
		t.Fatal(err)
	}
	thread, arm := int32(-1), int32(-1)
	for i, e := range f.Graph.Edges {
		if e.Kind == cfg.EdgeThread {
			thread = int32(i)
		}
	}
	if thread < 0 {
		t.Fatal("the forward jump was not threaded")
	}
	te := f.Graph.Edges[thread]
	for _, a := range f.Graph.Blocks[f.Graph.Blocks[te.From].Same].Out {
		if f.Graph.Edges[a].To == te.To {
			arm = a
		}
	}
	if arm < 0 || !f.threadsKept() || len(f.ops[thread]) > 0 || len(f.ops[arm]) > 0 {
		t.Fatalf("thread edge %d, arm %d: kept %v, probes %v and %v", thread, arm, f.threadsKept(), f.ops[thread], f.ops[arm])
	}
	for _, e := range []int32{thread, arm} {
		f.ops[e] = []numbering.Op{{Kind: numbering.Add, Value: 1}}
		if f.threadsKept() {
			t.Errorf("a probe on edge %d (%s) kept the thread", e, f.Graph.Edges[e].Kind)
		}
		f.ops[e] = nil
	}
}
