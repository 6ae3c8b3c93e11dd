package counters

// This file reads the counts of a program that is still running.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero/api"
)

// LiveReader reads the counts of a running program, again and again if
// need be (a snapshot every so often), keeping its copies of the counter
// area from one read to the next: a read then allocates the counts, not
// the area twice over. The zero value is ready to use.
type LiveReader struct {
	bufA, bufB []byte
}

// Read reads the counts from the instances of a run whose program is
// still running (runner.Live hands them over). The program is not
// stopped, so the read races with its counts by design; what it returns
// is a lower bound of the counts at the moment of the read, never a
// count the program had not reached:
//
//   - a dense counter is an aligned 8-byte word, read whole;
//   - the area is copied twice, and kept only if its address and the
//     hash table's header are the same in both (the program did not grow
//     its memory or the table in between, which moves them); else the
//     copies are retried;
//   - each path's count is the smaller of the two copies', and a path
//     only one copy holds is left out: a hash entry the program was
//     filling in as it was copied (key, path, count, stored in that
//     order) then adds no path and no count of its own.
func (r *LiveReader) Read(mods map[string]api.Module) (Counts, error) {
	var err error
	for range 20 {
		var a, b area
		if a, err = copyArea(mods, r.bufA); err != nil {
			continue
		}
		r.bufA = a.mem
		if b, err = copyArea(mods, r.bufB); err != nil {
			continue
		}
		r.bufB = b.mem
		if !a.sameLayout(b) {
			err = errors.New("the counter area moved while it was read")
			continue
		}
		var ca, cb Counts
		if ca, err = Read(a.mem); err != nil {
			continue
		}
		if cb, err = Read(b.mem); err != nil {
			continue
		}
		return lower(ca, cb), nil
	}
	return nil, err
}

// area is a copy of a counter area and the address it was copied from.
type area struct {
	base uint32
	mem  []byte
}

// copyArea copies the counter area out of the program's memory or the
// counter module's, into buf if it is large enough.
func copyArea(mods map[string]api.Module, buf []byte) (area, error) {
	var mem api.Memory
	baseOf := func() uint32 { return 0 }
	if prog := mods[""]; prog != nil && prog.ExportedGlobal(BaseExport) != nil {
		g := prog.ExportedGlobal(BaseExport)
		mem, baseOf = prog.Memory(), func() uint32 { return uint32(g.Get()) }
	} else if inst := mods[ModuleName]; inst != nil {
		mem = inst.Memory()
	}
	if mem == nil {
		return area{}, errors.New("no counter memory to read")
	}
	base, size := baseOf(), mem.Size()
	if base > size {
		return area{}, fmt.Errorf("the counter area at %d is outside the memory", base)
	}
	b, ok := mem.Read(base, size-base)
	if !ok {
		return area{}, errors.New("cannot read the counter area")
	}
	a := area{base: base, mem: append(buf[:0], b...)}
	if baseOf() != base {
		return area{}, errors.New("the counter area moved while it was read")
	}
	return a, nil
}

// sameLayout reports whether two copies of an area were taken at the same
// address with the same header and hash table header.
func (a area) sameLayout(b area) bool {
	if a.base != b.base || len(a.mem) < 16 || len(b.mem) < 16 || !bytes.Equal(a.mem[:16], b.mem[:16]) {
		return false
	}
	h := uint64(binary.LittleEndian.Uint32(a.mem[12:]))
	if h+16 > uint64(min(len(a.mem), len(b.mem))) {
		return false
	}
	// The table's capacity and address; the number of entries used
	// changes with every new path.
	return bytes.Equal(a.mem[h:h+4], b.mem[h:h+4]) && bytes.Equal(a.mem[h+8:h+12], b.mem[h+8:h+12]) &&
		a.tableWhole() && b.tableWhole()
}

// tableWhole reports whether the copy's hash table holds no more entries
// than its header says are used, give or take the one being inserted. The
// table's growth stores the new capacity before the new address: a copy
// taken in between sees the old table with the new capacity, which runs
// on into the new table and would count its entries twice.
func (a area) tableWhole() bool {
	h := uint64(binary.LittleEndian.Uint32(a.mem[12:]))
	capSlots := uint64(binary.LittleEndian.Uint32(a.mem[h:]))
	used := uint64(binary.LittleEndian.Uint32(a.mem[h+4:]))
	tbase := uint64(binary.LittleEndian.Uint32(a.mem[h+8:]))
	if tbase+capSlots*entrySize > uint64(len(a.mem)) {
		return false
	}
	n := uint64(0)
	for i := range capSlots {
		if binary.LittleEndian.Uint32(a.mem[tbase+i*entrySize:]) != 0 {
			n++
		}
	}
	return n <= used+1
}

// lower is the counts a and b both hold, each the smaller of the two.
func lower(a, b Counts) Counts {
	out := Counts{}
	for f, pa := range a {
		pb := b[f]
		for p, ca := range pa {
			cb, ok := pb[p]
			if !ok {
				continue
			}
			if out[f] == nil {
				out[f] = map[uint64]uint64{}
			}
			out[f][p] = min(ca, cb)
		}
	}
	return out
}
