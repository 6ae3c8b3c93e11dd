package counters

// This file adds up the counts made between pairs of points of a run
// (a region of interest's openings and closings) without turning the
// whole counter memory into Counts at each point.

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Delta sums, over intervals of a run, the counts made in each: Open at
// an interval's start, Close at its end, each with the counter memory
// (Area) as it stands. An interval costs a copy of the memory's dense
// part and hash table at Open and a pass over them at Close, not a Read.
type Delta struct {
	// start is the memory up to the hash header's end, then the hash
	// table, at Open.
	start []byte
	// denseEnd is the end of the dense part (the hash header's offset),
	// tbase and tcap the hash table's base and capacity, at Open.
	denseEnd, tbase, tcap uint64
	// dense sums the dense part's words; hashed the hash entries'
	// counts by (function, path).
	dense  []uint64
	hashed map[[2]uint64]uint64
	// slow sums the intervals whose hash table moved (grew) between
	// Open and Close, read whole.
	slow Counts
	open bool
}

// header reads the layout of area: the hash header's offset and the
// table's base and capacity.
func header(area []byte) (h, tbase, tcap uint64, err error) {
	if len(area) < 16 || binary.LittleEndian.Uint32(area) != magic {
		return 0, 0, 0, fmt.Errorf("counter memory: bad header")
	}
	h = uint64(binary.LittleEndian.Uint32(area[12:]))
	if h+16 > uint64(len(area)) {
		return 0, 0, 0, fmt.Errorf("counter memory: truncated")
	}
	tcap = uint64(binary.LittleEndian.Uint32(area[h:]))
	tbase = uint64(binary.LittleEndian.Uint32(area[h+8:]))
	if tbase+tcap*entrySize > uint64(len(area)) {
		return 0, 0, 0, fmt.Errorf("counter memory: hash table out of bounds")
	}
	return h, tbase, tcap, nil
}

// Open starts an interval at the counts in area.
func (d *Delta) Open(area []byte) error {
	h, tbase, tcap, err := header(area)
	if err != nil {
		return err
	}
	d.denseEnd, d.tbase, d.tcap = h, tbase, tcap
	d.start = append(append(d.start[:0], area[:h+16]...), area[tbase:tbase+tcap*entrySize]...)
	d.open = true
	return nil
}

// Close ends the interval at the counts in area and adds what was
// counted in it.
func (d *Delta) Close(area []byte) error {
	if !d.open {
		return nil
	}
	d.open = false
	h, tbase, tcap, err := header(area)
	if err != nil {
		return err
	}
	if h != d.denseEnd || tbase != d.tbase || tcap != d.tcap {
		// The table grew: its entries moved. Read both whole.
		return d.closeSlow(area)
	}
	if d.dense == nil {
		d.dense = make([]uint64, h/8)
	}
	// Most of the dense part is paths that did not run in the interval:
	// chunks that did not change are skipped at the speed of a compare.
	const chunk = 256
	for c := uint64(0); c < h; c += chunk {
		end := min(c+chunk, h)
		if bytes.Equal(area[c:end], d.start[c:end]) {
			continue
		}
		for i := c; i+8 <= end; i += 8 {
			d.dense[i/8] += binary.LittleEndian.Uint64(area[i:]) - binary.LittleEndian.Uint64(d.start[i:])
		}
	}
	old := d.start[h+16:]
	for i := uint64(0); i < tcap; i++ {
		e, o := area[tbase+i*entrySize:], old[i*entrySize:]
		key := binary.LittleEndian.Uint32(e)
		if key == 0 {
			continue
		}
		n := binary.LittleEndian.Uint64(e[16:])
		if binary.LittleEndian.Uint32(o) == key {
			n -= binary.LittleEndian.Uint64(o[16:])
		}
		if n != 0 {
			if d.hashed == nil {
				d.hashed = map[[2]uint64]uint64{}
			}
			d.hashed[[2]uint64{uint64(key - 1), binary.LittleEndian.Uint64(e[8:])}] += n
		}
	}
	return nil
}

// closeSlow ends an interval whose hash table moved.
func (d *Delta) closeSlow(area []byte) error {
	now, err := Read(area)
	if err != nil {
		return err
	}
	// The copy at Open holds the table right after the hash header:
	// point the header at it, and Read understands the copy.
	mem := append([]byte(nil), d.start...)
	binary.LittleEndian.PutUint32(mem[d.denseEnd+8:], uint32(d.denseEnd+16))
	before, err := Read(mem)
	if err != nil {
		return err
	}
	if d.slow == nil {
		d.slow = Counts{}
	}
	for f, ids := range now {
		for id, n := range ids {
			if c := n - before[f][id]; c != 0 {
				if d.slow[f] == nil {
					d.slow[f] = map[uint64]uint64{}
				}
				d.slow[f][id] += c
			}
		}
	}
	return nil
}

// Counts returns the sum of the closed intervals' counts, and of the open
// one's up to area (nil: leave it out) without closing it.
func (d *Delta) Counts(area []byte) (Counts, error) {
	acc := *d
	acc.dense = append([]uint64(nil), d.dense...)
	acc.hashed = map[[2]uint64]uint64{}
	for k, v := range d.hashed {
		acc.hashed[k] = v
	}
	acc.slow = Counts{}
	for f, ids := range d.slow {
		acc.slow[f] = map[uint64]uint64{}
		for id, n := range ids {
			acc.slow[f][id] = n
		}
	}
	if area != nil && d.open {
		acc.start = append([]byte(nil), d.start...)
		if err := acc.Close(area); err != nil {
			return nil, err
		}
	}
	return acc.counts()
}

// counts turns the sums into Counts, by the layout of the copy at Open
// (dense descriptors do not move).
func (d *Delta) counts() (Counts, error) {
	out := Counts{}
	add := func(f uint32, p, c uint64) {
		if c == 0 {
			return
		}
		if out[f] == nil {
			out[f] = map[uint64]uint64{}
		}
		out[f][p] += c
	}
	if d.dense != nil {
		ds, err := denseArrays(d.start[:d.denseEnd], uint64(binary.LittleEndian.Uint32(d.start[8:])))
		if err != nil {
			return nil, err
		}
		for _, a := range ds {
			for p := uint64(0); p < a.paths; p++ {
				add(a.f, p, d.dense[a.base/8+p])
			}
		}
	}
	for k, c := range d.hashed {
		add(uint32(k[0]), k[1], c)
	}
	for f, ids := range d.slow {
		for p, c := range ids {
			add(f, p, c)
		}
	}
	return out, nil
}
