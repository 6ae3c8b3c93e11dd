package osp

import (
	"pathprof/wasm"
)

// A call from wasm into a Go host function costs about as much as a
// hundred block entries, so $tick is not Go: it is a few instructions of
// a small wasm module, the recorder, which a call from the program reaches
// in a few nanoseconds. The recorder writes the paths of each sample into
// its memory and reads the sample lengths and skips from a table that Go
// fills; it calls Go (flushModule.flush) only when its records area is
// full or its table runs out.
//
// Memory layout (memPages pages): a ring of records areas, which the
// recorder fills one after the other while Go's sampling worker reads the
// ones it has filled, and two table areas, the one the recorder reads and
// the one Go fills next:
//
//	[0, tableStart)                    recordAreas records areas of areaBytes, 16 bytes a record:
//	                                   function u32, start u32, packed path value u64
//	[tableStart, tableStart+2·tableBytes) tables: per sample (skip before it u32, length u32)
//
// A record's start is the index, in its path, of the block where a sample
// starts, or noStart for a path that continues the current sample. Go
// replays nothing: it takes the table's entries in order, one per record
// with a start, so it knows each sample's length and skip.
//
// Globals (all exported, all i32):
//
//	left    blocks still to record in the current sample; 0 when skipping
//	pos     byte offset of the next record
//	plimit  the end of the current records area (trace mode: of all of them)
//	next    byte offset of the table entry of the current or next sample
//	tlimit  the end of the current table area
//
// The module starts with a table of one entry, a sample of one block with
// a skip of 1 (the program's countdown starts at 1), followed by an empty
// entry: the program's first path takes that sample and the recorder then
// calls Go, which gives it a full table. (Go cannot fill it from a start
// function: wazero shows a module's exports only once it is instantiated.)
const (
	flushModule = "pathprof_osp_flush"
	pageSize    = 65536
	areaBytes   = 8192 // one records area: 512 records
	recordAreas = 16
	recordBytes = recordAreas * areaBytes
	recordSize  = 16
	tableStart  = recordBytes
	tableBytes  = 32768 // one table area: 4096 samples
	entryBytes  = 8
	memPages    = (tableStart + 2*tableBytes + pageSize - 1) / pageSize
	memBytes    = memPages * pageSize
	noStart     = 0xFFFFFFFF
	// MaxLength is the longest sample the recorder takes.
	MaxLength = 4096
	// BufferBytes is the recorder's memory: the part of the profiler's
	// memory that does not depend on the bound.
	BufferBytes = memBytes
)

// Global indices of the recorder.
const (
	gLeft = iota
	gPos
	gNext
	gPLimit
	gTLimit
)

// recorderModule returns the recorder: in sampling mode it records the
// paths of the samples the table asks for; in exact mode (trace) every
// path, and it never lets the countdown rise above 0.
//
//	(import "pathprof_osp_flush" "flush" (func $flush))
//	(func $tick (export "tick") (param $fn i32) (param $p i64) (param $c i32) (result i32) ...)
//
// $c is the program's countdown after the path's blocks were counted
// down: at most 0. The path makes n = $p >> 40 block entries, so the
// countdown reached 0 at its block n + $c - 1.
func recorderModule(trace bool) ([]byte, error) {
	const (
		lFn, lP, lC = 0, 1, 2
	)
	var a wasm.Asm
	// record appends the record (fn, the start that start pushes, p).
	record := func(start func()) {
		a.Idx(wasm.OpGlobalGet, gPos).Idx(wasm.OpLocalGet, lFn).Mem(wasm.OpI32Store, 2, 0)
		a.Idx(wasm.OpGlobalGet, gPos)
		start()
		a.Mem(wasm.OpI32Store, 2, 4)
		a.Idx(wasm.OpGlobalGet, gPos).Idx(wasm.OpLocalGet, lP).Mem(wasm.OpI64Store, 3, 8)
		a.Idx(wasm.OpGlobalGet, gPos).I32(recordSize).Op(wasm.OpI32Add).Idx(wasm.OpGlobalSet, gPos)
		// if pos == plimit: flush
		a.Idx(wasm.OpGlobalGet, gPos).Idx(wasm.OpGlobalGet, gPLimit).Op(wasm.OpI32Eq)
		a.Block(wasm.OpIf).Idx(wasm.OpCall, 0).Op(wasm.OpEnd)
	}
	// n pushes the path's block entries.
	n := func() {
		a.Idx(wasm.OpLocalGet, lP).I64(40).Op(wasm.OpI64ShrU).Op(wasm.OpI32Wrap)
	}
	// startAt pushes n + c - 1, the block where the sample starts.
	startAt := func() {
		n()
		a.Idx(wasm.OpLocalGet, lC).Op(wasm.OpI32Add).I32(1).Op(wasm.OpI32Sub)
	}
	// beginSample sets left to the sample's length minus the 1 - c blocks
	// of the path from its start on, and records the path.
	beginSample := func() {
		a.Idx(wasm.OpGlobalGet, gNext).Mem(wasm.OpI32Load, 2, 4)
		a.I32(1).Idx(wasm.OpLocalGet, lC).Op(wasm.OpI32Sub).Op(wasm.OpI32Sub).Idx(wasm.OpGlobalSet, gLeft)
		record(startAt)
	}
	if trace {
		record(func() { a.I32(-1) })
		a.I32(0).Op(wasm.OpEnd)
	} else {
		// if left == 0 { a sample starts in this path } else { left -= n; record }
		a.Idx(wasm.OpGlobalGet, gLeft).Op(wasm.OpI32Eqz)
		a.Block(wasm.OpIf)
		beginSample()
		a.Op(wasm.OpElse)
		a.Idx(wasm.OpGlobalGet, gLeft)
		n()
		a.Op(wasm.OpI32Sub).Idx(wasm.OpGlobalSet, gLeft)
		record(func() { a.I32(-1) })
		a.Op(wasm.OpEnd)
		a.Block(wasm.OpLoop)
		// if left > 0: return 0   (every next path ticks)
		a.Idx(wasm.OpGlobalGet, gLeft).I32(0).Op(wasm.OpI32GtS)
		a.Block(wasm.OpIf).I32(0).Op(wasm.OpReturn).Op(wasm.OpEnd)
		// The sample is done, -left blocks into the path's rest: next += 8;
		// if next == tlimit or its entry is empty: flush (Go gives it
		// the other table).
		a.Idx(wasm.OpGlobalGet, gNext).I32(entryBytes).Op(wasm.OpI32Add).Idx(wasm.OpGlobalSet, gNext)
		a.Idx(wasm.OpGlobalGet, gNext).Idx(wasm.OpGlobalGet, gTLimit).Op(wasm.OpI32Eq)
		a.Block(wasm.OpIf).Idx(wasm.OpCall, 0).Op(wasm.OpElse)
		a.Idx(wasm.OpGlobalGet, gNext).Mem(wasm.OpI32Load, 2, 4).Op(wasm.OpI32Eqz)
		a.Block(wasm.OpIf).Idx(wasm.OpCall, 0).Op(wasm.OpEnd)
		a.Op(wasm.OpEnd)
		// c = table[next].skip + left: the countdown after this path's rest
		a.Idx(wasm.OpGlobalGet, gNext).Mem(wasm.OpI32Load, 2, 0).Idx(wasm.OpGlobalGet, gLeft).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, lC)
		// if c > 0: left = 0; return c
		a.Idx(wasm.OpLocalGet, lC).I32(0).Op(wasm.OpI32GtS)
		a.Block(wasm.OpIf).I32(0).Idx(wasm.OpGlobalSet, gLeft).Idx(wasm.OpLocalGet, lC).Op(wasm.OpReturn).Op(wasm.OpEnd)
		// The next sample starts in the same path.
		beginSample()
		a.Idx(wasm.OpBr, 0)
		a.Op(wasm.OpEnd)
		a.Op(wasm.OpUnreachable)
		a.Op(wasm.OpEnd)
	}
	body := a.B
	var zero, table, plimit, tlimit wasm.Asm
	zero.I32(0).Op(wasm.OpEnd)
	table.I32(tableStart).Op(wasm.OpEnd)
	if trace {
		plimit.I32(recordBytes).Op(wasm.OpEnd)
	} else {
		plimit.I32(areaBytes).Op(wasm.OpEnd)
	}
	tlimit.I32(tableStart + tableBytes).Op(wasm.OpEnd)
	mutI32 := wasm.GlobalType{Type: wasm.ValI32, Mutable: true}
	m := &wasm.Module{
		Version: 1,
		Types: []wasm.FuncType{
			{},
			{Params: []wasm.ValType{wasm.ValI32, wasm.ValI64, wasm.ValI32}, Results: []wasm.ValType{wasm.ValI32}},
		},
		Imports:          []wasm.Import{{Module: flushModule, Name: "flush", Kind: wasm.KindFunc, Type: 0}},
		NumImportedFuncs: 1,
		Funcs:            []uint32{1},
		Memories:         []wasm.Limits{{Flags: 1, Min: memPages, Max: memPages}},
		Globals: []wasm.Global{
			{GlobalType: mutI32, Init: zero.B},   // left
			{GlobalType: mutI32, Init: zero.B},   // pos
			{GlobalType: mutI32, Init: table.B},  // next
			{GlobalType: mutI32, Init: plimit.B}, // plimit
			{GlobalType: mutI32, Init: tlimit.B}, // tlimit
		},
		Exports: []wasm.Export{
			{Name: "buf", Kind: wasm.KindMemory},
			{Name: "left", Kind: wasm.KindGlobal, Index: gLeft},
			{Name: "pos", Kind: wasm.KindGlobal, Index: gPos},
			{Name: "next", Kind: wasm.KindGlobal, Index: gNext},
			{Name: "plimit", Kind: wasm.KindGlobal, Index: gPLimit},
			{Name: "tlimit", Kind: wasm.KindGlobal, Index: gTLimit},
			{Name: TickName, Kind: wasm.KindFunc, Index: 1},
		},
		Code: []wasm.Code{{Body: append([]byte{0}, body...), ExprOff: 1}}, // no locals
	}
	if !trace {
		// The first entry: skip 1 (the countdown's start), length 1.
		m.Data = []wasm.Data{{Offset: table.B, Init: []byte{1, 0, 0, 0, 1, 0, 0, 0}}}
		m.Touch(wasm.SecData)
	}
	for _, id := range []byte{wasm.SecType, wasm.SecImport, wasm.SecFunction, wasm.SecMemory, wasm.SecGlobal, wasm.SecExport, wasm.SecCode} {
		m.Touch(id)
	}
	return m.Encode()
}
