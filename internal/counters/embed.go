package counters

import (
	"fmt"
	"slices"

	"github.com/pathprof/pathprof/internal/memarea"
	"github.com/pathprof/pathprof/internal/wasm"
)

// Counters in the program's own memory.
//
// A call into the counter module, even one that never runs, makes wazero
// spill the caller's live values around it; an add to memory does not. So
// where it can, Embed puts the counter area into the program's own linear
// memory instead, above everything the program sees (package memarea says
// how). The counter area has the layout of the counter module's memory
// (counters.go), with every address in it relative to its start; its
// address is in a mutable global exported as BaseExport, and Read reads it
// from there after the run.

// BaseExport names the exported global that holds the counter area's
// address in the program's memory.
const BaseExport = "pathprof_counters"

// Embedding is what Embed adds to a module, for the instrumenter: the
// global holding the counter area's address and the function counting
// the paths of hashed functions, (f i32, p i64, n i64), which adds
// nothing for n = 0.
type Embedding struct {
	Base      uint32
	CountHash uint32
	// CountHash1 counts one path of a hashed function, (f i32, p i64):
	// CountHash with n = 1, which nearly every count is, in two bytes
	// less a call.
	CountHash1 uint32
	// CountDense adds one to the dense counter at its parameter's slot,
	// (slot i64), and AddN[k-1] adds its k i64 parameters to the
	// dense counters at the k slots from its first, (slot i32, n1 i64,
	// …, nk i64): calls a third of the inline code's bytes, for counts
	// and loop counters' flushes that run once per call or per loop.
	CountDense uint32
	AddN       [MaxAddLocals]uint32

	layout   *Layout
	area     *memarea.Area
	hashGrow uint32 // function: the hash table's growth
	grow     uint32 // function: the program's memory.grow
	types    [4]uint32
	addTypes [MaxAddLocals]uint32
	// Globals that keep the inline probe of HashCount short: the hash
	// table's capacity less one and its address in the area, which the
	// table's growth keeps equal to its header's, and hashK1, which
	// as a constant would take ten bytes.
	mask, table, k1 uint32
}

// CanEmbed says why the counters cannot live in m's memory, or "" when
// they can (memarea.CanEmbed).
func CanEmbed(m *wasm.Module) string { return memarea.CanEmbed(m) }

// Embed prepares m to hold the counter area of layout l in its memory: it
// adds the globals, the export, the types, the area's initial contents
// (data segments) and the pages it takes, and reserves the indices of the
// functions that Finish adds. In between, the caller instruments the
// bodies with inline counts (Embedding.Base) and calls of CountHash.
func (l *Layout) Embed(m *wasm.Module) (*Embedding, error) {
	e := &Embedding{layout: l}
	e.types = [4]uint32{
		m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI32, wasm.ValI64, wasm.ValI64}}),
		m.AddType(wasm.FuncType{}),
		m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI32, wasm.ValI64}}),
		m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI64}}),
	}
	params := []wasm.ValType{wasm.ValI32}
	for k := range e.addTypes {
		params = append(params, wasm.ValI64)
		e.addTypes[k] = m.AddType(wasm.FuncType{Params: slices.Clone(params)})
	}
	var err error
	if e.area, err = memarea.Embed(m, uint64(l.Size), BaseExport); err != nil {
		return nil, fmt.Errorf("counters cannot live in the program's memory: %w", err)
	}
	e.Base = e.area.Base
	start := e.area.Start
	m.Data = append(m.Data,
		wasm.Data{Offset: constI32(int32(start)), Init: l.header()},
		wasm.Data{Offset: constI32(int32(start + l.HashOff)), Init: l.hashHeader()})
	g := m.NumImportedGlobals + uint32(len(m.Globals))
	e.mask, e.table, e.k1 = g, g+1, g+2
	var mask, table, k1 wasm.Asm
	mask.I32(int32(l.HashSlots - 1)).Op(wasm.OpEnd)
	table.I32(int32(l.HashOff + 16)).Op(wasm.OpEnd)
	k1.I64(hashK1).Op(wasm.OpEnd)
	m.Globals = append(m.Globals,
		wasm.Global{GlobalType: wasm.GlobalType{Type: wasm.ValI32, Mutable: true}, Init: mask.B},
		wasm.Global{GlobalType: wasm.GlobalType{Type: wasm.ValI32, Mutable: true}, Init: table.B},
		wasm.Global{GlobalType: wasm.GlobalType{Type: wasm.ValI64}, Init: k1.B})
	m.Touch(wasm.SecGlobal)
	m.Touch(wasm.SecData)
	if m.HasDataCount {
		m.DataCount += 2
		m.Touch(wasm.SecDataCount)
	}
	n := m.NumFuncs()
	e.CountHash, e.hashGrow, e.grow, e.CountHash1, e.CountDense = n, n+1, n+2, n+3, n+4
	for k := range e.AddN {
		e.AddN[k] = n + 5 + uint32(k)
	}
	return e, nil
}

// Finish turns the program's memory.size and memory.grow into the size
// global and grow, and adds the functions. Call it after instrumenting
// every body, before adding functions of one's own.
func (e *Embedding) Finish(m *wasm.Module) error {
	if m.NumFuncs() != e.CountHash {
		return fmt.Errorf("counters: %d functions, Embed reserved %d on", m.NumFuncs(), e.CountHash)
	}
	if err := e.area.Rewrite(m, e.grow); err != nil {
		return err
	}
	l := e.layout
	b := func(a *wasm.Asm) { a.Idx(wasm.OpGlobalGet, e.Base) }
	count := countCode(uint32(len(l.Funcs)), l.HashOff, b, e.hashGrow)
	// CountHash1's n is a local where CountHash's is the third
	// parameter: the same index, set to 1 first.
	var one wasm.Asm
	one.I64(1).Idx(wasm.OpLocalSet, 2)
	// CountHash adds nothing for n = 0, so that a loop counter that is
	// 0 is flushed by a call all the same, without a test of its own.
	var nonZero wasm.Asm
	nonZero.Idx(wasm.OpLocalGet, 2).Op(wasm.OpI64Eqz).Block(wasm.OpIf).Op(wasm.OpReturn).Op(wasm.OpEnd)
	var dense wasm.Asm
	dense.Idx(wasm.OpLocalGet, 0)
	e.AddOne(&dense, 0, 1)
	m.Funcs = append(m.Funcs, e.types[0], e.types[1], e.area.GrowType, e.types[2], e.types[3])
	m.Code = append(m.Code,
		wasm.NewCode([]wasm.LocalDecl{{Count: countHashLocals, Type: wasm.ValI32}}, append(nonZero.B, count...)),
		wasm.NewCode([]wasm.LocalDecl{{Count: growLocals, Type: wasm.ValI32}}, growCode(l.HashOff, b, func(a *wasm.Asm, hdr uint32) {
			a.Idx(wasm.OpLocalGet, hdr).Mem(wasm.OpI32Load, 2, 0).I32(1).Op(wasm.OpI32Sub).Idx(wasm.OpGlobalSet, e.mask)
			a.Idx(wasm.OpLocalGet, hdr).Mem(wasm.OpI32Load, 2, 8).Idx(wasm.OpGlobalSet, e.table)
		})),
		wasm.NewCode(memarea.GrowLocals, e.area.GrowCode()),
		wasm.NewCode([]wasm.LocalDecl{{Count: 1, Type: wasm.ValI64}, {Count: countHashLocals, Type: wasm.ValI32}}, append(one.B, count...)),
		wasm.NewCode([]wasm.LocalDecl{{Count: 1, Type: wasm.ValI32}}, append(dense.B, byte(wasm.OpEnd))),
	)
	for k, t := range e.addTypes {
		// (slot, n1, …, nk): the lowest counter's address once, in
		// the local after the parameters, then each n at its offset.
		ls := make([]uint32, k+1)
		for j := range ls {
			ls[j] = uint32(j + 1)
		}
		var a wasm.Asm
		a.Idx(wasm.OpLocalGet, 0).I32(3).Op(wasm.OpI32Shl).Idx(wasm.OpGlobalGet, e.Base).Op(wasm.OpI32Add)
		e.addAt(&a, ls, uint32(k+2))
		a.Op(wasm.OpEnd)
		m.Funcs = append(m.Funcs, t)
		m.Code = append(m.Code, wasm.NewCode([]wasm.LocalDecl{{Count: 1, Type: wasm.ValI32}}, a.B))
	}
	m.Touch(wasm.SecFunction)
	m.Touch(wasm.SecCode)
	return nil
}

// Start is the lowest address the area ever has (Base only moves up, as
// the program's memory grows).
func (e *Embedding) Start() uint32 { return e.area.Start }

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

// MaxAddLocals is the most counters one call of CallAddValues adds.
const MaxAddLocals = 8

// AddValues appends code adding n i64 values, each pushed by push(j), to
// the dense counters at slots[j], given a scratch i32 local: the address
// of the lowest slot is computed once, so that each counter's offset is
// short, and a value that is 0 is added all the same, as a test would
// take more bytes than the add.
func (e *Embedding) AddValues(a *wasm.Asm, slots []int64, push func(j int), scratch uint32) {
	lo := slices.Min(slots)
	a.Idx(wasm.OpGlobalGet, e.Base)
	if lo != 0 {
		a.I32(int32(uint32(8 * lo))).Op(wasm.OpI32Add)
	}
	offs := make([]uint64, len(slots))
	for j := range slots {
		offs[j] = uint64(8 * (slots[j] - lo))
	}
	e.addAtOffsets(a, push, offs, scratch)
}

// CallAddValues appends a call adding n i64 values (at most
// MaxAddLocals), each pushed by push(j), to the dense counter at slot+j.
func (e *Embedding) CallAddValues(a *wasm.Asm, slot int64, n int, push func(j int)) {
	a.I32(int32(slot))
	for j := range n {
		push(j)
	}
	a.Idx(wasm.OpCall, e.AddN[n-1])
}

// addAt adds each i64 local ls[j] to the i64 at the address on the stack
// plus 8·j, given a scratch i32 local.
func (e *Embedding) addAt(a *wasm.Asm, ls []uint32, scratch uint32) {
	offs := make([]uint64, len(ls))
	for j := range ls {
		offs[j] = uint64(8 * j)
	}
	e.addAtOffsets(a, func(j int) { a.Idx(wasm.OpLocalGet, ls[j]) }, offs, scratch)
}

// addAtOffsets adds each i64 value push(j) pushes to the i64 at the
// address on the stack plus offs[j], given a scratch i32 local.
func (e *Embedding) addAtOffsets(a *wasm.Asm, push func(j int), offs []uint64, scratch uint32) {
	for j := range offs {
		op := wasm.OpLocalGet
		if j == 0 {
			op = wasm.OpLocalTee
		}
		a.Idx(op, scratch).Idx(wasm.OpLocalGet, scratch).Mem(wasm.OpI64Load, 3, offs[j])
		push(j)
		a.Op(wasm.OpI64Add).Mem(wasm.OpI64Store, 3, offs[j])
	}
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
	a.Block(wasm.OpBlock)
	hashOf(a,
		func() { a.Idx(wasm.OpLocalGet, p) },
		func() { a.Idx(wasm.OpGlobalGet, e.k1) },
		func() { a.I32(hashConst(f)) },
		func() { a.Idx(wasm.OpGlobalGet, e.mask) })
	a.I32(entrySize).Op(wasm.OpI32Mul)
	a.Idx(wasm.OpGlobalGet, e.table).Op(wasm.OpI32Add)
	a.Idx(wasm.OpGlobalGet, e.Base).Op(wasm.OpI32Add).Idx(wasm.OpLocalTee, addr)
	a.Mem(wasm.OpI32Load, 2, 0).I32(int32(f + 1)).Op(wasm.OpI32Eq).Block(wasm.OpIf)
	a.Idx(wasm.OpLocalGet, addr).Mem(wasm.OpI64Load, 3, 8).Idx(wasm.OpLocalGet, p).Op(wasm.OpI64Eq).Block(wasm.OpIf)
	a.Idx(wasm.OpLocalGet, addr).Idx(wasm.OpLocalGet, addr).Mem(wasm.OpI64Load, 3, 16).I64(1).Op(wasm.OpI64Add).Mem(wasm.OpI64Store, 3, 16)
	a.Idx(wasm.OpBr, 2)
	a.Op(wasm.OpEnd).Op(wasm.OpEnd)
	a.I32(int32(f)).Idx(wasm.OpLocalGet, p).Idx(wasm.OpCall, e.CountHash1)
	a.Op(wasm.OpEnd)
}
