// Package counters generates the storage of path counts that instrumented
// programs write, and reads the counts back: in the program's own memory
// above what the program sees where possible (embed.go), else in a counter
// module of their own that the program imports.
//
// The counter module keeps the counters out of the program's linear
// memory entirely: wasi-libc's malloc and the Go runtime both take every
// page of their memory beyond the heap base as heap, so pages merely
// reserved there would change the program. A call into a second wasm
// module costs about 2 ns in wazero (a Go host function about 37 ns), but
// wazero spills the caller's live values around it, which is why the
// counters live in the program's memory, hidden from it, when they can.
//
// Functions with few paths get a dense array of counters; the rest share an
// open-addressing hash table that grows itself (memory.grow and rehash) when
// half full. The module exports memory "memory" and three functions:
//
//	count(slot i64)            adds one to dense counter slot (the byte offset / 8)
//	count_n(slot i64, n i64)   adds n to dense counter slot
//	count_hash(f i32, p i64, n i64)  adds n to path p of hashed function f
//
// The instrumenter folds a function's first slot (Layout.Slot) into the
// constant it adds to the path register at the count, so the common, dense
// count is a call with one argument and a bounds check. A slot outside the
// dense arrays, or a hashed count for a function that is not hashed, traps:
// it can only come from an instrumentation bug, and exactness is the
// product.
//
// Memory layout (little endian):
//
//	0   magic "PPCT", version 2, number of functions N, offset H of the hash header
//	16  N descriptors of 4 bytes: kind (0 none, 1 dense, 2 hash) + 4·paths for a dense function
//	D   dense arrays, D = 16 + 4N rounded up to 8: one i64 per path, the arrays
//	    in order of their paths, fewest first, then of function index
//	H   hash header: capacity u32 (a power of two), used u32, table base u32, 0
//	    table: entries of 24 bytes: function+1 u32 (0: empty), 0 u32, path u64, count u64
//
// The data segment that sets the descriptors is part of every copy, so
// they are as short as the reader can do with: it lays the dense arrays
// out again from their lengths. Small arrays first keep the offsets of
// the many small functions' counts, two per count, short LEB128s.
package counters

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/memarea"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/wasm"
)

// ModuleName, CountName and CountHashName are what instrumented modules import.
const (
	ModuleName    = "pathprof"
	CountName     = "count"
	CountHashName = "count_hash"
	CountNName    = "count_n"
)

// Kinds of counter storage per function.
const (
	KindNone  = 0
	KindDense = 1
	KindHash  = 2
)

const (
	magic     = 0x54435050 // "PPCT"
	version   = 2
	hashK1    = -7046029254386353131 // 0x9E3779B97F4A7C15
	hashK2    = -4417276706812531889 // 0xC2B2AE3D27D4EB4F
	entrySize = 24
)

// Magic, Version and EntrySize are the header's magic number and version
// and a hash entry's size, for readers of the memory written in other
// languages.
const (
	Magic     = magic
	Version   = version
	EntrySize = entrySize
)

// Layout says where each function's counters are.
type Layout struct {
	Funcs   []FuncLayout // indexed by function index
	HashOff uint32
	Size    uint32 // bytes of initialised memory
	// DenseEnd is the first byte after the dense arrays.
	DenseEnd uint32
	// HashSlots is the hash table's initial number of slots.
	HashSlots uint32
}

// Slot returns the counter slot of path 0 of a dense function: the
// instrumenter adds it to the path id it passes to count.
func (l *Layout) Slot(f uint32) int64 { return int64(l.Funcs[f].Base / 8) }

// FuncLayout is one function's counter storage.
type FuncLayout struct {
	Kind  uint32
	Base  uint32 // dense arrays: byte offset of path 0
	Paths uint64
}

// Options tune the layout.
type Options struct {
	// DenseMax is the largest number of paths a function may have to get a
	// dense array (default 1<<18: 2 MiB). A hashed count costs several
	// times a dense one, and interpreter loops have tens of thousands of
	// paths.
	DenseMax uint64
	// DenseBudget caps the bytes of all dense arrays together (default 64 MiB).
	DenseBudget uint64
	// HashSlots is the hash table's initial number of slots, a power of
	// two (default 1024). Each doubling rehashes the table into fresh
	// pages. A larger start spares bzip2 (90,000 distinct paths in
	// sendMTFValues) its growths, but every run then allocates the
	// table: 65,536 slots made the suite's geometric mean worse (short
	// runs such as grid and bzip2 -d paid more than bzip2 gained).
	HashSlots uint32
}

// NewLayout assigns counter storage to functions. paths[f] is the number of
// path ids of function f, or 0 for a function that is not profiled.
func NewLayout(paths []uint64, opt Options) (*Layout, error) {
	if opt.DenseMax == 0 {
		opt.DenseMax = 1 << 18
	}
	if opt.DenseBudget == 0 {
		opt.DenseBudget = 64 << 20
	}
	l := &Layout{Funcs: make([]FuncLayout, len(paths))}
	off := denseStart(uint64(len(paths)))
	// The budget goes to the functions with the fewest paths first: a
	// dense array costs a function 8 bytes per path, so a few large ones
	// would otherwise leave every later small function of a big module
	// hashed, and small functions are where most calls go.
	order := make([]int, 0, len(paths))
	for f, n := range paths {
		if n > 0 {
			order = append(order, f)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(paths[a], paths[b]) })
	dense := make([]bool, len(paths))
	end := off
	for _, f := range order {
		n := paths[f]
		if n > opt.DenseMax || n >= maxDensePaths || end+8*n > opt.DenseBudget {
			break
		}
		dense[f] = true
		end += 8 * n
	}
	for f, n := range paths {
		if n > 0 && !dense[f] {
			l.Funcs[f] = FuncLayout{Kind: KindHash, Paths: n}
		}
	}
	// The arrays lie in the same order, fewest paths first.
	for _, f := range order {
		if dense[f] {
			l.Funcs[f] = FuncLayout{Kind: KindDense, Base: uint32(off), Paths: paths[f]}
			off += 8 * paths[f]
		}
	}
	l.DenseEnd = uint32(off)
	l.HashSlots = opt.HashSlots
	if l.HashSlots == 0 {
		l.HashSlots = 1024
	}
	if l.HashSlots&(l.HashSlots-1) != 0 {
		return nil, fmt.Errorf("hash table slots %d: not a power of two", l.HashSlots)
	}
	off = (off + 15) &^ 15
	if off+16+uint64(l.HashSlots)*entrySize > 1<<31 {
		return nil, fmt.Errorf("counter layout needs %d bytes", off)
	}
	l.HashOff = uint32(off)
	l.Size = uint32(off + 16 + uint64(l.HashSlots)*entrySize)
	return l, nil
}

// maxDensePaths bounds a dense function's paths: a descriptor holds
// them in 30 bits.
const maxDensePaths = 1 << 30

// denseStart is where the dense arrays of a layout of n functions begin.
func denseStart(n uint64) uint64 { return (16 + 4*n + 7) &^ 7 }

// header returns the initialised bytes: header and descriptors.
func (l *Layout) header() []byte {
	b := make([]byte, 16+4*len(l.Funcs))
	binary.LittleEndian.PutUint32(b[0:], magic)
	binary.LittleEndian.PutUint32(b[4:], version)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(l.Funcs)))
	binary.LittleEndian.PutUint32(b[12:], l.HashOff)
	for i, f := range l.Funcs {
		d := f.Kind
		if f.Kind == KindDense {
			d |= uint32(f.Paths) << 2
		}
		binary.LittleEndian.PutUint32(b[16+4*i:], d)
	}
	return b
}

// denseArray is one dense function's array in a counter memory.
type denseArray struct {
	f           uint32
	base, paths uint64
}

// denseArrays reads the descriptors of a counter memory of n functions
// (its header read) and lays its dense arrays out as NewLayout does.
func denseArrays(mem []byte, n uint64) ([]denseArray, error) {
	if denseStart(n) > uint64(len(mem)) {
		return nil, fmt.Errorf("counter memory: truncated")
	}
	var ds []denseArray
	for f := uint64(0); f < n; f++ {
		d := binary.LittleEndian.Uint32(mem[16+4*f:])
		if d&3 == KindDense {
			ds = append(ds, denseArray{f: uint32(f), paths: uint64(d >> 2)})
		}
	}
	slices.SortStableFunc(ds, func(a, b denseArray) int { return cmp.Compare(a.paths, b.paths) })
	off := denseStart(n)
	for i := range ds {
		ds[i].base = off
		off += 8 * ds[i].paths
	}
	if off > uint64(len(mem)) {
		return nil, fmt.Errorf("counter memory: dense arrays out of bounds")
	}
	return ds, nil
}

// hashHeader returns the hash table's initial header: an empty table
// right after it.
func (l *Layout) hashHeader() []byte {
	hash := make([]byte, 16)
	binary.LittleEndian.PutUint32(hash[0:], l.HashSlots)
	binary.LittleEndian.PutUint32(hash[8:], l.HashOff+16)
	return hash
}

// Module returns the counter module for the layout.
func (l *Layout) Module() ([]byte, error) {
	m := &wasm.Module{Version: 1}
	m.Types = []wasm.FuncType{
		{Params: []wasm.ValType{wasm.ValI32, wasm.ValI64, wasm.ValI64}}, // count_hash
		{},                                    // grow
		{Params: []wasm.ValType{wasm.ValI64}}, // count
		{Params: []wasm.ValType{wasm.ValI64, wasm.ValI64}}, // count_n
	}
	m.Funcs = []uint32{2, 0, 1, 3}
	pages := (uint64(l.Size) + 65535) / 65536
	m.Memories = []wasm.Limits{{Min: pages}}
	m.Exports = []wasm.Export{{Name: "memory", Kind: wasm.KindMemory},
		{Name: CountName, Kind: wasm.KindFunc, Index: 0}, {Name: CountHashName, Kind: wasm.KindFunc, Index: 1},
		{Name: CountNName, Kind: wasm.KindFunc, Index: 3}}
	m.Data = []wasm.Data{
		{Flags: 0, Offset: constI32(0), Init: l.header()},
		{Flags: 0, Offset: constI32(int32(l.HashOff)), Init: l.hashHeader()},
	}
	m.Code = []wasm.Code{
		wasm.NewCode([]wasm.LocalDecl{{Count: 1, Type: wasm.ValI32}}, countDenseCode(l.DenseEnd/8, false)),
		wasm.NewCode([]wasm.LocalDecl{{Count: countHashLocals, Type: wasm.ValI32}}, countCode(uint32(len(l.Funcs)), l.HashOff, zeroBase, growFn)),
		wasm.NewCode([]wasm.LocalDecl{{Count: growLocals, Type: wasm.ValI32}}, growCode(l.HashOff, zeroBase, nil)),
		wasm.NewCode([]wasm.LocalDecl{{Count: 1, Type: wasm.ValI32}}, countDenseCode(l.DenseEnd/8, true)),
	}
	for _, id := range []byte{wasm.SecType, wasm.SecFunction, wasm.SecMemory, wasm.SecExport, wasm.SecCode, wasm.SecData} {
		m.Touch(id)
	}
	return m.Encode()
}

func constI32(v int32) []byte {
	var a wasm.Asm
	a.I32(v).Op(wasm.OpEnd)
	return a.B
}

// countDenseCode: count(slot i64), or with byN count_n(slot i64, n i64);
// the local after the parameters holds the slot's address.
func countDenseCode(limit uint32, byN bool) []byte {
	const slot = 0
	addr := uint32(1)
	if byN {
		addr = 2
	}
	var a wasm.Asm
	a.Idx(wasm.OpLocalGet, slot).I64(int64(limit)).Op(wasm.OpI64GeU).Block(wasm.OpIf).Op(wasm.OpUnreachable).Op(wasm.OpEnd)
	a.Idx(wasm.OpLocalGet, slot).Op(wasm.OpI32Wrap).I32(3).Op(wasm.OpI32Shl).Idx(wasm.OpLocalTee, addr)
	a.Idx(wasm.OpLocalGet, addr).Mem(wasm.OpI64Load, 3, 0)
	if byN {
		a.Idx(wasm.OpLocalGet, 1)
	} else {
		a.I64(1)
	}
	a.Op(wasm.OpI64Add).Mem(wasm.OpI64Store, 3, 0)
	a.Op(wasm.OpEnd)
	return a.B
}

// growFn is the index of grow in the counter module.
const growFn = 2

// A base pushes the address of the counter area's first byte (i32): 0 in
// the counter module, a global where the counters live in the program's
// memory (embed.go). Every address the hash table keeps is relative to it,
// so that the area can move.
type base func(a *wasm.Asm)

func zeroBase(a *wasm.Asm) { a.I32(0) }

// Locals (i32) of the hash count and of the table's growth.
const (
	countHashLocals = 7
	growLocals      = 9
)

// countCode: count_hash(f i32, p i64, n i64); local 3: descriptor address,
// locals 4 to 9: the hash table's. n is one but where a loop's local
// counters are added to the table when the loop is left. The table probe is inline: a second call per
// count cost the hashed functions, the biggest of every program, more.
// grow is the function that grows the table.
func countCode(nfuncs, h uint32, b base, grow uint32) []byte {
	const f, p, d = 0, 1, 3
	var a wasm.Asm
	// A function out of range, or not hashed: trap.
	a.Idx(wasm.OpLocalGet, f).I32(int32(nfuncs)).Op(wasm.OpI32GeU).Block(wasm.OpIf).Op(wasm.OpUnreachable).Op(wasm.OpEnd)
	a.Idx(wasm.OpLocalGet, f).I32(2).Op(wasm.OpI32Shl).I32(16).Op(wasm.OpI32Add)
	b(&a)
	a.Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, d)
	a.Idx(wasm.OpLocalGet, d).Mem(wasm.OpI32Load, 2, 0).I32(3).Op(wasm.OpI32And).I32(KindHash).Op(wasm.OpI32Ne).Block(wasm.OpIf).Op(wasm.OpUnreachable).Op(wasm.OpEnd)
	hashIncr(&a, h, d+1, b, grow)
	a.Op(wasm.OpEnd)
	return a.B
}

// hashOf appends the slot of (f, p) in a table of cap slots, a power of
// two: the high half of p·hashK1 plus f's part, the high half of
// f·hashK2, all modulo cap. pushP pushes p (an i64), pushK1 hashK1 (an
// i64), pushFTerm f's part (an i32) and pushMask cap-1 (an i32).
func hashOf(a *wasm.Asm, pushP, pushK1, pushFTerm, pushMask func()) {
	pushP()
	pushK1()
	a.Op(wasm.OpI64Mul).I64(32).Op(wasm.OpI64ShrU).Op(wasm.OpI32Wrap)
	pushFTerm()
	a.Op(wasm.OpI32Add)
	pushMask()
	a.Op(wasm.OpI32And)
}

// k1 pushes hashK1 as a constant.
func k1(a *wasm.Asm) func() { return func() { a.I64(hashK1) } }

// fTerm returns the emitter of f's part of the hash for the f (an i32)
// that pushF pushes. Where f is a constant, the part is one (hashConst).
func fTerm(a *wasm.Asm, pushF func()) func() {
	return func() {
		pushF()
		a.Op(wasm.OpI64ExtU).I64(hashK2).Op(wasm.OpI64Mul).I64(32).Op(wasm.OpI64ShrU).Op(wasm.OpI32Wrap)
	}
}

// hashConst is fTerm's value for a constant f.
func hashConst(f uint32) int32 { return int32(uint32(uint64(int64(f)*hashK2) >> 32)) }

// maskOf returns the emitter of cap-1 for the cap (an i32) that pushCap
// pushes.
func maskOf(a *wasm.Asm, pushCap func()) func() {
	return func() {
		pushCap()
		a.I32(1).Op(wasm.OpI32Sub)
	}
}

// hashIncr appends the count of (f, p) by n, the first three locals, in the hash
// table whose header is at h in the area, using six i32 locals from first
// on: key, idx, e, cap, the table's address and the header's.
func hashIncr(a *wasm.Asm, h, first uint32, b base, grow uint32) {
	const f, p, n = 0, 1, 2
	key, idx, e, capL, tbl, hdr := first, first+1, first+2, first+3, first+4, first+5
	get := func(l uint32) func() { return func() { a.Idx(wasm.OpLocalGet, l) } }
	a.Idx(wasm.OpLocalGet, f).I32(1).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, key)
	b(a)
	a.I32(int32(h)).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, hdr)
	a.Idx(wasm.OpLocalGet, hdr).Mem(wasm.OpI32Load, 2, 0).Idx(wasm.OpLocalSet, capL)
	b(a)
	a.Idx(wasm.OpLocalGet, hdr).Mem(wasm.OpI32Load, 2, 8).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, tbl)
	hashOf(a, get(p), k1(a), fTerm(a, get(f)), maskOf(a, get(capL)))
	a.Idx(wasm.OpLocalSet, idx)
	a.Block(wasm.OpLoop)
	{
		a.Idx(wasm.OpLocalGet, tbl).Idx(wasm.OpLocalGet, idx).I32(entrySize).Op(wasm.OpI32Mul).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, e)
		a.Idx(wasm.OpLocalGet, e).Mem(wasm.OpI32Load, 2, 0).Op(wasm.OpI32Eqz).Block(wasm.OpIf)
		{
			a.Idx(wasm.OpLocalGet, e).Idx(wasm.OpLocalGet, key).Mem(wasm.OpI32Store, 2, 0)
			a.Idx(wasm.OpLocalGet, e).Idx(wasm.OpLocalGet, p).Mem(wasm.OpI64Store, 3, 8)
			a.Idx(wasm.OpLocalGet, e).Idx(wasm.OpLocalGet, n).Mem(wasm.OpI64Store, 3, 16)
			a.Idx(wasm.OpLocalGet, hdr).Idx(wasm.OpLocalGet, hdr).Mem(wasm.OpI32Load, 2, 4).I32(1).Op(wasm.OpI32Add).Mem(wasm.OpI32Store, 2, 4)
			a.Idx(wasm.OpLocalGet, hdr).Mem(wasm.OpI32Load, 2, 4).I32(1).Op(wasm.OpI32Shl).Idx(wasm.OpLocalGet, capL).Op(wasm.OpI32GtU)
			a.Block(wasm.OpIf).Idx(wasm.OpCall, grow).Op(wasm.OpEnd)
			a.Op(wasm.OpReturn)
		}
		a.Op(wasm.OpEnd)
		a.Idx(wasm.OpLocalGet, e).Mem(wasm.OpI32Load, 2, 0).Idx(wasm.OpLocalGet, key).Op(wasm.OpI32Eq).Block(wasm.OpIf)
		{
			a.Idx(wasm.OpLocalGet, e).Mem(wasm.OpI64Load, 3, 8).Idx(wasm.OpLocalGet, p).Op(wasm.OpI64Eq).Block(wasm.OpIf)
			a.Idx(wasm.OpLocalGet, e).Idx(wasm.OpLocalGet, e).Mem(wasm.OpI64Load, 3, 16).Idx(wasm.OpLocalGet, n).Op(wasm.OpI64Add).Mem(wasm.OpI64Store, 3, 16)
			a.Op(wasm.OpReturn)
			a.Op(wasm.OpEnd)
		}
		a.Op(wasm.OpEnd)
		a.Idx(wasm.OpLocalGet, idx).I32(1).Op(wasm.OpI32Add).Idx(wasm.OpLocalGet, capL).I32(1).Op(wasm.OpI32Sub).Op(wasm.OpI32And).Idx(wasm.OpLocalSet, idx)
		a.Idx(wasm.OpBr, 0)
	}
	a.Op(wasm.OpEnd)
}

// growCode doubles the hash table into fresh pages at the end of memory
// (right after the counter area, which ends there) and rehashes it.
// sync, when not nil, appends what keeps copies of the new header up to
// date, given the local holding the header's address.
func growCode(h uint32, b base, sync func(a *wasm.Asm, hdr uint32)) []byte {
	const oldcap, oldbase, newcap, newbase, i, e, idx, ne, hdr = 0, 1, 2, 3, 4, 5, 6, 7, 8
	var a wasm.Asm
	b(&a)
	a.I32(int32(h)).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, hdr)
	a.Idx(wasm.OpLocalGet, hdr).Mem(wasm.OpI32Load, 2, 0).Idx(wasm.OpLocalSet, oldcap)
	b(&a)
	a.Idx(wasm.OpLocalGet, hdr).Mem(wasm.OpI32Load, 2, 8).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, oldbase)
	a.Idx(wasm.OpLocalGet, oldcap).I32(1).Op(wasm.OpI32Shl).Idx(wasm.OpLocalSet, newcap)
	a.Idx(wasm.OpMemSize, 0).I32(16).Op(wasm.OpI32Shl).Idx(wasm.OpLocalSet, newbase)
	// The new table's pages; the memory must stay below 4 GiB, which
	// wazero cannot address to its last byte: out of room, trap.
	a.Idx(wasm.OpLocalGet, newcap).I32(entrySize).Op(wasm.OpI32Mul).I32(65535).Op(wasm.OpI32Add).I32(16).Op(wasm.OpI32ShrU).Idx(wasm.OpLocalSet, i)
	a.Idx(wasm.OpMemSize, 0).Op(wasm.OpI64ExtU).Idx(wasm.OpLocalGet, i).Op(wasm.OpI64ExtU).Op(wasm.OpI64Add).I64(memarea.MaxPages).Op(wasm.OpI64GtU)
	a.Block(wasm.OpIf).Op(wasm.OpUnreachable).Op(wasm.OpEnd)
	a.Idx(wasm.OpLocalGet, i).Idx(wasm.OpMemGrow, 0).I32(-1).Op(wasm.OpI32Eq).Block(wasm.OpIf).Op(wasm.OpUnreachable).Op(wasm.OpEnd)
	a.I32(0).Idx(wasm.OpLocalSet, i)
	a.Block(wasm.OpBlock).Block(wasm.OpLoop)
	{
		a.Idx(wasm.OpLocalGet, i).Idx(wasm.OpLocalGet, oldcap).Op(wasm.OpI32GeU).Idx(wasm.OpBrIf, 1)
		a.Idx(wasm.OpLocalGet, oldbase).Idx(wasm.OpLocalGet, i).I32(entrySize).Op(wasm.OpI32Mul).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, e)
		a.Idx(wasm.OpLocalGet, e).Mem(wasm.OpI32Load, 2, 0).Block(wasm.OpIf)
		{
			hashOf(&a,
				func() { a.Idx(wasm.OpLocalGet, e).Mem(wasm.OpI64Load, 3, 8) }, k1(&a),
				fTerm(&a, func() { a.Idx(wasm.OpLocalGet, e).Mem(wasm.OpI32Load, 2, 0).I32(1).Op(wasm.OpI32Sub) }),
				maskOf(&a, func() { a.Idx(wasm.OpLocalGet, newcap) }))
			a.Idx(wasm.OpLocalSet, idx)
			a.Block(wasm.OpLoop)
			a.Idx(wasm.OpLocalGet, newbase).Idx(wasm.OpLocalGet, idx).I32(entrySize).Op(wasm.OpI32Mul).Op(wasm.OpI32Add).Idx(wasm.OpLocalTee, ne)
			a.Mem(wasm.OpI32Load, 2, 0).Block(wasm.OpIf)
			a.Idx(wasm.OpLocalGet, idx).I32(1).Op(wasm.OpI32Add).Idx(wasm.OpLocalGet, newcap).I32(1).Op(wasm.OpI32Sub).Op(wasm.OpI32And).Idx(wasm.OpLocalSet, idx)
			a.Idx(wasm.OpBr, 1)
			a.Op(wasm.OpEnd)
			a.Op(wasm.OpEnd)
			a.Idx(wasm.OpLocalGet, ne).Idx(wasm.OpLocalGet, e).Mem(wasm.OpI32Load, 2, 0).Mem(wasm.OpI32Store, 2, 0)
			a.Idx(wasm.OpLocalGet, ne).Idx(wasm.OpLocalGet, e).Mem(wasm.OpI64Load, 3, 8).Mem(wasm.OpI64Store, 3, 8)
			a.Idx(wasm.OpLocalGet, ne).Idx(wasm.OpLocalGet, e).Mem(wasm.OpI64Load, 3, 16).Mem(wasm.OpI64Store, 3, 16)
		}
		a.Op(wasm.OpEnd)
		a.Idx(wasm.OpLocalGet, i).I32(1).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, i)
		a.Idx(wasm.OpBr, 0)
	}
	a.Op(wasm.OpEnd).Op(wasm.OpEnd)
	a.Idx(wasm.OpLocalGet, hdr).Idx(wasm.OpLocalGet, newcap).Mem(wasm.OpI32Store, 2, 0)
	// The table's address, relative to the area.
	a.Idx(wasm.OpLocalGet, hdr).Idx(wasm.OpLocalGet, newbase)
	b(&a)
	a.Op(wasm.OpI32Sub).Mem(wasm.OpI32Store, 2, 8)
	if sync != nil {
		sync(&a, hdr)
	}
	a.Op(wasm.OpEnd)
	return a.B
}

// Counts maps function index to path id to count.
type Counts map[uint32]map[uint64]uint64

// Read extracts the counts from the counter module's memory.
func Read(mem []byte) (Counts, error) {
	if len(mem) < 16 || binary.LittleEndian.Uint32(mem) != magic {
		return nil, fmt.Errorf("counter memory: bad header")
	}
	if v := binary.LittleEndian.Uint32(mem[4:]); v != version {
		return nil, fmt.Errorf("counter memory: version %d, want %d", v, version)
	}
	n := uint64(binary.LittleEndian.Uint32(mem[8:]))
	h := uint64(binary.LittleEndian.Uint32(mem[12:]))
	if h+16 > uint64(len(mem)) {
		return nil, fmt.Errorf("counter memory: truncated")
	}
	ds, err := denseArrays(mem, n)
	if err != nil {
		return nil, err
	}
	out := Counts{}
	add := func(f uint32, p, c uint64) {
		if c == 0 {
			return
		}
		m := out[f]
		if m == nil {
			m = map[uint64]uint64{}
			out[f] = m
		}
		m[p] += c
	}
	for _, d := range ds {
		for p := uint64(0); p < d.paths; p++ {
			add(d.f, p, binary.LittleEndian.Uint64(mem[d.base+8*p:]))
		}
	}
	capSlots := uint64(binary.LittleEndian.Uint32(mem[h:]))
	tbase := uint64(binary.LittleEndian.Uint32(mem[h+8:]))
	if tbase+capSlots*entrySize > uint64(len(mem)) {
		return nil, fmt.Errorf("counter memory: hash table out of bounds")
	}
	for i := uint64(0); i < capSlots; i++ {
		e := mem[tbase+i*entrySize:]
		key := binary.LittleEndian.Uint32(e)
		if key == 0 {
			continue
		}
		if uint64(key-1) >= n {
			return nil, fmt.Errorf("counter memory: hash entry for unknown function %d", key-1)
		}
		add(key-1, binary.LittleEndian.Uint64(e[8:]), binary.LittleEndian.Uint64(e[16:]))
	}
	return out, nil
}

// ReadInstance reads the counts from a run's instances: runner.Config
// AfterRun hands them over, keyed by module name (the program's is ""),
// before they are closed. The counters are in the program's memory when
// it exports BaseExport, else in the counter module's.
func ReadInstance(mods map[string]api.Module) (Counts, error) {
	area, err := Area(mods)
	if err != nil {
		return nil, err
	}
	return Read(area)
}

// Area returns the counter memory of a run's instances (see ReadInstance)
// as a view of the memory that holds it, valid until the memory grows or
// the instance closes.
func Area(mods map[string]api.Module) ([]byte, error) {
	if prog := mods[""]; prog != nil {
		if g := prog.ExportedGlobal(BaseExport); g != nil {
			mem := prog.Memory()
			base := uint32(g.Get())
			if mem == nil || base > mem.Size() {
				return nil, fmt.Errorf("the program's counter area at %d is outside its memory", base)
			}
			area, ok := mem.Read(base, mem.Size()-base)
			if !ok {
				return nil, fmt.Errorf("cannot read the program's counter area")
			}
			return area, nil
		}
	}
	inst := mods[ModuleName]
	if inst == nil || inst.Memory() == nil {
		return nil, fmt.Errorf("no %s module instance to read counts from", ModuleName)
	}
	mem, ok := inst.Memory().Read(0, inst.Memory().Size())
	if !ok {
		return nil, fmt.Errorf("cannot read the %s module's memory", ModuleName)
	}
	return mem, nil
}

// Modules returns the modules besides WASI that a copy needs whose
// counter module is cm: none when cm is nil (its counters live in its own
// memory).
func Modules(cm []byte) []runner.NamedModule {
	if cm == nil {
		return nil
	}
	return []runner.NamedModule{{Name: ModuleName, Wasm: cm}}
}
