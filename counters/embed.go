package counters

import (
	"fmt"

	"pathprof/wasm"
)

// Counters in the program's own memory.
//
// A call into the counter module, even one that never runs, makes wazero
// spill the caller's live values around it; an add to memory does not. So
// where it can, Embed puts the counter area into the program's own linear
// memory instead, above everything the program sees: the program's
// memory.size answers what it would have answered without the counters,
// and its memory.grow gives it zero pages below the area, moving the area
// up when they run out. Every byte the program can see, and every answer
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
// room or the area, not here. The counter area has the layout of the
// counter module's memory (counters.go), with every address in it
// relative to its start; its address is in a mutable global exported as
// BaseExport, and Read reads it from there after the run.

// BaseExport names the exported global that holds the counter area's
// address in the program's memory.
const BaseExport = "pathprof_counters"

// Embedding is what Embed adds to a module, for the instrumenter: the
// global holding the counter area's address and the function counting
// the paths of hashed functions, (f i32, p i64).
type Embedding struct {
	Base      uint32
	CountHash uint32

	layout   *Layout
	pages    uint32 // global: the program's memory size, in pages
	grow     uint32 // function: the program's memory.grow
	hashGrow uint32 // function: the hash table's growth
	progMax  uint64 // the program's maximum memory size, in pages
	types    [3]uint32
}

// CanEmbed says why the counters cannot live in m's memory, or "" when
// they can: m must define its one memory itself, with 32-bit addresses
// and not shared (a module without memory gets one).
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

// Embed prepares m to hold the counter area of layout l in its memory: it
// adds the globals, the export, the types, the area's initial contents
// (data segments) and the pages it takes, and reserves the indices of the
// functions that Finish adds. In between, the caller instruments the
// bodies with inline counts (Embedding.Base) and calls of CountHash.
func (l *Layout) Embed(m *wasm.Module) (*Embedding, error) {
	if why := CanEmbed(m); why != "" {
		return nil, fmt.Errorf("counters cannot live in the program's memory: %s", why)
	}
	if len(m.Memories) == 0 {
		m.Memories = []wasm.Limits{{}}
		m.Touch(wasm.SecMemory)
		m.Exports = append(m.Exports, wasm.Export{Name: "memory", Kind: wasm.KindMemory})
	}
	mem := &m.Memories[0]
	areaPages := (uint64(l.Size) + 65535) >> 16
	// wazero cannot address the last bytes of a 4 GiB memory: the real
	// memory stays below 65,536 pages.
	if mem.Min+areaPages > maxPages {
		return nil, fmt.Errorf("counters cannot live in the program's memory: %d pages and %d of counters pass 4 GiB", mem.Min, areaPages)
	}
	e := &Embedding{layout: l, progMax: 1 << 16}
	if mem.HasMax() {
		e.progMax = mem.Max
	}
	origMin := mem.Min
	start := mem.Min << 16
	// The program's maximum is kept by grow; the real memory may grow
	// beyond it by the area.
	mem.Min += areaPages
	mem.Flags &^= 1
	mem.Max = 0
	m.Touch(wasm.SecMemory)

	g := m.NumImportedGlobals + uint32(len(m.Globals))
	e.pages, e.Base = g, g+1
	var a, b wasm.Asm
	a.I32(int32(origMin)).Op(wasm.OpEnd)
	b.I32(int32(uint32(start))).Op(wasm.OpEnd)
	m.Globals = append(m.Globals,
		wasm.Global{GlobalType: wasm.GlobalType{Type: wasm.ValI32, Mutable: true}, Init: a.B},
		wasm.Global{GlobalType: wasm.GlobalType{Type: wasm.ValI32, Mutable: true}, Init: b.B})
	m.Touch(wasm.SecGlobal)
	m.Exports = append(m.Exports, wasm.Export{Name: BaseExport, Kind: wasm.KindGlobal, Index: e.Base})
	m.Touch(wasm.SecExport)

	hdr, hash := l.header(), l.hashHeader()
	m.Data = append(m.Data,
		wasm.Data{Offset: constI32(int32(uint32(start))), Init: hdr},
		wasm.Data{Offset: constI32(int32(uint32(start) + l.HashOff)), Init: hash})
	m.Touch(wasm.SecData)
	if m.HasDataCount {
		m.DataCount += 2
		m.Touch(wasm.SecDataCount)
	}

	e.types = [3]uint32{
		m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI32, wasm.ValI64}}),
		m.AddType(wasm.FuncType{}),
		m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI32}, Results: []wasm.ValType{wasm.ValI32}}),
	}
	n := m.NumFuncs()
	e.CountHash, e.hashGrow, e.grow = n, n+1, n+2
	return e, nil
}

// Finish turns the program's memory.size and memory.grow into the size
// global and grow, and adds the functions. Call it after instrumenting
// every body, before adding functions of one's own.
func (e *Embedding) Finish(m *wasm.Module) error {
	if m.NumFuncs() != e.CountHash {
		return fmt.Errorf("counters: %d functions, Embed reserved %d on", m.NumFuncs(), e.CountHash)
	}
	r := wasm.NewReader(nil, 0, "code")
	var in wasm.Instr
	for i := range m.Code {
		c := &m.Code[i]
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
				a.Idx(wasm.OpGlobalGet, e.pages)
			case wasm.OpMemGrow:
				a.Idx(wasm.OpCall, e.grow)
			default:
				continue
			}
			edits = append(edits, wasm.Edit{Off: in.Off, Del: in.Len, Ins: a.B})
		}
		if len(edits) > 0 {
			if err := c.Splice(edits); err != nil {
				return err
			}
		}
	}
	l := e.layout
	b := func(a *wasm.Asm) { a.Idx(wasm.OpGlobalGet, e.Base) }
	m.Funcs = append(m.Funcs, e.types[0], e.types[1], e.types[2])
	m.Code = append(m.Code,
		body([]wasm.LocalDecl{{Count: countHashLocals, Type: wasm.ValI32}}, countCode(uint32(len(l.Funcs)), l.HashOff, b, e.hashGrow)),
		body([]wasm.LocalDecl{{Count: growLocals, Type: wasm.ValI32}}, growCode(l.HashOff, b)),
		body([]wasm.LocalDecl{{Count: 5, Type: wasm.ValI32}}, e.growCode()),
	)
	m.Touch(wasm.SecFunction)
	m.Touch(wasm.SecCode)
	return nil
}

// AddOne appends code adding one to the dense counter at slot plus the
// i64 on the stack (a path id, as count gets it), given a scratch i32
// local.
func (e *Embedding) AddOne(a *wasm.Asm, slot int64, scratch uint32) {
	a.Op(wasm.OpI32Wrap).I32(3).Op(wasm.OpI32Shl).Idx(wasm.OpGlobalGet, e.Base).Op(wasm.OpI32Add)
	e.add(a, slot, scratch, func() { a.I64(1) })
}

// AddConst appends code adding the i64 that push pushes to the dense
// counter at slot, given a scratch i32 local.
func (e *Embedding) AddConst(a *wasm.Asm, slot int64, scratch uint32, push func()) {
	a.Idx(wasm.OpGlobalGet, e.Base)
	e.add(a, slot, scratch, push)
}

// add adds push's value to the i64 at the address on the stack plus
// 8·slot.
func (e *Embedding) add(a *wasm.Asm, slot int64, scratch uint32, push func()) {
	off := uint64(8 * slot)
	a.Idx(wasm.OpLocalTee, scratch).Idx(wasm.OpLocalGet, scratch).Mem(wasm.OpI64Load, 3, off)
	push()
	a.Op(wasm.OpI64Add).Mem(wasm.OpI64Store, 3, off)
}

// HashCount appends the count of path p (an i64 local) of hashed
// function f: the table's first probe inline, and the call of CountHash
// when the path is not in that slot, which probes on, inserts and grows
// the table. A call makes wazero spill the caller's live values, and the
// functions with the most paths, which are hashed, are often the hottest
// (bzip2's decoder is one state machine of 5×10^17 paths). addr is a
// scratch i32 local.
func (e *Embedding) HashCount(a *wasm.Asm, f, p, addr uint32) {
	h := uint64(e.layout.HashOff)
	a.Block(wasm.OpBlock)
	hashOf(a,
		func() { a.Idx(wasm.OpLocalGet, p) },
		func() { a.I64(hashConst(f)) },
		func() { a.Idx(wasm.OpGlobalGet, e.Base).Mem(wasm.OpI32Load, 2, h) })
	a.I32(entrySize).Op(wasm.OpI32Mul)
	a.Idx(wasm.OpGlobalGet, e.Base).Mem(wasm.OpI32Load, 2, h+8).Op(wasm.OpI32Add)
	a.Idx(wasm.OpGlobalGet, e.Base).Op(wasm.OpI32Add).Idx(wasm.OpLocalTee, addr)
	a.Mem(wasm.OpI32Load, 2, 0).I32(int32(f + 1)).Op(wasm.OpI32Eq).Block(wasm.OpIf)
	a.Idx(wasm.OpLocalGet, addr).Mem(wasm.OpI64Load, 3, 8).Idx(wasm.OpLocalGet, p).Op(wasm.OpI64Eq).Block(wasm.OpIf)
	a.Idx(wasm.OpLocalGet, addr).Idx(wasm.OpLocalGet, addr).Mem(wasm.OpI64Load, 3, 16).I64(1).Op(wasm.OpI64Add).Mem(wasm.OpI64Store, 3, 16)
	a.Idx(wasm.OpBr, 2)
	a.Op(wasm.OpEnd).Op(wasm.OpEnd)
	a.I32(int32(f)).Idx(wasm.OpLocalGet, p).Idx(wasm.OpCall, e.CountHash)
	a.Op(wasm.OpEnd)
}

// maxPages is the most pages the real memory may have: one short of 4 GiB.
const maxPages = 1<<16 - 1

// growCode: the program's memory.grow(n i32) -> i32, with locals old,
// new, need, extra and the area's bytes.
func (e *Embedding) growCode() []byte {
	const n, old, nw, need, extra, area = 0, 1, 2, 3, 4, 5
	var a wasm.Asm
	get := func(l uint32) *wasm.Asm { return a.Idx(wasm.OpLocalGet, l) }
	basePages := func() { a.Idx(wasm.OpGlobalGet, e.Base).I32(16).Op(wasm.OpI32ShrU) }
	fail := func() { a.I32(-1).Op(wasm.OpReturn) }
	a.Idx(wasm.OpGlobalGet, e.pages).Idx(wasm.OpLocalSet, old)
	// Beyond the program's maximum: fail as the original would.
	get(old).Op(wasm.OpI64ExtU)
	get(n).Op(wasm.OpI64ExtU).Op(wasm.OpI64Add).I64(int64(e.progMax)).Op(wasm.OpI64GtU).Block(wasm.OpIf)
	fail()
	a.Op(wasm.OpEnd)
	get(old).Idx(wasm.OpLocalGet, n).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, nw)
	// Room enough below the area: its pages are zero.
	get(nw)
	basePages()
	a.Op(wasm.OpI32LeU).Block(wasm.OpIf)
	get(nw).Idx(wasm.OpGlobalSet, e.pages)
	get(old).Op(wasm.OpReturn)
	a.Op(wasm.OpEnd)
	get(nw)
	basePages()
	a.Op(wasm.OpI32Sub).Idx(wasm.OpLocalSet, need)
	// Grow by the program's size, or by what is missing if more (or if
	// the program's size cannot be had).
	get(need).Idx(wasm.OpLocalGet, old).Idx(wasm.OpLocalGet, need).Idx(wasm.OpLocalGet, old).Op(wasm.OpI32GtU).Op(wasm.OpSelect).Idx(wasm.OpLocalSet, extra)
	// The real memory stays below 65,536 pages (wazero cannot address
	// the last bytes of a 4 GiB memory): less room, or failure.
	tooBig := func(l uint32) {
		a.Idx(wasm.OpMemSize, 0).Op(wasm.OpI64ExtU)
		get(l).Op(wasm.OpI64ExtU).Op(wasm.OpI64Add).I64(maxPages).Op(wasm.OpI64GtU)
	}
	tooBig(extra)
	a.Block(wasm.OpIf)
	get(need).Idx(wasm.OpLocalSet, extra)
	a.Op(wasm.OpEnd)
	tooBig(extra)
	a.Block(wasm.OpIf)
	fail()
	a.Op(wasm.OpEnd)
	a.Idx(wasm.OpMemSize, 0).I32(16).Op(wasm.OpI32Shl).Idx(wasm.OpGlobalGet, e.Base).Op(wasm.OpI32Sub).Idx(wasm.OpLocalSet, area)
	get(extra).Idx(wasm.OpMemGrow, 0).I32(-1).Op(wasm.OpI32Eq).Block(wasm.OpIf)
	get(need).Idx(wasm.OpLocalSet, extra)
	get(extra).Idx(wasm.OpMemGrow, 0).I32(-1).Op(wasm.OpI32Eq).Block(wasm.OpIf)
	fail()
	a.Op(wasm.OpEnd)
	a.Op(wasm.OpEnd)
	// Move the area up by extra pages and zero what it leaves.
	a.Idx(wasm.OpGlobalGet, e.Base)
	get(extra).I32(16).Op(wasm.OpI32Shl).Op(wasm.OpI32Add)
	a.Idx(wasm.OpGlobalGet, e.Base)
	get(area)
	a.Op(wasm.OpMemCopy)
	a.Idx(wasm.OpGlobalGet, e.Base).I32(0)
	get(extra).I32(16).Op(wasm.OpI32Shl)
	get(area)
	get(extra).I32(16).Op(wasm.OpI32Shl)
	get(area)
	a.Op(wasm.OpI32LtU).Op(wasm.OpSelect)
	a.Op(wasm.OpMemFill)
	a.Idx(wasm.OpGlobalGet, e.Base)
	get(extra).I32(16).Op(wasm.OpI32Shl).Op(wasm.OpI32Add).Idx(wasm.OpGlobalSet, e.Base)
	get(nw).Idx(wasm.OpGlobalSet, e.pages)
	get(old)
	a.Op(wasm.OpEnd)
	return a.B
}
