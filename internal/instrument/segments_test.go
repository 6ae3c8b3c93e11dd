// Tests of OSP's sampling copy: the locals kept at back edges, threaded
// jumps kept free of probes, what End learns where paths end; and every
// spec module still compiles as a sampling copy and as a counting copy.

package instrument

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
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
	b := wasmtest.Encode(t, m, wasm.SecType, wasm.SecFunction, wasm.SecCode)
	m, err := wasm.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCarried checks the locals that End is asked to keep at a loop's
// back edge: of the loop's locals, the two it carries round (the counter
// and the sum) and the path register; not the one it writes before
// reading in every iteration, nor the parameter and the locals it only
// reads, nor one used only before the loop; nothing elsewhere, and
// nothing when the loop calls.
func TestCarried(t *testing.T) {
	for _, calls := range []bool{false, true} {
		const n, i, sum, tmp, inv, pre = 0, 1, 2, 3, 4, 5
		var a wasm.Asm
		a.Idx(wasm.OpLocalGet, n).Idx(wasm.OpLocalSet, inv)
		a.Idx(wasm.OpLocalGet, n).Idx(wasm.OpLocalTee, pre).Idx(wasm.OpLocalGet, pre).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, sum)
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
			[]wasm.LocalDecl{{Count: 5, Type: wasm.ValI32}}, a.B)
		orig := wasmtest.Encode(t, m)
		var got [][]Local
		var reg uint32
		res, err := InstrumentSegments(orig, Segments{End: func(_ *wasm.Asm, f *Func, s EndSite) []byte {
			reg = f.reg
			if s.Branch < 0 && s.Keep != nil {
				t.Errorf("keep %v at a path end without a branch", s.Keep)
			}
			if s.Branch >= 0 {
				got = append(got, s.Keep)
			}
			return nil
		}})
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
	f := &segFunc{Func: &Func{Index: 0}}
	if err := planSegments(m, 0, f, cfg.Options{SplitCalls: true, Thread: true}); err != nil {
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

// wrapEnd is a Segments.End that wraps the instruction after each path
// end as an arm of osp's would (without its recorder): an if of the
// site's Block, taken when the path's value is odd, whose arm makes the
// call itself (the original going into an else) or returns; elsewhere
// nothing. It counts the sites it wrapped by the opcode that follows.
func wrapEnd(wrapped map[wasm.Op]int) func(a *wasm.Asm, f *Func, s EndSite) []byte {
	return func(a *wasm.Asm, f *Func, s EndSite) []byte {
		if s.Block < 0 || s.Branch >= 0 {
			return nil
		}
		a.Idx(wasm.OpLocalGet, s.P).Op(wasm.OpI32Wrap).I32(1).Op(wasm.OpI32And).BlockT(wasm.OpIf, uint32(s.Block))
		switch {
		case s.Call == nil:
			wrapped[wasm.OpReturn]++
			a.Op(wasm.OpReturn).Op(wasm.OpEnd)
			return nil
		case wasm.Op(s.Call[0]) == wasm.OpReturnCall || wasm.Op(s.Call[0]) == wasm.OpReturnCallIndirect:
			wrapped[wasm.Op(s.Call[0])]++
			a.B = append(a.B, s.Call...)
			a.Op(wasm.OpEnd)
			return nil
		}
		wrapped[wasm.Op(s.Call[0])]++
		a.B = append(a.B, s.Call...)
		a.Op(wasm.OpElse)
		return []byte{byte(wasm.OpEnd)}
	}
}

// endSitesModule has $g (i32 i64) -> f64, $h (externref) -> () and the
// exported $f (i32) -> i32, which calls $g, $g through a table, and $h,
// each in an if of its own (so that a block precedes each call), then
// tail-calls itself with its argument less one while that is odd, and
// returns it.
func endSitesModule(t *testing.T) []byte {
	ext := wasm.ValType{Code: wasm.ExternRef}
	i32, i64, f64 := wasm.ValI32, wasm.ValI64, wasm.ValF64
	var g, h, f wasm.Asm
	g.Idx(wasm.OpLocalGet, 0).Op(wasm.Op(0xAC)).Idx(wasm.OpLocalGet, 1).Op(wasm.OpI64Add).Op(wasm.Op(0xB9)).Op(wasm.OpEnd)
	h.Op(wasm.OpEnd)
	f.Idx(wasm.OpLocalGet, 0).Block(wasm.OpIf)
	f.Idx(wasm.OpLocalGet, 0).I64(5).Idx(wasm.OpCall, 0).Op(wasm.OpDrop)
	f.Op(wasm.OpEnd)
	f.Idx(wasm.OpLocalGet, 0).Block(wasm.OpIf)
	f.Idx(wasm.OpLocalGet, 0).I64(6).I32(0)
	f.B = append(f.B, byte(wasm.OpCallIndirect), 0, 0)
	f.Op(wasm.OpDrop)
	f.Op(wasm.OpEnd)
	f.Idx(wasm.OpLocalGet, 0).Block(wasm.OpIf)
	f.B = append(f.B, byte(wasm.OpRefNull), wasm.ExternRef)
	f.Idx(wasm.OpCall, 1)
	f.Op(wasm.OpEnd)
	f.Idx(wasm.OpLocalGet, 0).I32(1).Op(wasm.OpI32And).Block(wasm.OpIf)
	f.Idx(wasm.OpLocalGet, 0).I32(1).Op(wasm.OpI32Sub).Idx(wasm.OpReturnCall, 2)
	f.Op(wasm.OpEnd)
	f.Idx(wasm.OpLocalGet, 0).Op(wasm.OpEnd)
	var off wasm.Asm
	off.I32(0).Op(wasm.OpEnd)
	m := &wasm.Module{
		Version: 1,
		Types: []wasm.FuncType{
			{Params: []wasm.ValType{i32, i64}, Results: []wasm.ValType{f64}},
			{Params: []wasm.ValType{ext}},
			{Params: []wasm.ValType{i32}, Results: []wasm.ValType{i32}},
		},
		Funcs:    []uint32{0, 1, 2},
		Tables:   []wasm.Table{{Type: wasm.ValType{Code: wasm.FuncRef}, Limits: wasm.Limits{Min: 1}}},
		Elements: []wasm.Element{{Flags: 0, Offset: off.B, Funcs: []uint32{0}}},
		Exports:  []wasm.Export{{Name: "f", Kind: wasm.KindFunc, Index: 2}},
		Code:     []wasm.Code{wasm.NewCode(nil, g.B), wasm.NewCode(nil, h.B), wasm.NewCode(nil, f.B)},
	}
	return wasmtest.Encode(t, m, wasm.SecType, wasm.SecFunction, wasm.SecTable, wasm.SecExport, wasm.SecElement, wasm.SecCode)
}

// TestEndSites checks what End learns of the values on the stack where
// a path ends before a call or a return: a call's arguments (with
// call_indirect's table index), the call itself and an if type that
// takes them and gives the call's results; a tail call's and a return's
// operands given back; nothing where a call takes a reference. The
// module, wrapped at each site as osp's arms do, must run as the
// original does, whichever way the arms go.
func TestEndSites(t *testing.T) {
	orig := endSitesModule(t)
	type site struct {
		call     wasm.Op // 0: none
		operands []wasm.ValType
		params   []wasm.ValType
		results  []wasm.ValType
	}
	var got []site
	var mod *wasm.Module
	wrapped := map[wasm.Op]int{}
	wrap := wrapEnd(wrapped)
	res, err := InstrumentSegments(orig, Segments{
		Setup: func(m *wasm.Module) error { mod = m; return nil },
		End: func(a *wasm.Asm, f *Func, s EndSite) []byte {
			if f.Index != 2 {
				return wrap(a, f, s)
			}
			var st site
			if s.Call != nil {
				st.call = wasm.Op(s.Call[0])
			}
			st.operands = s.Operands
			if s.Block >= 0 {
				st.params, st.results = mod.Types[s.Block].Params, mod.Types[s.Block].Results
			}
			got = append(got, st)
			return wrap(a, f, s)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	i32, i64, f64 := wasm.ValI32, wasm.ValI64, wasm.ValF64
	want := []site{
		{wasm.OpCall, []wasm.ValType{i32, i64}, []wasm.ValType{i32, i64}, []wasm.ValType{f64}},
		{wasm.OpCallIndirect, []wasm.ValType{i32, i64, i32}, []wasm.ValType{i32, i64, i32}, []wasm.ValType{f64}},
		{},
		{wasm.OpReturnCall, []wasm.ValType{i32}, []wasm.ValType{i32}, []wasm.ValType{i32}},
		{0, []wasm.ValType{i32}, []wasm.ValType{i32}, []wasm.ValType{i32}},
	}
	if len(got) != len(want) {
		t.Fatalf("End ran at %d sites of $f, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.call != w.call || !slices.Equal(g.operands, w.operands) || !slices.Equal(g.params, w.params) || !slices.Equal(g.results, w.results) {
			t.Errorf("site %d: %+v, want %+v", i, g, w)
		}
	}
	for _, op := range []wasm.Op{wasm.OpCall, wasm.OpCallIndirect, wasm.OpReturnCall, wasm.OpReturn} {
		if wrapped[op] == 0 {
			t.Errorf("no %v wrapped", op)
		}
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCoreFeatures(specFeatures))
	defer rt.Close(ctx)
	run := func(name string, b []byte, x uint64) uint64 {
		mod, err := rt.InstantiateWithConfig(ctx, b, wazero.NewModuleConfig().WithName(name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer mod.Close(ctx)
		r, err := mod.ExportedFunction("f").Call(ctx, x)
		if err != nil {
			t.Fatalf("%s: f(%d): %v", name, x, err)
		}
		return r[0]
	}
	for _, x := range []uint64{0, 1, 2, 7, 8} {
		if w, g := run("orig", orig, x), run("wrapped", res.Module, x); g != w {
			t.Errorf("f(%d) = %d wrapped, %d originally", x, g, w)
		}
	}
}

// specFeatures are the features of the spec test modules that wazero
// runs.
const specFeatures = api.CoreFeaturesV2 | experimental.CoreFeaturesTailCall | experimental.CoreFeaturesExtendedConst |
	experimental.CoreFeaturesThreads | experimental.CoreFeaturesExceptionHandling | experimental.CoreFeaturesTypedFunctionReferences

// forSpecModules calls each with every valid module of the spec tests
// that wazero compiles (where it comes from, for messages, and its bytes)
// and a function that compiles a module in the same way.
func forSpecModules(t *testing.T, each func(where string, orig []byte, compile func([]byte) error)) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCoreFeatures(specFeatures))
	defer rt.Close(ctx)
	compile := func(b []byte) error {
		c, err := rt.CompileModule(ctx, b)
		if err == nil {
			c.Close(ctx)
		}
		return err
	}
	for _, sm := range testprogs.SpecModules(t) {
		if sm.Kind != testprogs.SpecKindModule {
			continue
		}
		orig, err := os.ReadFile(sm.Path)
		if err != nil {
			t.Fatal(err)
		}
		if compile(orig) != nil {
			continue
		}
		each(fmt.Sprintf("%s (%s line %d)", sm.Path, sm.Source, sm.Line), orig, compile)
	}
}

// TestEndSitesSpec instruments every valid module of the spec tests with
// the arms of wrapEnd: each that wazero compiles must still compile, and
// the calls, indirect calls, tail calls and returns wrapped must all be
// there.
func TestEndSitesSpec(t *testing.T) {
	wrapped := map[wasm.Op]int{}
	modules := 0
	forSpecModules(t, func(where string, orig []byte, compile func([]byte) error) {
		res, err := InstrumentSegments(orig, Segments{End: wrapEnd(wrapped)})
		if err != nil {
			return
		}
		if err := compile(res.Module); err != nil {
			t.Errorf("%s: instrumented: %v", where, err)
			return
		}
		modules++
	})
	t.Logf("%d modules compiled; wrapped: %v", modules, wrapped)
	for _, op := range []wasm.Op{wasm.OpCall, wasm.OpCallIndirect, wasm.OpReturnCall, wasm.OpReturnCallIndirect, wasm.OpReturn} {
		if wrapped[op] < 10 {
			t.Errorf("only %d %v sites wrapped", wrapped[op], op)
		}
	}
}

// TestCopiesSpec instruments every valid module of the spec tests that
// wazero compiles as a counting copy, with loop counters and without:
// each must still compile (br_ifs that carry values, to loops with
// parameters, in every nesting the spec tests make).
func TestCopiesSpec(t *testing.T) {
	compiled, profiled := 0, 0
	forSpecModules(t, func(where string, orig []byte, compile func([]byte) error) {
		for _, opt := range []Options{{}, {NoLoopCounts: true}} {
			res, err := Instrument(orig, opt)
			if err != nil {
				continue
			}
			if err := compile(res.Module); err != nil {
				t.Errorf("%s: instrumented (loop counters %v): %v", where, !opt.NoLoopCounts, err)
				continue
			}
			compiled++
			for _, f := range res.Funcs {
				if f.Status == "profiled" {
					profiled++
				}
			}
		}
	})
	t.Logf("%d copies compiled, %d functions profiled", compiled, profiled)
	if compiled < 2000 {
		t.Errorf("only %d copies compiled", compiled)
	}
}
