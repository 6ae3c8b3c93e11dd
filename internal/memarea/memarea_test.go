package memarea_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/memarea"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
)

// TestAreaInvisibleAndMoved checks, on a program that grows its memory 60
// times (beyond its declared maximum, when it has one), that the program
// sees its memory as in the original run, and that the area's bytes move
// along when the program's growth pushes it up.
func TestAreaInvisibleAndMoved(t *testing.T) {
	ctx := context.Background()
	for _, max := range []uint64{0, 12} {
		orig := wasmtest.GrowModule(3000, max)
		m, err := wasm.Decode(orig)
		if err != nil {
			t.Fatal(err)
		}
		const size = 3*65536 + 100
		area, err := memarea.Embed(m, size, "area")
		if err != nil {
			t.Fatal(err)
		}
		pattern := make([]byte, size)
		for i := range pattern {
			pattern[i] = byte(i*7 + i>>8)
		}
		var off wasm.Asm
		off.I32(int32(area.Start)).Op(wasm.OpEnd)
		m.Data = append(m.Data, wasm.Data{Offset: off.B, Init: pattern})
		m.Touch(wasm.SecData)
		grow := m.NumFuncs()
		if err := area.Rewrite(m, grow); err != nil {
			t.Fatal(err)
		}
		m.Funcs = append(m.Funcs, area.GrowType)
		m.Code = append(m.Code, wasm.NewCode(memarea.GrowLocals, area.GrowCode()))
		mod := wasmtest.Encode(t, m, wasm.SecFunction, wasm.SecCode)

		var want, got, inArea []byte
		var base uint32
		if _, err := runner.Run(ctx, orig, runner.Config{AfterRun: func(_ context.Context, mods map[string]api.Module) error {
			mem := mods[runner.ProgramKey].Memory()
			b, _ := mem.Read(0, mem.Size())
			want = bytes.Clone(b)
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
		if _, err := runner.Run(ctx, mod, runner.Config{AfterRun: func(_ context.Context, mods map[string]api.Module) error {
			p := mods[runner.ProgramKey]
			mem := p.Memory()
			b, _ := mem.Read(0, mem.Size())
			got = bytes.Clone(b)
			base = uint32(p.ExportedGlobal("area").Get())
			inArea = bytes.Clone(got[base:])
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
		if len(got) <= len(want) || !bytes.Equal(got[:len(want)], want) {
			t.Fatalf("max %d: the program's memory differs (%d bytes, want %d)", max, len(got), len(want))
		}
		if base == area.Start || len(inArea) < size || !bytes.Equal(inArea[:size], pattern) {
			t.Errorf("max %d: the area, at %d (first at %d), does not hold its bytes", max, base, area.Start)
		}
		t.Logf("max %d: program memory %d pages, with the area %d; the area moved from %#x to %#x", max, len(want)>>16, len(got)>>16, area.Start, base)
	}
}

// TestEmbedRefuses checks the modules an area cannot live in.
func TestEmbedRefuses(t *testing.T) {
	m, err := wasm.Decode(wasmtest.GrowModule(10, 0))
	if err != nil {
		t.Fatal(err)
	}
	m.Memories[0].Min = memarea.MaxPages
	if _, err := memarea.Embed(m, 1, "area"); err == nil {
		t.Error("an area above 65,535 pages was embedded")
	}
	m.Memories[0].Flags |= 2 // shared
	if why := memarea.CanEmbed(m); why == "" {
		t.Error("an area was allowed in a shared memory")
	}
}

// TestRewriteInParallel checks that Rewrite, which rewrites the bodies on
// every core, makes the module it makes on one, on many functions.
func TestRewriteInParallel(t *testing.T) {
	build := func() (*wasm.Module, *memarea.Area) {
		m, err := wasm.Decode(wasmtest.GrowModule(3, 0))
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		typ := m.AddType(wasm.FuncType{})
		for range 3000 {
			var body []byte
			for range r.IntN(6) {
				switch r.IntN(3) {
				case 0:
					body = append(body, 0x3F, 0, 0x1A) // memory.size; drop
				case 1:
					body = append(body, 0x41, 1, 0x40, 0, 0x1A) // i32.const 1; memory.grow; drop
				default:
					body = append(body, 0x01) // nop
				}
			}
			m.Funcs = append(m.Funcs, typ)
			m.Code = append(m.Code, wasm.NewCode(nil, append(body, 0x0B)))
		}
		area, err := memarea.Embed(m, 100, "area")
		if err != nil {
			t.Fatal(err)
		}
		return m, area
	}
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	var mods [][]byte
	for _, p := range []int{1, 4} {
		runtime.GOMAXPROCS(p)
		m, area := build()
		grow := m.NumFuncs()
		if err := area.Rewrite(m, grow); err != nil {
			t.Fatal(err)
		}
		m.Funcs = append(m.Funcs, area.GrowType)
		m.Code = append(m.Code, wasm.NewCode(memarea.GrowLocals, area.GrowCode()))
		mods = append(mods, wasmtest.Encode(t, m, wasm.SecFunction, wasm.SecCode))
	}
	if !bytes.Equal(mods[0], mods[1]) {
		t.Fatal("rewritten on several cores, the module differs")
	}
	m, err := wasm.Decode(mods[0])
	if err != nil {
		t.Fatal(err)
	}
	var in wasm.Instr
	for _, c := range m.Code[:len(m.Code)-1] {
		r := wasm.NewReader(c.Body, c.OrigOff, "code")
		r.Seek(int(c.ExprOff))
		for !r.Done() {
			if err := r.Next(&in); err != nil {
				t.Fatal(err)
			}
			if in.Op == wasm.OpMemSize || in.Op == wasm.OpMemGrow {
				t.Fatalf("%v left at %d", in.Op, in.Off)
			}
		}
	}
}
