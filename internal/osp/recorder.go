// The recorder: $tick and the inline record that the sampling copy runs
// where the countdown is out, its area in the program's memory, and the Go
// side that reads its records and writes its tables.

package osp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/wasm"
)

// The recorder is part of the program. Where a path ends and the
// countdown is out, the program records the path into an area of its own
// memory that it cannot see (package memarea): inline, where a loop's back
// edge (or another branch without values) ends a path that continues a
// sample, or else through a call of $tick, a function added to the
// module, which does the same first and otherwise starts and ends
// samples. A call from wasm into Go costs about as much as a hundred
// block entries (the tracer measured 70–130× slowdowns with one per
// block), and even a call into another wasm module cost the program tens
// of nanoseconds, several times the inline record. The program calls Go
// (FlushModule.flush) only when its records area is full or its table of
// skips runs out.
//
// Area layout (memBytes, all addresses relative to the area's start,
// which moves when the program grows its memory):
//
//	[0, recordBytes)                       records, 16 bytes each:
//	                                       function u32, start u32, packed path value u64
//	[tableStart, tableStart+2·tableBytes)  two tables: per sample (skip before it u32, length u32)
//
// A record's start is the index, in its path, of the block where a sample
// starts, or noStart for a path that continues the current sample. Go
// replays nothing: it takes the tables' entries in order, one per record
// with a start, so it knows each sample's length and skip. Go copies the
// records out at each flush, so the area holds one records area only,
// and it fills the table the program does not read.
//
// Globals (mutable i32, exported under exportPrefix + their name):
//
//	pos     offset of the next record
//	next    offset of the table entry of the current or next sample
//	tlimit  the end of the current table
//
// The countdown $c (CountdownExport) also tells whether a sample is being
// recorded: between samples it counts the skip down, from at most 2^30,
// and a path's end finds it above -2^24 (a path has fewer blocks); while
// a sample is recorded, it is left - inSample, left being the blocks the
// sample still wants, so that it stays below -2^29 and the program's own
// count down at each path end keeps left up to date. A path end then
// needs no store beyond the record to know that the sample goes on.
//
// The area starts with a table of one entry, a sample of one block with a
// skip of 1 (the countdown starts at 1), followed by an empty entry: the
// program's first path takes that sample and then calls Go, which gives
// it a table. Tracing uses the same program: Go then gives it samples of
// traceLength blocks with skips of 1, so that every path is recorded.
const (
	// FlushModule and FlushName name the Go function the program calls.
	FlushModule = "pathprof_osp"
	FlushName   = "flush"
	// exportPrefix starts the names of the exported globals; the area's
	// address is exported as exportPrefix + "area".
	exportPrefix = "pathprof_osp_"
	pageSize     = 65536
	recordBytes  = 8192 // 512 records
	recordSize   = 16
	tableStart   = recordBytes
	tableBytes   = 32768 // one table: 4096 samples
	entryBytes   = 8
	memBytes     = tableStart + 2*tableBytes
	noStart      = 0xFFFFFFFF
	// inSample is added to the countdown while a sample is recorded;
	// sampling is below -2^29, skipping above.
	inSample = 1 << 30
	// traceLength is the length of a tracing run's samples: at most
	// 2^29 - 2^24, so that a sample's countdown is below -2^29.
	traceLength = 1 << 28
	// traceBatch is how many block ids a tracing run gathers before it
	// hands them on: the exact counts take their time per batch too.
	traceBatch = 1 << 16
	// MaxLength is the longest sample the recorder takes.
	MaxLength = 4096
	// BufferBytes is the recorder's memory in the program plus the Go
	// ring the records are copied into: the part of the profiler's
	// memory that does not depend on the bound.
	BufferBytes = (memBytes+pageSize-1)/pageSize*pageSize + ringAreas*recordBytes
)

// globals are the recorder's globals in the program, by index.
type globals struct {
	base, c, pos, next, tlimit uint32
}

// names of the exported globals, in the order of globals' fields after c.
var globalNames = []string{"pos", "next", "tlimit"}

// tickLocals are $tick's locals after its parameters: left.
var tickLocals = []wasm.LocalDecl{{Count: 1, Type: wasm.ValI32}}

// tickCode returns the body of $tick (without its locals, tickLocals):
//
//	(func $tick (param $fn i32) (param $p i64) (param $c i32) (result i32) ...)
//
// $c is the program's countdown after the path's blocks were counted
// down. The path makes n = $p & 0xFFFF block entries. Between samples, $c ≤
// 0 means the skip ended on the path's block n + $c - 1: a sample starts
// there. In a sample, $c + inSample is what the sample still wants after
// this path: if it is not positive, the path completes the sample (else
// the records were full). $tick records the path and returns the new
// countdown: the sample's left blocks - inSample while it goes on, else
// the next skip minus the blocks of the path that lie beyond the sample;
// if that is not positive, the next sample starts in the same path, which
// it records again with its start.
func tickCode(g globals, flush uint32) []byte {
	const lFn, lP, lC, lLeft = 0, 1, 2, 3
	var a wasm.Asm
	at := func(o uint32) { a.Idx(wasm.OpGlobalGet, g.base).Idx(wasm.OpGlobalGet, o).Op(wasm.OpI32Add) }
	// record appends the record (fn, the start that start pushes, p).
	record := func(start func()) {
		at(g.pos)
		a.Idx(wasm.OpLocalGet, lFn).Mem(wasm.OpI32Store, 2, 0)
		at(g.pos)
		start()
		a.Mem(wasm.OpI32Store, 2, 4)
		at(g.pos)
		a.Idx(wasm.OpLocalGet, lP).Mem(wasm.OpI64Store, 3, 8)
		a.Idx(wasm.OpGlobalGet, g.pos).I32(recordSize).Op(wasm.OpI32Add).Idx(wasm.OpGlobalSet, g.pos)
		// if pos == the end of the records: flush
		a.Idx(wasm.OpGlobalGet, g.pos).I32(recordBytes).Op(wasm.OpI32Eq)
		a.Block(wasm.OpIf).Idx(wasm.OpCall, flush).Op(wasm.OpEnd)
	}
	// startAt pushes n + c - 1, the block where the sample starts.
	startAt := func() {
		a.Idx(wasm.OpLocalGet, lP).Op(wasm.OpI32Wrap).I32(countMask).Op(wasm.OpI32And)
		a.Idx(wasm.OpLocalGet, lC).Op(wasm.OpI32Add).I32(1).Op(wasm.OpI32Sub)
	}
	// beginSample sets left to the sample's length minus the 1 - c blocks
	// of the path from its start on, and records the path.
	beginSample := func() {
		at(g.next)
		a.Mem(wasm.OpI32Load, 2, 4)
		a.I32(1).Idx(wasm.OpLocalGet, lC).Op(wasm.OpI32Sub).Op(wasm.OpI32Sub).Idx(wasm.OpLocalSet, lLeft)
		record(startAt)
	}
	// A path that continues a sample without completing it, with room
	// for its record (where the path end did not record it inline):
	// record it, the countdown stays.
	recordFast(&a, g, func() { a.Idx(wasm.OpLocalGet, lFn).Op(wasm.OpI64ExtU).I64(-1 << 32).Op(wasm.OpI64Or) },
		lC, lLeft, lP, func() { a.Idx(wasm.OpLocalGet, lC).Op(wasm.OpReturn) })
	// if c > -2^29 { a sample starts in this path } else { left = c + inSample; record }
	a.Idx(wasm.OpLocalGet, lC).I32(-1 << 29).Op(wasm.OpI32GtS)
	a.Block(wasm.OpIf)
	beginSample()
	a.Op(wasm.OpElse)
	a.Idx(wasm.OpLocalGet, lC).I32(inSample).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, lLeft)
	record(func() { a.I32(-1) })
	a.Op(wasm.OpEnd)
	a.Block(wasm.OpLoop)
	// if left > 0: return left - inSample   (the sample goes on)
	a.Idx(wasm.OpLocalGet, lLeft).I32(0).Op(wasm.OpI32GtS)
	a.Block(wasm.OpIf).Idx(wasm.OpLocalGet, lLeft).I32(inSample).Op(wasm.OpI32Sub).Op(wasm.OpReturn).Op(wasm.OpEnd)
	// The sample is done, -left blocks into the path's rest: next += 8;
	// if next == tlimit or its entry is empty: flush (Go gives it the
	// other table).
	a.Idx(wasm.OpGlobalGet, g.next).I32(entryBytes).Op(wasm.OpI32Add).Idx(wasm.OpGlobalSet, g.next)
	a.Idx(wasm.OpGlobalGet, g.next).Idx(wasm.OpGlobalGet, g.tlimit).Op(wasm.OpI32Eq)
	a.Block(wasm.OpIf).Idx(wasm.OpCall, flush).Op(wasm.OpElse)
	at(g.next)
	a.Mem(wasm.OpI32Load, 2, 4).Op(wasm.OpI32Eqz)
	a.Block(wasm.OpIf).Idx(wasm.OpCall, flush).Op(wasm.OpEnd)
	a.Op(wasm.OpEnd)
	// c = table[next].skip + left: the countdown after this path's rest
	at(g.next)
	a.Mem(wasm.OpI32Load, 2, 0).Idx(wasm.OpLocalGet, lLeft).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, lC)
	// if c > 0: return c
	a.Idx(wasm.OpLocalGet, lC).I32(0).Op(wasm.OpI32GtS)
	a.Block(wasm.OpIf).Idx(wasm.OpLocalGet, lC).Op(wasm.OpReturn).Op(wasm.OpEnd)
	// The next sample starts in the same path.
	beginSample()
	a.Idx(wasm.OpBr, 0)
	a.Op(wasm.OpEnd)
	a.Op(wasm.OpUnreachable)
	a.Op(wasm.OpEnd)
	return a.B
}

// recordFast appends what $tick does when a path continues a sample
// without completing it and the records have room for more than this
// one: the record (word pushes its first eight bytes: the function, and
// noStart above it). It then leaves with out (from inside the block it
// opens); every other case reaches the code after the block. c is the i32
// local with the countdown after the path, s a scratch i32 local (it may
// be c when c is not needed after the block), p the i64 local with the
// packed path value.
func recordFast(a *wasm.Asm, g globals, word func(), c, s, p uint32, out func()) {
	a.Block(wasm.OpBlock)
	// In a sample that goes on: 1 - inSample ≤ c < -2^29, one unsigned
	// comparison.
	a.Idx(wasm.OpLocalGet, c).I32(inSample-1).Op(wasm.OpI32Add).I32(1<<29-1).Op(wasm.OpI32GeU).Idx(wasm.OpBrIf, 0)
	a.Idx(wasm.OpGlobalGet, g.pos).Idx(wasm.OpLocalTee, s).I32(recordBytes-recordSize).Op(wasm.OpI32Eq).Idx(wasm.OpBrIf, 0)
	a.Idx(wasm.OpGlobalGet, g.base).Idx(wasm.OpLocalGet, s).Op(wasm.OpI32Add).Idx(wasm.OpLocalTee, s)
	word()
	a.Mem(wasm.OpI64Store, 3, 0)
	a.Idx(wasm.OpLocalGet, s).Idx(wasm.OpLocalGet, p).Mem(wasm.OpI64Store, 3, 8)
	a.Idx(wasm.OpGlobalGet, g.pos).I32(recordSize).Op(wasm.OpI32Add).Idx(wasm.OpGlobalSet, g.pos)
	out()
	a.Op(wasm.OpEnd)
}

// recorder is the recorder's state in the program, as seen from Go.
type recorder struct {
	mem               api.Memory
	base              api.Global
	pos, next, tlimit api.MutableGlobal
}

func openRecorder(mod api.Module) (*recorder, error) {
	if mod == nil {
		return nil, errors.New("osp: the program's instance is gone")
	}
	r := &recorder{mem: mod.Memory()}
	if r.mem == nil {
		return nil, errors.New("osp: the program has no memory")
	}
	if r.base = mod.ExportedGlobal(exportPrefix + "area"); r.base == nil {
		return nil, fmt.Errorf("osp: the program exports no global %q", exportPrefix+"area")
	}
	for i, dst := range []*api.MutableGlobal{&r.pos, &r.next, &r.tlimit} {
		var ok bool
		if *dst, ok = mod.ExportedGlobal(exportPrefix + globalNames[i]).(api.MutableGlobal); !ok {
			return nil, fmt.Errorf("osp: the program exports no mutable global %q", exportPrefix+globalNames[i])
		}
	}
	return r, nil
}

// flushed returns, at a call of flush from the program mod, the
// recorder's area and its records (see area and records), opening *r on
// the first call.
func flushed(r **recorder, mod api.Module) (area, recs []byte, err error) {
	if *r == nil {
		if *r, err = openRecorder(mod); err != nil {
			return nil, nil, err
		}
	}
	if area, err = (*r).area(); err != nil {
		return nil, nil, err
	}
	recs, err = (*r).records(area)
	return area, recs, err
}

// area returns the recorder's area as the program's memory holds it now;
// it is valid until the program next runs (which may grow its memory).
func (r *recorder) area() ([]byte, error) {
	b, ok := r.mem.Read(uint32(r.base.Get()), memBytes)
	if !ok {
		return nil, fmt.Errorf("osp: the recorder's area at %d is outside the program's memory", r.base.Get())
	}
	return b, nil
}

// records returns the records in area, which the caller must copy or
// use before the program runs again, and checks the position.
func (r *recorder) records(area []byte) ([]byte, error) {
	pos := uint32(r.pos.Get())
	if pos > recordBytes || pos%recordSize != 0 {
		return nil, fmt.Errorf("osp: recorder position %d out of range", pos)
	}
	return area[:pos], nil
}

// tableOut reports whether the program has taken every entry of its
// table, and checks the table position.
func (r *recorder) tableOut(area []byte) (bool, error) {
	next, tlimit := uint32(r.next.Get()), uint32(r.tlimit.Get())
	if next < tableStart || next > tlimit || (next-tableStart)%entryBytes != 0 || tlimit > tableStart+2*tableBytes {
		return false, fmt.Errorf("osp: recorder table position %d out of range", next)
	}
	return next == tlimit || area[next+4] == 0 && area[next+5] == 0 && area[next+6] == 0 && area[next+7] == 0, nil
}

// putTable writes entries into the table of area that the program does
// not read, ending them with an empty entry when they are fewer than a
// table holds, and points the program at it.
func (r *recorder) putTable(area []byte, entries []entry) {
	base := tableStart
	if uint32(r.tlimit.Get()) == tableStart+tableBytes {
		base += tableBytes
	}
	b := area[base : base+tableBytes]
	for i, en := range entries {
		binary.LittleEndian.PutUint32(b[i*entryBytes:], en.skip)
		binary.LittleEndian.PutUint32(b[i*entryBytes+4:], en.length)
	}
	if n := len(entries) * entryBytes; n < tableBytes {
		binary.LittleEndian.PutUint64(b[n:], 0)
	}
	r.next.Set(uint64(base))
	r.tlimit.Set(uint64(base + tableBytes))
}

// records calls f with each record in b, in order.
func records(b []byte, f func(fn, start uint32, p uint64) error) error {
	for o := 0; o+recordSize <= len(b); o += recordSize {
		r := b[o : o+recordSize]
		if err := f(binary.LittleEndian.Uint32(r), binary.LittleEndian.Uint32(r[4:]), binary.LittleEndian.Uint64(r[8:])); err != nil {
			return err
		}
	}
	return nil
}
