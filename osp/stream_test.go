package osp

import (
	"bytes"
	"context"
	"os"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"

	"pathprof/cfg"
	"pathprof/runner"
	"pathprof/wasm"
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
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
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

// TestPathsRebuildBlockEntries checks the heart of the instrumentation:
// the blocks of the paths the program reports, one path after another,
// are exactly its block entries in order, as a call at every block start
// sees them; also with every other function instrumented block by block
// (the fallback for functions that cannot be numbered).
func TestPathsRebuildBlockEntries(t *testing.T) {
	ctx := context.Background()
	for _, p := range benchPrograms(t, true) {
		if !slices.Contains([]string{"records", "grid", "wordfreq", "hello"}, p.name) {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			orig, err := os.ReadFile(p.path)
			if err != nil {
				t.Fatal(err)
			}
			want := perBlockStream(t, ctx, orig, p.config(t, &bytes.Buffer{}))
			if want.n < 10000 {
				t.Fatalf("only %d block entries", want.n)
			}
			for _, mixed := range []bool{false, true} {
				var blockwise func(uint32) bool
				if mixed {
					blockwise = func(f uint32) bool { return f%2 == 0 }
				}
				ins, err := instrumentWith(orig, countdownEnd, blockwise)
				if err != nil {
					t.Fatal(err)
				}
				if got := tracedStream(t, ctx, ins, p.config(t, &bytes.Buffer{})); got != want {
					t.Errorf("block by block for every other function %v: paths rebuild %d block entries (hash %x), the program made %d (hash %x)",
						mixed, got.n, got.hash, want.n, want.hash)
				}
			}
		})
	}
}
