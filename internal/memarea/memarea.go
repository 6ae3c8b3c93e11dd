// Package memarea hides an area of bytes in a module's own linear memory,
// above everything the program sees, for instrumentation that must write
// memory as cheaply as the program does (counters, sample records).
//
// A call into another module, even one that never runs, makes wazero
// spill the caller's live values around it; a store to the program's own
// memory does not. The area is invisible to the program: its memory.size
// answers what it would have answered without the area, and its
// memory.grow gives it zero pages below the area, moving the area up when
// they run out. Every byte the program can see, and every answer
// memory.size and memory.grow give it, are those of the original run, so
// its data and heap layout are untouched (wasi-libc's malloc and the Go
// runtime take all pages up to memory.size as heap, which is why the area
// must be invisible, not just reserved).
//
// The program's memory.size becomes global.get of a global holding its
// size, and memory.grow a call of a function of the module (grow):
//
//   - within the pages between the program's memory and the area (the
//     room, zero pages), it only moves the program's size up;
//   - otherwise it grows the real memory by what is missing or by the
//     program's size, whichever is more (so that the area moves a
//     logarithmic number of times), copies the area to the new top and
//     zeroes what it leaves;
//   - it fails (-1) where the original would: beyond the program's
//     declared maximum, or when the real memory cannot grow.
//
// What the program can observe differently is only an access beyond its
// memory's size, which traps in the original and, when it lands in the
// room or the area, not here. The area's address is in a mutable global,
// exported under a name the caller gives, so that it can be found after
// (or during) a run; since the area moves, whatever it holds must address
// its own bytes relative to its start.
package memarea

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pathprof/pathprof/internal/wasm"
)

// MaxPages is the most pages a real memory may have: wazero cannot
// address the last bytes of a 4 GiB memory, so it stays one page short.
const MaxPages = 1<<16 - 1

// Area is an area embedded in a module's memory.
type Area struct {
	// Base is the global holding the area's address; Start is its
	// address before the program grows its memory.
	Base  uint32
	Start uint32
	// GrowType is the type index of the grow function, (i32) -> i32.
	GrowType uint32

	pages   uint32 // global: the program's memory size, in pages
	progMax uint64 // the program's maximum memory size, in pages
}

// CanEmbed says why an area cannot live in m's memory, or "" when it
// can: m must define its one memory itself, with 32-bit addresses and not
// shared (a module without memory gets one).
func CanEmbed(m *wasm.Module) string {
	switch {
	case m.NumImportedMemories > 0:
		return "the module imports its memory"
	case len(m.Memories) > 1:
		return "the module has several memories"
	case len(m.Memories) == 1 && m.Memories[0].Flags&^1 != 0:
		return "the module's memory is shared or 64-bit"
	}
	return ""
}

// Embed adds to m an area of size bytes above its memory: the pages it
// takes, the globals, the export of Base under export and the grow
// function's type. The caller then writes its code, calls Rewrite, and
// appends GrowCode as the function whose index it gave Rewrite.
func Embed(m *wasm.Module, size uint64, export string) (*Area, error) {
	if why := CanEmbed(m); why != "" {
		return nil, fmt.Errorf("%s", why)
	}
	if len(m.Memories) == 0 {
		m.Memories = []wasm.Limits{{}}
		m.Touch(wasm.SecMemory)
		m.Exports = append(m.Exports, wasm.Export{Name: "memory", Kind: wasm.KindMemory})
	}
	mem := &m.Memories[0]
	areaPages := (size + 65535) >> 16
	if mem.Min+areaPages > MaxPages {
		return nil, fmt.Errorf("%d pages and %d of the area pass 4 GiB", mem.Min, areaPages)
	}
	a := &Area{progMax: 1 << 16, Start: uint32(mem.Min << 16)}
	if mem.HasMax() {
		a.progMax = mem.Max
	}
	origMin := mem.Min
	// The program's maximum is kept by grow; the real memory may grow
	// beyond it by the area.
	mem.Min += areaPages
	mem.Flags &^= 1
	mem.Max = 0
	m.Touch(wasm.SecMemory)

	g := m.NumImportedGlobals + uint32(len(m.Globals))
	a.pages, a.Base = g, g+1
	var p, b wasm.Asm
	p.I32(int32(origMin)).Op(wasm.OpEnd)
	b.I32(int32(a.Start)).Op(wasm.OpEnd)
	m.Globals = append(m.Globals,
		wasm.Global{GlobalType: wasm.GlobalType{Type: wasm.ValI32, Mutable: true}, Init: p.B},
		wasm.Global{GlobalType: wasm.GlobalType{Type: wasm.ValI32, Mutable: true}, Init: b.B})
	m.Touch(wasm.SecGlobal)
	m.Exports = append(m.Exports, wasm.Export{Name: export, Kind: wasm.KindGlobal, Index: a.Base})
	m.Touch(wasm.SecExport)
	a.GrowType = m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI32}, Results: []wasm.ValType{wasm.ValI32}})
	return a, nil
}

// Rewrite turns the program's memory.size and memory.grow, in every body
// m has, into the size global and calls of grow. Call it after
// instrumenting the bodies, before adding functions that use the real
// memory.
func (ar *Area) Rewrite(m *wasm.Module, grow uint32) error {
	// The bodies are rewritten on every core, each on its own; the error
	// reported is the first body's that has one.
	errs := make([]error, len(m.Code))
	var next atomic.Int64
	var wg sync.WaitGroup
	const chunk = 256
	for range min(runtime.GOMAXPROCS(0), (len(m.Code)+chunk-1)/chunk) {
		wg.Go(func() {
			r := wasm.NewReader(nil, 0, "code")
			for {
				lo := int(next.Add(chunk)) - chunk
				if lo >= len(m.Code) {
					return
				}
				for i := lo; i < min(lo+chunk, len(m.Code)); i++ {
					if errs[i] = ar.rewrite(r, &m.Code[i], grow); errs[i] != nil {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	m.Touch(wasm.SecCode)
	return nil
}

// rewrite is Rewrite of one body.
func (ar *Area) rewrite(r *wasm.Reader, c *wasm.Code, grow uint32) error {
	var in wasm.Instr
	r.Reset(c.Body, c.OrigOff)
	r.Seek(int(c.ExprOff))
	var edits []wasm.Edit
	for !r.Done() {
		if err := r.Next(&in); err != nil {
			return err
		}
		var a wasm.Asm
		switch in.Op {
		case wasm.OpMemSize:
			a.Idx(wasm.OpGlobalGet, ar.pages)
		case wasm.OpMemGrow:
			a.Idx(wasm.OpCall, grow)
		default:
			continue
		}
		edits = append(edits, wasm.Edit{Off: in.Off, Del: in.Len, Ins: a.B})
	}
	if len(edits) > 0 {
		return c.Splice(edits)
	}
	return nil
}

// GrowLocals are the locals GrowCode declares after its parameter.
var GrowLocals = []wasm.LocalDecl{{Count: 5, Type: wasm.ValI32}}

// GrowCode is the body (without locals) of the program's memory.grow(n
// i32) -> i32, with locals old, new, need, extra and the area's bytes.
func (ar *Area) GrowCode() []byte {
	const n, old, nw, need, extra, area = 0, 1, 2, 3, 4, 5
	var a wasm.Asm
	get := func(l uint32) *wasm.Asm { return a.Idx(wasm.OpLocalGet, l) }
	basePages := func() { a.Idx(wasm.OpGlobalGet, ar.Base).I32(16).Op(wasm.OpI32ShrU) }
	fail := func() { a.I32(-1).Op(wasm.OpReturn) }
	a.Idx(wasm.OpGlobalGet, ar.pages).Idx(wasm.OpLocalSet, old)
	// Beyond the program's maximum: fail as the original would.
	get(old).Op(wasm.OpI64ExtU)
	get(n).Op(wasm.OpI64ExtU).Op(wasm.OpI64Add).I64(int64(ar.progMax)).Op(wasm.OpI64GtU).Block(wasm.OpIf)
	fail()
	a.Op(wasm.OpEnd)
	get(old).Idx(wasm.OpLocalGet, n).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, nw)
	// Room enough below the area: its pages are zero.
	get(nw)
	basePages()
	a.Op(wasm.OpI32LeU).Block(wasm.OpIf)
	get(nw).Idx(wasm.OpGlobalSet, ar.pages)
	get(old).Op(wasm.OpReturn)
	a.Op(wasm.OpEnd)
	get(nw)
	basePages()
	a.Op(wasm.OpI32Sub).Idx(wasm.OpLocalSet, need)
	// Grow by the program's size, or by what is missing if more (or if
	// the program's size cannot be had).
	get(need).Idx(wasm.OpLocalGet, old).Idx(wasm.OpLocalGet, need).Idx(wasm.OpLocalGet, old).Op(wasm.OpI32GtU).Op(wasm.OpSelect).Idx(wasm.OpLocalSet, extra)
	// The real memory stays below MaxPages: less room, or failure.
	tooBig := func(l uint32) {
		a.Idx(wasm.OpMemSize, 0).Op(wasm.OpI64ExtU)
		get(l).Op(wasm.OpI64ExtU).Op(wasm.OpI64Add).I64(MaxPages).Op(wasm.OpI64GtU)
	}
	tooBig(extra)
	a.Block(wasm.OpIf)
	get(need).Idx(wasm.OpLocalSet, extra)
	a.Op(wasm.OpEnd)
	tooBig(extra)
	a.Block(wasm.OpIf)
	fail()
	a.Op(wasm.OpEnd)
	a.Idx(wasm.OpMemSize, 0).I32(16).Op(wasm.OpI32Shl).Idx(wasm.OpGlobalGet, ar.Base).Op(wasm.OpI32Sub).Idx(wasm.OpLocalSet, area)
	get(extra).Idx(wasm.OpMemGrow, 0).I32(-1).Op(wasm.OpI32Eq).Block(wasm.OpIf)
	get(need).Idx(wasm.OpLocalSet, extra)
	get(extra).Idx(wasm.OpMemGrow, 0).I32(-1).Op(wasm.OpI32Eq).Block(wasm.OpIf)
	fail()
	a.Op(wasm.OpEnd)
	a.Op(wasm.OpEnd)
	// Move the area up by extra pages and zero what it leaves.
	a.Idx(wasm.OpGlobalGet, ar.Base)
	get(extra).I32(16).Op(wasm.OpI32Shl).Op(wasm.OpI32Add)
	a.Idx(wasm.OpGlobalGet, ar.Base)
	get(area)
	a.Op(wasm.OpMemCopy)
	a.Idx(wasm.OpGlobalGet, ar.Base).I32(0)
	get(extra).I32(16).Op(wasm.OpI32Shl)
	get(area)
	get(extra).I32(16).Op(wasm.OpI32Shl)
	get(area)
	a.Op(wasm.OpI32LtU).Op(wasm.OpSelect)
	a.Op(wasm.OpMemFill)
	a.Idx(wasm.OpGlobalGet, ar.Base)
	get(extra).I32(16).Op(wasm.OpI32Shl).Op(wasm.OpI32Add).Idx(wasm.OpGlobalSet, ar.Base)
	get(nw).Idx(wasm.OpGlobalSet, ar.pages)
	get(old)
	a.Op(wasm.OpEnd)
	return a.B
}
