// The hot list's storage: pairs in an arena (a header and the subpath's
// code each), found through an open-addressing table by fingerprint and
// length, both grown within the bound.

package osp

import (
	"encoding/binary"
	"math"
)

// headerBytes is the size of a pair's header in the arena: count u64,
// fingerprint u64, sum of squares over count float32, code size u16,
// length in blocks u16. A sample may hold a window of a loop at each of
// its offsets (16 times for length 2 with the defaults): in 32 bits the
// sum of squares of a hot loop's window would pass 2^32 within hours,
// and the count not much later. The sum need not be exact, but a float
// sum stops growing once it is 2^24 times what is added; its ratio to
// the count is a running mean, which stays right when an addition is
// lost. A window is looked up by its fingerprint, worked out from the
// sample's prefixes in one multiplication, so that only a subpath that
// enters is coded.
const (
	headerBytes = 24
	offFP       = 8
	offSquares  = 16
	offSize     = 20
	offLength   = 22
)

// codeBytes bounds the bytes of the code of l blocks.
func codeBytes(l int, m *blockModel) int {
	return binary.MaxVarintLen32 + (l-1)*m.stepBytes() + 1
}

func (h *HotList) fits(need int) bool {
	return h.used+need <= len(h.arena) && !h.crowded(h.n+1)
}

// crowded reports whether n pairs fill the table beyond three quarters.
func (h *HotList) crowded(n int) bool { return 4*n > 3*len(h.slots) }

// slot maps a fingerprint and length to a table index (mixed, then
// Lemire's multiply-shift, so the table's length need not be a power of
// two).
func (h *HotList) slot(fp uint64, length int) int {
	mix := (fp ^ uint64(length)<<56) * 0x9e3779b97f4a7c15 >> 32
	return int(mix * uint64(len(h.slots)) >> 32)
}

// grow enlarges whichever array is too small, if the bound allows.
func (h *HotList) grow(need int) bool {
	grew := false
	if h.used+need > len(h.arena) {
		if len(h.arena) >= h.maxArena {
			return false
		}
		a := make([]byte, min(h.maxArena, max(2*len(h.arena), h.used+need)))
		copy(a, h.arena[:h.used])
		h.arena = a
		grew = true
	}
	if h.crowded(h.n + 1) {
		if len(h.slots) >= h.maxSlots {
			return false
		}
		h.slots = make([]uint64, min(h.maxSlots, 2*len(h.slots)))
		h.rehash()
		grew = true
	}
	return grew
}

// find returns the arena offset of the pair of the given length whose
// subpath has the fingerprint fp, or -1. A slot holds the fingerprint's
// low half, so that a probe reads the arena only where that matches.
func (h *HotList) find(fp uint64, length int) int {
	tag := uint32(fp)
	for i := h.slot(fp, length); ; i++ {
		if i == len(h.slots) {
			i = 0
		}
		s := h.slots[i]
		if s == 0 {
			return -1
		}
		if uint32(s>>32) != tag {
			continue
		}
		at := int(uint32(s)) - 1
		if a := h.arena[at:]; binary.LittleEndian.Uint64(a[offFP:]) == fp && int(binary.LittleEndian.Uint16(a[offLength:])) == length {
			return at
		}
	}
}

func (h *HotList) place(at int, fp uint64, length int) {
	i := h.slot(fp, length)
	for h.slots[i] != 0 {
		if i++; i == len(h.slots) {
			i = 0
		}
	}
	h.slots[i] = uint64(uint32(fp))<<32 | uint64(at+1)
}

func (h *HotList) rehash() {
	clear(h.slots)
	for at := 0; at < h.used; {
		a := h.arena[at:]
		h.place(at, binary.LittleEndian.Uint64(a[offFP:]), int(binary.LittleEndian.Uint16(a[offLength:])))
		at += headerBytes + int(binary.LittleEndian.Uint16(a[offSize:]))
	}
}

// meanSquare is the pair at arena offset at's sum of squares over its
// count (see headerBytes).
func (h *HotList) meanSquare(at int) float64 {
	return float64(math.Float32frombits(binary.LittleEndian.Uint32(h.arena[at+offSquares:])))
}

func (h *HotList) setMeanSquare(at int, q float64) {
	binary.LittleEndian.PutUint32(h.arena[at+offSquares:], math.Float32bits(float32(q)))
}

// roundSquares is a sum of squares as a whole number, at most 2^64 − 1.
func roundSquares(f float64) uint64 {
	if f >= 1<<64 {
		return math.MaxUint64
	}
	return uint64(math.Round(f))
}
