package instrument

import (
	"slices"
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
	return funcModule(t, wasm.FuncType{Params: []wasm.ValType{wasm.ValI32}}, nil, a.B)
}

// funcModule returns a module of one function of type ft, with locals
// and expression expr, encoded and decoded again.
func funcModule(t *testing.T, ft wasm.FuncType, locals []wasm.LocalDecl, expr []byte) *wasm.Module {
	t.Helper()
	m := &wasm.Module{
		Version: 1,
		Types:   []wasm.FuncType{ft},
		Funcs:   []uint32{0},
		Code:    []wasm.Code{wasm.NewCode(locals, expr)},
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

// TestCarried checks the locals that End is asked to keep at a loop's
// back edge: of the loop's four locals, the two it carries round (the
// counter and the sum) and the path register; not the one it writes
// before reading in every iteration, nor the parameter and the local it
// only reads; nothing elsewhere, and nothing when the loop calls.
func TestCarried(t *testing.T) {
	for _, calls := range []bool{false, true} {
		const n, i, sum, tmp, inv = 0, 1, 2, 3, 4
		var a wasm.Asm
		a.Idx(wasm.OpLocalGet, n).Idx(wasm.OpLocalSet, inv)
		a.Block(wasm.OpLoop)
		a.Idx(wasm.OpLocalGet, i).Idx(wasm.OpLocalGet, inv).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, tmp)
		if calls {
			// A call, and a block after it, so that the path that ends at
			// the back edge enters a block.
			a.Idx(wasm.OpLocalGet, tmp).Idx(wasm.OpCall, 0).Idx(wasm.OpLocalSet, tmp)
			a.Block(wasm.OpBlock).Idx(wasm.OpLocalGet, tmp).Idx(wasm.OpBrIf, 0).Op(wasm.OpEnd)
		}
		a.Idx(wasm.OpLocalGet, sum).Idx(wasm.OpLocalGet, tmp).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, sum)
		a.Idx(wasm.OpLocalGet, i).I32(1).Op(wasm.OpI32Add).Idx(wasm.OpLocalTee, i)
		a.Idx(wasm.OpLocalGet, n).Op(wasm.OpI32LtS).Idx(wasm.OpBrIf, 0)
		a.Op(wasm.OpEnd)
		a.Idx(wasm.OpLocalGet, sum).Op(wasm.OpEnd)
		m := funcModule(t, wasm.FuncType{Params: []wasm.ValType{wasm.ValI32}, Results: []wasm.ValType{wasm.ValI32}},
			[]wasm.LocalDecl{{Count: 4, Type: wasm.ValI32}}, a.B)
		orig, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		var got [][]Local
		var reg uint32
		res, err := Instrument(orig, Options{Segments: &Segments{End: func(_ *wasm.Asm, f *Func, p uint32, branch int64, keep []Local) {
			reg = f.reg
			if branch < 0 && keep != nil {
				t.Errorf("keep %v at a path end without a branch", keep)
			}
			if branch >= 0 {
				got = append(got, keep)
			}
		}}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Funcs[0].Status != "profiled" {
			t.Fatalf("status %q", res.Funcs[0].Status)
		}
		want := []Local{{reg, wasm.ValI64}, {sum, wasm.ValI32}, {i, wasm.ValI32}}
		if calls {
			want = nil
		}
		if len(got) != 1 || !slices.Equal(got[0], want) {
			t.Errorf("calls %v: kept %v at the back edges, want [%v]", calls, got, want)
		}
	}
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
