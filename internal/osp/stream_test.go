// Tests that a sampling copy's paths rebuild the run's block entries: wide
// functions cut, long paths block by block, empty paths without an end.

package osp

import (
	"bytes"
	"context"
	"os"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
)

// streamSum is a run's block entries, as file offsets, folded into a
// count and an order-sensitive hash.
type streamSum struct {
	n    uint64
	hash uint64
}

func (s *streamSum) add(off int) {
	s.n++
	s.hash = (s.hash^uint64(off)+0x9e3779b97f4a7c15)*0x100000001b3 + s.n
}

// perBlockStream runs orig with a call of a Go function at the start of
// every basic block (cfg.Build's, as package tracer and the earlier
// block-by-block countdown saw them): an oracle for the block entries
// that paths rebuild, sharing no numbering with them.
func perBlockStream(t *testing.T, ctx context.Context, orig []byte, rc runner.Config) streamSum {
	t.Helper()
	m, err := wasm.Decode(orig)
	if err != nil {
		t.Fatal(err)
	}
	typ := m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI32}})
	blk, err := m.AddFuncImport("pathprof_test", "block", typ)
	if err != nil {
		t.Fatal(err)
	}
	opts := cfg.Options{NoReturn: cfg.NoReturnImports(m, procExit)}
	var offsets []int
	for i := range m.Code {
		code := &m.Code[i]
		g, err := cfg.Build(m, i, opts)
		if err != nil {
			t.Fatal(err)
		}
		var edits []wasm.Edit
		for n := 2; n < len(g.Blocks); n++ {
			var a wasm.Asm
			a.I32(int32(len(offsets))).Idx(wasm.OpCall, blk)
			offsets = append(offsets, code.OrigOff+int(code.Map.Orig(g.Blocks[n].Start)))
			edits = append(edits, wasm.Edit{Off: g.Blocks[n].Start, Ins: a.B})
		}
		if err := code.Splice(edits); err != nil {
			t.Fatal(err)
		}
	}
	b := wasmtest.Encode(t, m)
	var sum streamSum
	rc.HostModules = func(ctx context.Context, r wazero.Runtime) ([]wazero.CompiledModule, error) {
		c, err := r.NewHostModuleBuilder("pathprof_test").NewFunctionBuilder().
			WithFunc(func(id uint32) { sum.add(offsets[id]) }).Export("block").Compile(ctx)
		return []wazero.CompiledModule{c}, err
	}
	prog, err := runner.Compile(ctx, b, rc)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close(ctx)
	if _, err := prog.Run(ctx, rc); err != nil {
		t.Fatal(err)
	}
	return sum
}

// tracedStream runs ins in trace mode and folds the block entries its
// paths rebuild.
func tracedStream(t *testing.T, ctx context.Context, ins *Instrumented, rc runner.Config) streamSum {
	t.Helper()
	prog, err := Compile(ctx, ins, ModeTrace, rc)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close(ctx)
	var sum streamSum
	_, err = prog.trace(ctx, rc, func(ids []uint32) {
		for _, id := range ids {
			sum.add(ins.Blocks[id].Offset)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// wideModule is a program whose function $wide has more than 2^46 paths
// (48 if/else diamonds in a row, the first and the last calling $leaf in
// one arm, which ends a path): more than a packed register's 2^40 ids, so
// instrumentation must cut it. _start calls
// it 3000 times in a loop, with bits that change from call to call.
func wideModule() []byte {
	var leaf, wide, start wasm.Asm
	// $leaf: (i32) -> i32, one diamond of its own.
	leaf.Idx(wasm.OpLocalGet, 0).I32(1).Op(wasm.OpI32And)
	leaf.Block(wasm.OpIf).Op(wasm.OpElse).Op(wasm.OpEnd)
	leaf.Idx(wasm.OpLocalGet, 0).Op(wasm.OpEnd)
	// $wide: (i32) -> ()
	for bit := range 48 {
		leaf := uint32(0)
		wide.Idx(wasm.OpLocalGet, 0).I32(int32(1) << (bit % 31)).Op(wasm.OpI32And)
		wide.Block(wasm.OpIf)
		if bit == 0 || bit == 47 {
			wide.Idx(wasm.OpLocalGet, 0).Idx(wasm.OpCall, leaf).Op(wasm.OpDrop)
		}
		wide.Op(wasm.OpElse).Op(wasm.OpNop).Op(wasm.OpEnd)
		if bit == 30 {
			// Later bits repeat earlier ones: rotate the input.
			wide.Idx(wasm.OpLocalGet, 0).I32(7).Op(0x77).Idx(wasm.OpLocalSet, 0) // i32.rotl
		}
	}
	wide.Op(wasm.OpEnd)
	// _start: for i in 0..3000: $wide(i * 2654435761)
	start.Block(wasm.OpLoop)
	start.Idx(wasm.OpLocalGet, 0).I32(-1640531535).Op(0x6c).Idx(wasm.OpCall, 1) // i32.mul
	start.Idx(wasm.OpLocalGet, 0).I32(1).Op(wasm.OpI32Add).Idx(0x22, 0)         // local.tee
	start.I32(3000).Op(wasm.OpI32LtU).Idx(wasm.OpBrIf, 0)
	start.Op(wasm.OpEnd).Op(wasm.OpEnd)
	i32 := []wasm.ValType{wasm.ValI32}
	m := &wasm.Module{
		Version: 1,
		Types:   []wasm.FuncType{{Params: i32, Results: i32}, {Params: i32}, {}},
		Funcs:   []uint32{0, 1, 2},
		Exports: []wasm.Export{{Name: "_start", Kind: wasm.KindFunc, Index: 2}},
		Code: []wasm.Code{
			{Body: append([]byte{0}, leaf.B...), ExprOff: 1},
			{Body: append([]byte{0}, wide.B...), ExprOff: 1},
			{Body: append([]byte{1, 1, wasm.I32}, start.B...), ExprOff: 3},
		},
	}
	return encodeModule(m)
}

// plainSegments instruments orig as Segments with End code that only
// reads the ending path's value, to see how its functions were built.
func plainSegments(t *testing.T, orig []byte) *instrument.Result {
	t.Helper()
	res, err := instrument.InstrumentSegments(orig, instrument.Segments{
		End: func(a *wasm.Asm, _ *instrument.Func, s instrument.EndSite) []byte {
			a.Idx(wasm.OpLocalGet, s.P).Op(wasm.OpDrop)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestWideFunctionIsCut checks a function with more paths than a packed
// register holds: it is cut, and its paths still rebuild the run's block
// entries exactly.
func TestWideFunctionIsCut(t *testing.T) {
	ctx := context.Background()
	orig := wideModule()
	ins, err := Instrument(orig)
	if err != nil {
		t.Fatal(err)
	}
	res := plainSegments(t, orig)
	if f := res.Funcs[1]; len(f.Cuts) == 0 || f.Num.Paths() > 1<<instrument.IDBits || f.Graph.DAG().NumPaths().Small <= 1<<46 {
		t.Fatalf("the wide function (%s paths) was not cut to 2^40: cut at %v, %d paths", f.Graph.DAG().NumPaths(), f.Cuts, f.Num.Paths())
	}
	want := perBlockStream(t, ctx, orig, runner.Config{})
	if want.n < 3000*100 {
		t.Fatalf("only %d block entries", want.n)
	}
	if got := tracedStream(t, ctx, ins, runner.Config{}); got != want {
		t.Errorf("paths rebuild %d block entries (hash %x), the program made %d (hash %x)", got.n, got.hash, want.n, want.hash)
	}
}

// longModule is a program whose function $long has one path of n + 3
// blocks (its entry, the arm of an if, the join after it, and n blocks
// that their br leaves at once), and another without the arm; _start
// calls it with 1 and 0.
func longModule(n int) []byte {
	var long, start wasm.Asm
	long.Idx(wasm.OpLocalGet, 0).Block(wasm.OpIf).Op(wasm.OpNop).Op(wasm.OpEnd)
	for range n {
		long.Block(wasm.OpBlock).Idx(wasm.OpBr, 0).Op(wasm.OpEnd)
	}
	long.Op(wasm.OpEnd)
	start.I32(1).Idx(wasm.OpCall, 0).I32(0).Idx(wasm.OpCall, 0).Op(wasm.OpEnd)
	m := &wasm.Module{
		Version: 1,
		Types:   []wasm.FuncType{{Params: []wasm.ValType{wasm.ValI32}}, {}},
		Funcs:   []uint32{0, 1},
		Exports: []wasm.Export{{Name: "_start", Kind: wasm.KindFunc, Index: 1}},
		Code: []wasm.Code{
			{Body: append([]byte{0}, long.B...), ExprOff: 1},
			{Body: append([]byte{0}, start.B...), ExprOff: 1},
		},
	}
	return encodeModule(m)
}

// TestLongPathsGoBlockwise checks the limit of a path's block entries in
// a packed register (2^CountBits - 1): a function whose longest path makes
// that many is numbered, one whose path makes one more is instrumented
// block by block. The numbered one's paths give the run's block entries
// exactly; their order is checked on a shorter one (wazero takes some
// seconds to compile a function of 2^16 blocks, and the check three
// times as many).
func TestLongPathsGoBlockwise(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		blocks         int
		blockwise, run bool
	}{{1<<instrument.CountBits - 1, false, true}, {1 << instrument.CountBits, true, false}, {1000, false, true}} {
		orig := longModule(c.blocks - 3)
		if f := plainSegments(t, orig).Funcs[0]; f.Blockwise != c.blockwise {
			t.Errorf("a path of %d blocks: blockwise %v (%s), want %v", c.blocks, f.Blockwise, f.Status, c.blockwise)
		}
		if !c.run {
			continue
		}
		ins, err := Instrument(orig)
		if err != nil {
			t.Fatal(err)
		}
		got := tracedStream(t, ctx, ins, runner.Config{})
		// $long's two paths, and _start's block.
		if got.n != uint64(2*c.blocks) {
			t.Errorf("a path of %d blocks: paths rebuild %d block entries, want %d", c.blocks, got.n, 2*c.blocks)
		}
		if c.blocks < 1<<12 {
			if want := perBlockStream(t, ctx, orig, runner.Config{}); got != want {
				t.Errorf("a path of %d blocks: paths rebuild %d block entries (hash %x), the program made %d (hash %x)", c.blocks, got.n, got.hash, want.n, want.hash)
			}
		}
	}
}

// TestPathsRebuildBlockEntries checks the heart of the instrumentation:
// the blocks of the paths the program reports, one path after another,
// are exactly its block entries in order, as a call at every block start
// sees them; also with every other function instrumented block by block
// (the fallback for functions that cannot be numbered).
func TestPathsRebuildBlockEntries(t *testing.T) {
	ctx := context.Background()
	for _, p := range benchPrograms(t, true) {
		if !slices.Contains([]string{"records", "grid", "wordfreq", "hello"}, p.Name) {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			orig, err := os.ReadFile(p.Path)
			if err != nil {
				t.Fatal(err)
			}
			want := perBlockStream(t, ctx, orig, p.Config(t, &bytes.Buffer{}))
			if want.n < 10000 {
				t.Fatalf("only %d block entries", want.n)
			}
			for _, v := range copyVariants {
				ins := v.instrument(t, orig)
				if got := tracedStream(t, ctx, ins, p.Config(t, &bytes.Buffer{})); got != want {
					t.Errorf("block by block for every other function %v, jumps threaded %v: paths rebuild %d block entries (hash %x), the program made %d (hash %x)",
						v.mixed, v.thread, got.n, got.hash, want.n, want.hash)
				}
				// Go's jumps go through dispatch loops; C has none.
				threads := 0
				for _, pf := range ins.funcs {
					if pf == nil || pf.dag == nil {
						continue
					}
					for _, e := range pf.dag.Edges {
						if e.Kind == cfg.EdgeThread {
							threads++
						}
					}
				}
				if goProgram := p.Name == "hello"; (threads > 0) != (goProgram && v.thread) {
					t.Errorf("jumps threaded %v: %d thread edges", v.thread, threads)
				}
			}
		})
	}
}

// emptyEndsModule is a program whose _start has paths without blocks: a
// call's continuation that reaches the next call, one that takes the
// loop's back edge, and one that returns.
//
//	loop
//	  (call $leaf (local.get 0)) drop   ;; the loop's block ends a path
//	  (call $leaf (local.get 0)) drop   ;; empty: continuation to call
//	  local.get 0  i32.const 1  i32.add  local.tee 0
//	  i32.const 1000  i32.lt_u  br_if 0 ;; empty: continuation to back edge
//	end
//	(call $leaf (local.get 0)) drop     ;; the block after the loop
//	                                    ;; empty: continuation to return
func emptyEndsModule() []byte {
	var leaf, start wasm.Asm
	leaf.Idx(wasm.OpLocalGet, 0).I32(1).Op(wasm.OpI32Add).Op(wasm.OpEnd)
	call := func() { start.Idx(wasm.OpLocalGet, 0).Idx(wasm.OpCall, 0).Op(wasm.OpDrop) }
	start.Block(wasm.OpLoop)
	call()
	call()
	start.Idx(wasm.OpLocalGet, 0).I32(1).Op(wasm.OpI32Add).Idx(0x22, 0) // local.tee
	start.I32(1000).Op(wasm.OpI32LtU).Idx(wasm.OpBrIf, 0)
	start.Op(wasm.OpEnd)
	call()
	start.Op(wasm.OpEnd)
	i32 := []wasm.ValType{wasm.ValI32}
	m := &wasm.Module{
		Version: 1,
		Types:   []wasm.FuncType{{Params: i32, Results: i32}, {}},
		Funcs:   []uint32{0, 1},
		Exports: []wasm.Export{{Name: "_start", Kind: wasm.KindFunc, Index: 1}},
		Code: []wasm.Code{
			{Body: append([]byte{0}, leaf.B...), ExprOff: 1},
			{Body: append([]byte{1, 1, wasm.I32}, start.B...), ExprOff: 3},
		},
	}
	return encodeModule(m)
}

// TestEmptyPathsHaveNoEnd checks that paths without blocks get no code
// where they end (End runs for $leaf's return and for the two calls that
// end a block's path, not for the three empty paths) and that the paths
// that remain still rebuild the run's block entries exactly.
func TestEmptyPathsHaveNoEnd(t *testing.T) {
	ctx := context.Background()
	orig := emptyEndsModule()
	ends := 0
	_, err := instrument.InstrumentSegments(orig, instrument.Segments{
		End: func(a *wasm.Asm, _ *instrument.Func, s instrument.EndSite) []byte {
			ends++
			a.Idx(wasm.OpLocalGet, s.P).Op(wasm.OpDrop)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ends != 3 {
		t.Errorf("End ran at %d path ends, want 3", ends)
	}
	ins, err := Instrument(orig)
	if err != nil {
		t.Fatal(err)
	}
	want := perBlockStream(t, ctx, orig, runner.Config{})
	// _start's first block, before the loop; per iteration the loop's
	// block and $leaf's, twice; the block after the loop and $leaf's.
	if want.n != 1+1000*3+2 {
		t.Errorf("%d block entries", want.n)
	}
	if got := tracedStream(t, ctx, ins, runner.Config{}); got != want {
		t.Errorf("paths rebuild %d block entries (hash %x), the program made %d (hash %x)", got.n, got.hash, want.n, want.hash)
	}
}
