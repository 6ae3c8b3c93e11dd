package counters

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pathprof/pathprof/internal/wasm"
)

// TestEmbedDenseCount drives every way a copy adds to the dense counters
// in its own memory, inline and by call: one by a path id (AddOne,
// CountDense) or a constant slot (AddConst), and loop counters flushed at
// once (AddValues, CallAddValues, one to MaxAddLocals of them), while the
// program's memory grows and moves the area up. What Read gets back must
// be the counts kept in Go: a call that added at another slot, or at the
// area's old address, would show.
func TestEmbedDenseCount(t *testing.T) {
	paths := []uint64{0, 3, 12, 1, 40}
	l, err := NewLayout(paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := &wasm.Module{Version: 1, Memories: []wasm.Limits{{Min: 1}}}
	var end wasm.Asm
	end.Op(wasm.OpEnd)
	noop := m.AddType(wasm.FuncType{})
	for range paths {
		m.Funcs = append(m.Funcs, noop)
		m.Code = append(m.Code, wasm.NewCode(nil, end.B))
	}
	// Function 0, which has no counters, grows the program's memory by a
	// page: Finish turns its memory.grow into the call that moves the
	// area up once the room below it is used.
	var grow wasm.Asm
	grow.I32(1).Idx(wasm.OpMemGrow, 0).Op(wasm.OpDrop).Op(wasm.OpEnd)
	m.Code[0] = wasm.NewCode(nil, grow.B)
	m.Exports = append(m.Exports, wasm.Export{Name: "grow", Kind: wasm.KindFunc, Index: 0})
	e, err := l.Embed(m)
	if err != nil {
		t.Fatal(err)
	}
	// The test's functions come after the counters' (Finish numbers
	// those), so they are written once Finish has run.
	type form struct {
		name string
		f    uint32
		// k is how many values the function takes: a path id (id
		// set), or loop counters.
		k    int
		id   bool
		code func(a *wasm.Asm)
	}
	var forms []form
	for f := uint32(1); f < uint32(len(paths)); f++ {
		slot := l.Slot(f)
		forms = append(forms,
			form{fmt.Sprintf("one%d", f), f, 1, true, func(a *wasm.Asm) {
				a.Idx(wasm.OpLocalGet, 0)
				e.AddOne(a, slot, 1)
			}},
			form{fmt.Sprintf("call%d", f), f, 1, true, func(a *wasm.Asm) {
				a.Idx(wasm.OpLocalGet, 0).I64(slot).Op(wasm.OpI64Add).Idx(wasm.OpCall, e.CountDense)
			}})
		for k := 1; k <= min(int(paths[f]), MaxAddLocals); k++ {
			ls := make([]uint32, k)
			slots := make([]int64, k)
			for j := range ls {
				ls[j] = uint32(j)
				slots[j] = slot + int64(j)
			}
			forms = append(forms,
				form{fmt.Sprintf("flush%d_%d", f, k), f, k, false, func(a *wasm.Asm) {
					e.AddValues(a, slots, func(j int) { a.Idx(wasm.OpLocalGet, ls[j]) }, uint32(k))
				}},
				form{fmt.Sprintf("callflush%d_%d", f, k), f, k, false, func(a *wasm.Asm) {
					e.CallAddValues(a, slot, k, func(j int) { a.Idx(wasm.OpLocalGet, ls[j]) })
				}})
		}
		last := int64(paths[f]) - 1
		forms = append(forms, form{fmt.Sprintf("const%d", f), f, 0, false, func(a *wasm.Asm) { e.AddConst(a, slot+last, 0, func() { a.I64(1) }) }})
	}
	if err := e.Finish(m); err != nil {
		t.Fatal(err)
	}
	for _, fm := range forms {
		params := make([]wasm.ValType, fm.k)
		for j := range params {
			params[j] = wasm.ValI64
		}
		var a wasm.Asm
		fm.code(&a)
		a.Op(wasm.OpEnd)
		m.Exports = append(m.Exports, wasm.Export{Name: fm.name, Kind: wasm.KindFunc, Index: m.NumFuncs()})
		m.Funcs = append(m.Funcs, m.AddType(wasm.FuncType{Params: params}))
		m.Code = append(m.Code, wasm.NewCode([]wasm.LocalDecl{{Count: 1, Type: wasm.ValI32}}, a.B))
	}
	ctx := context.Background()
	inst := instantiateEmbedded(t, ctx, m)
	want := Counts{}
	add := func(f uint32, p, n uint64) {
		if want[f] == nil {
			want[f] = map[uint64]uint64{}
		}
		want[f][p] += n
	}
	base := inst.ExportedGlobal(BaseExport)
	start, moved := base.Get(), 0
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 5000 {
		if i%500 == 499 {
			was := base.Get()
			if _, err := inst.ExportedFunction("grow").Call(ctx); err != nil {
				t.Fatal(err)
			}
			if base.Get() != was {
				moved++
			}
		}
		fm := forms[r.IntN(len(forms))]
		var args []uint64
		switch {
		case fm.k == 0:
			add(fm.f, paths[fm.f]-1, 1)
		case fm.id:
			p := r.Uint64N(paths[fm.f])
			args = []uint64{p}
			add(fm.f, p, 1)
		default:
			for j := range fm.k {
				n := r.Uint64N(3)
				args = append(args, n)
				add(fm.f, uint64(j), n)
			}
		}
		if _, err := inst.ExportedFunction(fm.name).Call(ctx, args...); err != nil {
			t.Fatalf("%s%v: %v", fm.name, args, err)
		}
	}
	if moved == 0 {
		t.Fatalf("the area never moved from %#x", start)
	}
	for f, ps := range want {
		for p, n := range ps {
			if n == 0 {
				delete(ps, p)
			}
		}
		if len(ps) == 0 {
			delete(want, f)
		}
	}
	checkReadInstance(t, inst, want)
}
