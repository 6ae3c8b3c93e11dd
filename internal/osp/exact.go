// Exact: every subpath of the sampled lengths counted in a traced run,
// keyed by a hash of its blocks' file offsets, the yardstick of scores.

package osp

import (
	"math/bits"
	"sync"
)

// Subpaths are compared between the sampled profile and the exact counts
// by a polynomial hash of their blocks' file offsets modulo the Mersenne
// prime 2^61-1. Over a prime field two different sequences of n blocks
// give the same hash for at most n-1 of the 2^61-1 bases, so for a base
// picked without regard to the programs (the constant below) two given
// subpaths of at most 64 blocks share a key with probability below 2^-55,
// and a run with ten million distinct subpaths of one length has a
// collision somewhere with probability below 0.2%. A collision merges two
// subpaths' exact counts; it cannot lose one.
const (
	hashMod  = 1<<61 - 1
	hashBase = 0x0b3c5e1f27d49a61 % hashMod
)

func mulMod(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	r := (lo & hashMod) + (lo >> 61) + (hi << 3)
	r = (r & hashMod) + (r >> 61)
	if r >= hashMod {
		r -= hashMod
	}
	return r
}

func addMod(a, b uint64) uint64 {
	r := a + b
	if r >= hashMod {
		r -= hashMod
	}
	return r
}

// HashOffsets returns the key of a subpath given by its blocks' file
// offsets: Σ (offset_i + 1)·B^(n-1-i) mod 2^61-1.
func HashOffsets(offsets []int) uint64 {
	var h uint64
	for _, o := range offsets {
		h = hashStep(h, o)
	}
	return h
}

// hashStep extends the key h of a subpath by a block at offset o.
func hashStep(h uint64, o int) uint64 { return addMod(mulMod(h, hashBase), uint64(o)+1) }

// windowKey is the key of the window between two prefix hashes, hi of the
// longer prefix and lo of the one l blocks shorter, pow = B^l.
func windowKey(hi, lo, pow uint64) uint64 {
	w := hi + hashMod - mulMod(lo, pow)
	if w >= hashMod {
		w -= hashMod
	}
	return w
}

// Exact counts every subpath of the given lengths in a stream of block
// entries: every window of the stream, so overlapping occurrences all
// count. Its memory grows with the number of distinct subpaths (32 to 64
// bytes each); it is the slow reference the samples are scored against, not a
// profiler.
type Exact struct {
	Lengths []int
	// Tables holds per length (in the order of Lengths) the number of
	// occurrences of each subpath, by HashOffsets key.
	Tables []*Table
	// Blocks is the number of block entries seen.
	Blocks uint64

	offsets []int // file offset per block id
	maxLen  int
	hist    []uint64 // prefix hashes: hist[maxLen-d] is the hash of all but the last d blocks seen
	prefix  []uint64 // scratch: hist followed by the prefix hashes of a batch
	pow     []uint64 // B^L mod p per length
}

// NewExact returns a counter for subpaths of the given lengths, for block
// ids whose file offsets are offsets.
func NewExact(lengths []int, offsets []int) *Exact {
	e := &Exact{Lengths: lengths, offsets: offsets}
	for _, l := range lengths {
		e.maxLen = max(e.maxLen, l)
		e.pow = append(e.pow, powMod(l))
		e.Tables = append(e.Tables, newTable())
	}
	e.hist = make([]uint64, e.maxLen+1)
	return e
}

// Push counts the windows that end at each of the blocks. The lengths
// are counted in parallel.
func (e *Exact) Push(ids []uint32) {
	n := len(ids)
	e.prefix = append(append(e.prefix[:0], e.hist...), make([]uint64, n)...)
	pre := e.prefix
	h := pre[e.maxLen]
	for j, id := range ids {
		h = hashStep(h, e.offsets[id])
		pre[e.maxLen+1+j] = h
	}
	base := e.Blocks
	var wg sync.WaitGroup
	for i, l := range e.Lengths {
		wg.Add(1)
		go func(t *Table, l int, pow uint64) {
			defer wg.Done()
			// The window ending at block base+j (1-based) starts after
			// block base+j-l: it exists once base+j >= l.
			first := 1
			if base < uint64(l) {
				first = l - int(base)
			}
			for j := first; j <= n; j++ {
				t.add(windowKey(pre[e.maxLen+j], pre[e.maxLen+j-l], pow))
			}
		}(e.Tables[i], l, e.pow[i])
	}
	wg.Wait()
	copy(e.hist, pre[len(pre)-len(e.hist):])
	e.Blocks += uint64(n)
}

// Table counts keys below 2^61-1 in an open-addressing table: the keys
// are hashes already, so their low bits place them.
type Table struct {
	keys   []uint64 // key+1, 0 for an empty slot
	counts []uint64
	n      int
	// Total is the sum of the counts.
	Total uint64
}

func newTable() *Table {
	return &Table{keys: make([]uint64, 1024), counts: make([]uint64, 1024)}
}

func (t *Table) add(k uint64) {
	t.Total++
	if 2*(t.n+1) > len(t.keys) {
		t.resize()
	}
	mask := uint64(len(t.keys) - 1)
	k++
	for i := k & mask; ; i = (i + 1) & mask {
		switch t.keys[i] {
		case k:
			t.counts[i]++
			return
		case 0:
			t.keys[i], t.counts[i] = k, 1
			t.n++
			return
		}
	}
}

func (t *Table) resize() {
	keys, counts := t.keys, t.counts
	t.keys = make([]uint64, 2*len(keys))
	t.counts = make([]uint64, 2*len(keys))
	mask := uint64(len(t.keys) - 1)
	for j, k := range keys {
		if k == 0 {
			continue
		}
		i := k & mask
		for t.keys[i] != 0 {
			i = (i + 1) & mask
		}
		t.keys[i], t.counts[i] = k, counts[j]
	}
}

// Get returns the count of key k.
func (t *Table) Get(k uint64) uint64 {
	mask := uint64(len(t.keys) - 1)
	k++
	for i := k & mask; ; i = (i + 1) & mask {
		switch t.keys[i] {
		case k:
			return t.counts[i]
		case 0:
			return 0
		}
	}
}

// Len is the number of distinct keys.
func (t *Table) Len() int { return t.n }

// All yields every key with its count.
func (t *Table) All(yield func(k, count uint64) bool) {
	for i, k := range t.keys {
		if k != 0 && !yield(k-1, t.counts[i]) {
			return
		}
	}
}
