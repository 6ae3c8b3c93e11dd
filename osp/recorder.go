package osp

import (
	"pathprof/wasm"
)

// A call from the program into a Go host function costs about as much as
// a hundred block entries, so $tick is not Go: it is a few instructions of
// a small wasm module, the recorder, which a call from the program reaches
// in a couple of nanoseconds. The recorder writes the blocks of each
// sample into its memory and reads the sample lengths and skips from a
// table that Go fills; it calls Go (flushModule.flush) only when the
// records or the table run out, once per few hundred samples.
//
// Memory layout (one 64 KiB page):
//
//	[0, recordBytes)        block ids of the samples, back to back (u32)
//	[recordBytes, pageSize) the table: per sample (skip before it u32, length u32)
//
// Globals (all exported, all i32):
//
//	left   blocks still to record in the current sample; 0 when skipping
//	pos    byte offset of the next record
//	next   byte offset of the table entry of the current or next sample
//	limit  flush when pos passes it: room for one more longest sample
//
// The module starts with a table of one entry, a sample of one block, and
// a limit of 0: the program's countdown starts at 1, so its first block
// entry takes that sample and the recorder calls Go at once, which fills
// the table. (Go cannot fill it from a start function: wazero shows a
// module's exports only once it is instantiated.)
const (
	flushModule = "pathprof_osp_flush"
	pageSize    = 65536
	recordBytes = 32768
	tableStart  = recordBytes
	entryBytes  = 8
	// MaxLength is the longest sample the recorder takes: the records
	// hold two samples of it.
	MaxLength = recordBytes / 4 / 2
	// BufferBytes is the recorder's memory: the part of the profiler's
	// memory that does not depend on the bound.
	BufferBytes = pageSize
)

// Global indices of the recorder.
const (
	gLeft = iota
	gPos
	gNext
	gLimit
)

// opI32Or is i32.or, which wasm/asm.go does not name.
const opI32Or wasm.Op = 0x72

// recorderModule returns the recorder: in sampling mode it records the
// samples the table asks for; in exact mode (trace) every block entry
// and it never hands out a skip longer than 1.
//
//	(import "pathprof_osp_flush" "flush" (func $flush))
//	(func $tick (export "tick") (param $b i32) (result i32) ...)
func recorderModule(trace bool) ([]byte, error) {
	var a wasm.Asm
	if trace {
		// store b at pos; pos += 4; if pos == pageSize: flush; return 1
		a.Idx(wasm.OpGlobalGet, gPos).Idx(wasm.OpLocalGet, 0).Mem(wasm.OpI32Store, 2, 0)
		a.Idx(wasm.OpGlobalGet, gPos).I32(4).Op(wasm.OpI32Add).Idx(wasm.OpGlobalSet, gPos)
		a.Idx(wasm.OpGlobalGet, gPos).I32(pageSize).Op(wasm.OpI32Eq)
		a.Block(wasm.OpIf).Idx(wasm.OpCall, 0).Op(wasm.OpEnd)
		a.I32(1).Op(wasm.OpEnd)
	} else {
		// if left == 0: left = table[next].length   (a sample starts)
		a.Idx(wasm.OpGlobalGet, gLeft).Op(wasm.OpI32Eqz)
		a.Block(wasm.OpIf).Idx(wasm.OpGlobalGet, gNext).Mem(wasm.OpI32Load, 2, 4).Idx(wasm.OpGlobalSet, gLeft).Op(wasm.OpEnd)
		// store b at pos; pos += 4; left -= 1
		a.Idx(wasm.OpGlobalGet, gPos).Idx(wasm.OpLocalGet, 0).Mem(wasm.OpI32Store, 2, 0)
		a.Idx(wasm.OpGlobalGet, gPos).I32(4).Op(wasm.OpI32Add).Idx(wasm.OpGlobalSet, gPos)
		a.Idx(wasm.OpGlobalGet, gLeft).I32(1).Op(wasm.OpI32Sub).Idx(wasm.OpGlobalSet, gLeft)
		// if left != 0: return 1   (every next block ticks)
		a.Idx(wasm.OpGlobalGet, gLeft).Block(wasm.OpIf).I32(1).Op(wasm.OpReturn).Op(wasm.OpEnd)
		// the sample is done: next += 8
		a.Idx(wasm.OpGlobalGet, gNext).I32(entryBytes).Op(wasm.OpI32Add).Idx(wasm.OpGlobalSet, gNext)
		// if pos > limit || next == pageSize: flush
		a.Idx(wasm.OpGlobalGet, gPos).Idx(wasm.OpGlobalGet, gLimit).Op(wasm.OpI32GtU)
		a.Idx(wasm.OpGlobalGet, gNext).I32(pageSize).Op(wasm.OpI32Eq).Op(opI32Or)
		a.Block(wasm.OpIf).Idx(wasm.OpCall, 0).Op(wasm.OpEnd)
		// return table[next].skip
		a.Idx(wasm.OpGlobalGet, gNext).Mem(wasm.OpI32Load, 2, 0)
		a.Op(wasm.OpEnd)
	}
	body := a.B
	var zero, table wasm.Asm
	zero.I32(0).Op(wasm.OpEnd)
	table.I32(tableStart).Op(wasm.OpEnd)
	mutI32 := wasm.GlobalType{Type: wasm.ValI32, Mutable: true}
	m := &wasm.Module{
		Version: 1,
		Types: []wasm.FuncType{
			{},
			{Params: []wasm.ValType{wasm.ValI32}, Results: []wasm.ValType{wasm.ValI32}},
		},
		Imports:          []wasm.Import{{Module: flushModule, Name: "flush", Kind: wasm.KindFunc, Type: 0}},
		NumImportedFuncs: 1,
		Funcs:            []uint32{1},
		Memories:         []wasm.Limits{{Flags: 1, Min: 1, Max: 1}},
		Globals: []wasm.Global{
			{GlobalType: mutI32, Init: zero.B},  // left
			{GlobalType: mutI32, Init: zero.B},  // pos
			{GlobalType: mutI32, Init: table.B}, // next
			{GlobalType: mutI32, Init: zero.B},  // limit
		},
		Exports: []wasm.Export{
			{Name: "buf", Kind: wasm.KindMemory},
			{Name: "left", Kind: wasm.KindGlobal, Index: gLeft},
			{Name: "pos", Kind: wasm.KindGlobal, Index: gPos},
			{Name: "next", Kind: wasm.KindGlobal, Index: gNext},
			{Name: "limit", Kind: wasm.KindGlobal, Index: gLimit},
			{Name: TickName, Kind: wasm.KindFunc, Index: 1},
		},
		Code: []wasm.Code{{Body: append([]byte{0}, body...), ExprOff: 1}}, // no locals
	}
	if !trace {
		// The first entry: skip 0 (never used), length 1.
		m.Data = []wasm.Data{{Offset: table.B, Init: []byte{0, 0, 0, 0, 1, 0, 0, 0}}}
		m.Touch(wasm.SecData)
	}
	for _, id := range []byte{wasm.SecType, wasm.SecImport, wasm.SecFunction, wasm.SecMemory, wasm.SecGlobal, wasm.SecExport, wasm.SecCode} {
		m.Touch(id)
	}
	return m.Encode()
}
