package memarea_test

import (
	"bytes"
	"context"
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
