package counters

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/wasm"
)

// TestEmbedHashCount drives the inline probe of hashed counts
// (Embedding.HashCount) in a module whose counters live in its own
// memory, with a table of 4 slots that grows many times, and compares what
// Read gets back with counts kept in Go: the probe's copies of the table's
// capacity and address must follow every growth, and its hash must be the
// one the table's functions insert and rehash by.
func TestEmbedHashCount(t *testing.T) {
	paths := []uint64{0, 1 << 40, 1 << 62}
	l, err := NewLayout(paths, Options{HashSlots: 4})
	if err != nil {
		t.Fatal(err)
	}
	m := &wasm.Module{Version: 1, Memories: []wasm.Limits{{Min: 1}}}
	typ := m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI64}})
	var end wasm.Asm
	end.Op(wasm.OpEnd)
	for range paths {
		m.Funcs = append(m.Funcs, typ)
		m.Code = append(m.Code, wasm.NewCode(nil, end.B))
	}
	e, err := l.Embed(m)
	if err != nil {
		t.Fatal(err)
	}
	for f := 1; f < len(paths); f++ {
		var a wasm.Asm
		e.HashCount(&a, uint32(f), 0, 1)
		a.Op(wasm.OpEnd)
		m.Code[f] = wasm.NewCode([]wasm.LocalDecl{{Count: 1, Type: wasm.ValI32}}, a.B)
		m.Exports = append(m.Exports, wasm.Export{Name: string(rune('a' + f)), Kind: wasm.KindFunc, Index: uint32(f)})
	}
	if err := e.Finish(m); err != nil {
		t.Fatal(err)
	}
	// A spy: CountHash1 counts its calls in an exported global, which
	// the inline probe makes only where the table's first slot for the
	// path does not hold it.
	calls := m.NumImportedGlobals + uint32(len(m.Globals))
	var zero, spy wasm.Asm
	zero.I64(0).Op(wasm.OpEnd)
	m.Globals = append(m.Globals, wasm.Global{GlobalType: wasm.GlobalType{Type: wasm.ValI64, Mutable: true}, Init: zero.B})
	m.Exports = append(m.Exports, wasm.Export{Name: "calls", Kind: wasm.KindGlobal, Index: calls})
	spy.Idx(wasm.OpGlobalGet, calls).I64(1).Op(wasm.OpI64Add).Idx(wasm.OpGlobalSet, calls)
	c := &m.Code[e.CountHash1-m.NumImportedFuncs]
	if err := c.Splice([]wasm.Edit{{Off: c.ExprOff, Ins: spy.B}}); err != nil {
		t.Fatal(err)
	}
	// zero adds 0 to path p of function 1, as the flush of a loop
	// counter that is 0 does: CountHash must not insert the path.
	var zeroAdd wasm.Asm
	zeroAdd.I32(1).Idx(wasm.OpLocalGet, 0).I64(0).Idx(wasm.OpCall, e.CountHash).Op(wasm.OpEnd)
	m.Exports = append(m.Exports, wasm.Export{Name: "zero", Kind: wasm.KindFunc, Index: m.NumFuncs()})
	m.Funcs = append(m.Funcs, typ)
	m.Code = append(m.Code, wasm.NewCode(nil, zeroAdd.B))
	ctx := context.Background()
	inst := instantiateEmbedded(t, ctx, m)
	want := Counts{}
	r := rand.New(rand.NewPCG(9, 10))
	for range 20000 {
		f := uint32(1 + r.IntN(len(paths)-1))
		// Few distinct paths at first, so that most probes hit the
		// first slot, then more and more.
		p := r.Uint64N(uint64(2 + len(want[1]) + len(want[2])))
		if r.IntN(4) == 0 {
			p = r.Uint64()
		}
		if r.IntN(8) == 0 {
			if _, err := inst.ExportedFunction("zero").Call(ctx, r.Uint64()); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := inst.ExportedFunction(string(rune('a'+f))).Call(ctx, p); err != nil {
			t.Fatal(err)
		}
		if want[f] == nil {
			want[f] = map[uint64]uint64{}
		}
		want[f][p]++
	}
	// Paths the table holds, counted again: most are in their first
	// slot (the table is at most half full), so most counts stay inline.
	var again [][2]uint64
	for f, ps := range want {
		for p := range ps {
			if len(again) < 200 {
				again = append(again, [2]uint64{uint64(f), p})
			}
		}
	}
	before := inst.ExportedGlobal("calls").Get()
	for range 10 {
		for _, fp := range again {
			if _, err := inst.ExportedFunction(string(rune('a'+fp[0]))).Call(ctx, fp[1]); err != nil {
				t.Fatal(err)
			}
			want[uint32(fp[0])][fp[1]]++
		}
	}
	if n := inst.ExportedGlobal("calls").Get() - before; n > uint64(len(again))*10/2 {
		t.Errorf("%d of %d counts of paths the table holds called CountHash1", n, len(again)*10)
	}
	// A count of 0 inserts nothing: the table holds the paths counted.
	base := uint32(inst.ExportedGlobal(BaseExport).Get())
	used, ok := inst.Memory().ReadUint32Le(base + l.HashOff + 4)
	if n := len(want[1]) + len(want[2]); !ok || int(used) != n {
		t.Errorf("hash table holds %d paths, want %d", used, n)
	}
	checkReadInstance(t, inst, want)
}

// checkReadInstance checks that ReadInstance reads from inst exactly the
// counts want.
func checkReadInstance(t *testing.T, inst api.Module, want Counts) {
	t.Helper()
	got, err := ReadInstance(map[string]api.Module{"": inst})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d functions' counts, want %d", len(got), len(want))
	}
	for f, ps := range want {
		if len(got[f]) != len(ps) {
			t.Fatalf("function %d: %d paths read, want %d: %v against %v", f, len(got[f]), len(ps), got[f], ps)
		}
		for p, n := range ps {
			if got[f][p] != n {
				t.Fatalf("function %d path %d: count %d, want %d", f, p, got[f][p], n)
			}
		}
	}
}

// instantiateEmbedded encodes m, to which Embed and the test added types,
// memory, globals, exports, functions and data, and instantiates it.
func instantiateEmbedded(t *testing.T, ctx context.Context, m *wasm.Module) api.Module {
	t.Helper()
	for _, id := range []byte{wasm.SecType, wasm.SecFunction, wasm.SecMemory, wasm.SecGlobal, wasm.SecExport, wasm.SecCode, wasm.SecData} {
		m.Touch(id)
	}
	mod, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return instantiate(t, ctx, mod)
}
