// The block model: which blocks may follow each block of a run, so that
// the hot list codes a subpath as its choices among them.

package osp

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/instrument"
)

// blockModel says which blocks may come next after a block of a run, so
// that the hot list can store a subpath as the choices it made instead of
// block ids (unless Options.Plain): most steps are one of two or three
// successors (a bit or two) where the difference of two ids takes one to
// three bytes (the Go programs' subpaths of 64 blocks took 1.4 bytes a
// block so).
//
// The choices after block b are, in order: the blocks of its function that
// its edges lead to; where it ends with a direct call, the callee's first
// block (or, when the callee runs no block of its own, what follows the
// call); and, where it may return, the blocks that follow the call that
// entered its function, when the subpath holds that call. Anything else is
// an escape followed by the difference of the ids. The model is made from
// the module alone, like the numberings, and is not part of the hot
// list's memory.
type blockModel struct {
	// at[b] is where block b's record starts in recs: a word with the
	// number n of its choices without a return (and exitBit if it may
	// leave its function), the continuation its call returns to (an
	// index of conts, or -1), then the n choices. One array, so that a
	// step of the coder touches one place of it (the Go programs' models
	// are larger than a core's cache).
	at    []uint32
	recs  []uint32
	entry []bool // per block: it is the first block of its function
	conts []cont
	// most is the largest number of choices after a block.
	most int
}

// cont is the continuation after a call: the blocks that may follow the
// callee's return, and, when the continuation itself makes a call before
// any block starts, the continuation after that one (or -1).
type cont struct {
	next []uint32
	call int32
}

// modelFunc is what newBlockModel needs of one function.
type modelFunc struct {
	f     *instrument.Func
	block []int32 // per node: the block id, or -1
}

// newBlockModel makes the model of nBlocks blocks from the functions'
// graphs; callee returns the function a call edge's instruction calls
// directly, or -1.
func newBlockModel(nBlocks int, funcs map[uint32]modelFunc, callee func(f *instrument.Func, e *cfg.Edge) int64) *blockModel {
	m := &blockModel{
		at:    make([]uint32, nBlocks),
		entry: make([]bool, nBlocks),
	}
	type rec struct {
		next  []uint32
		exits bool
		call  int32
	}
	recs := make([]rec, nBlocks)
	for i := range recs {
		recs[i].call = -1
	}
	// first returns the first block of function fn, or -1.
	first := func(fn uint32) int32 {
		mf, ok := funcs[fn]
		if !ok {
			return -1
		}
		g := mf.f.Graph
		for _, e := range g.Blocks[cfg.Entry].Out {
			if to := g.Edges[e].To; mf.block[to] >= 0 {
				return mf.block[to]
			}
		}
		return -1
	}
	for _, mf := range funcs {
		if b := first(mf.f.Index); b >= 0 {
			m.entry[b] = true
		}
	}
	contOf := map[[2]int64]int32{}
	// succ appends the choices after node n of mf, and says whether n
	// may leave the function and which continuation its call returns to.
	var succ func(mf modelFunc, n int32, out []uint32) ([]uint32, bool, int32)
	var contAt func(mf modelFunc, n int32) int32
	succ = func(mf modelFunc, n int32, out []uint32) ([]uint32, bool, int32) {
		g := mf.f.Graph
		exits, call := false, int32(-1)
		add := func(b int32) {
			if b >= 0 && !slices.Contains(out, uint32(b)) {
				out = append(out, uint32(b))
			}
		}
		for _, ei := range g.Blocks[n].Out {
			e := &g.Edges[ei]
			switch {
			case e.To == cfg.Exit:
				exits = true
			case e.Kind == cfg.EdgeCall:
				call = contAt(mf, e.To)
				if t := callee(mf.f, e); t >= 0 {
					if b := first(uint32(t)); b >= 0 {
						add(b)
						continue
					}
				}
				// An import, an indirect call or a callee without
				// blocks: the caller may go on at once.
				var more []uint32
				more, _, _ = succ(mf, e.To, nil)
				for _, b := range more {
					add(int32(b))
				}
			case mf.block[e.To] >= 0:
				add(mf.block[e.To])
			}
		}
		return out, exits, call
	}
	contAt = func(mf modelFunc, n int32) int32 {
		key := [2]int64{int64(mf.f.Index), int64(n)}
		if i, ok := contOf[key]; ok {
			return i
		}
		i := int32(len(m.conts))
		contOf[key] = i
		m.conts = append(m.conts, cont{call: -1})
		next, _, call := succ(mf, n, nil)
		m.conts[i] = cont{next: next, call: call}
		return i
	}
	for _, mf := range funcs {
		for n, b := range mf.block {
			if b < 0 || mf.f.Graph.Blocks[n].Same != 0 {
				// A copy of a dispatch header has one of the header's
				// successors: the header's own record holds them all.
				continue
			}
			r := &recs[b]
			r.next, r.exits, r.call = succ(mf, int32(n), nil)
			m.most = max(m.most, len(r.next))
		}
	}
	for b, r := range recs {
		m.at[b] = uint32(len(m.recs))
		w := uint32(len(r.next))
		if r.exits {
			w |= exitBit
		}
		m.recs = append(m.recs, w, uint32(r.call))
		m.recs = append(m.recs, r.next...)
	}
	most := 0
	for _, c := range m.conts {
		most = max(most, len(c.next))
	}
	m.most += most
	return m
}

// stepBytes bounds the bytes a step's code takes: the choice or the
// escape, and after the escape a difference of two ids.
func (m *blockModel) stepBytes() int {
	k := 0
	if m != nil {
		k = m.most
	}
	return (int(bitsFor(k+1))+7)/8 + binary.MaxVarintLen32
}

// exitBit marks, in a block's record, a block that may leave its
// function.
const exitBit = 1 << 31

// block returns block b's choices without a return, whether it may leave
// its function, and the continuation its call returns to (or -1); ok is
// false for a block the model does not know.
func (m *blockModel) block(b uint32) (next []uint32, exits bool, call int32, ok bool) {
	if m == nil || int(b) >= len(m.at) {
		return nil, false, -1, false
	}
	a := m.at[b]
	w := m.recs[a]
	n := w &^ exitBit
	return m.recs[a+2 : a+2+n], w&exitBit != 0, int32(m.recs[a+1]), true
}

// choices returns the choices after block prev with the frames of calls
// the subpath entered: those without a return, and the return's.
func (m *blockModel) choices(prev uint32, stack []int32) (next, ret []uint32) {
	next, exits, _, _ := m.block(prev)
	if exits && len(stack) > 0 {
		ret = m.conts[stack[len(stack)-1]].next
	}
	return next, ret
}

// step updates the frames after the step prev → x; intra says that x was
// one of the choices without a return. A step out of a block that may
// return, to elsewhere, is a return: the innermost frame goes (what
// follows it is the caller's). A step from a call to a function's first
// block enters a frame.
func (m *blockModel) step(stack []int32, prev, x uint32, intra bool) []int32 {
	_, exits, call, ok := m.block(prev)
	if !ok || int(x) >= len(m.entry) {
		return stack
	}
	if exits && !intra && len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if k := m.conts[c].call; k >= 0 && m.entry[x] {
			stack = append(stack, k)
		}
		return stack
	}
	if call >= 0 && m.entry[x] && !intra {
		stack = append(stack, call)
	}
	return stack
}

// bitsFor is the number of bits that tell n things apart.
func bitsFor(n int) uint {
	if n <= 1 {
		return 0
	}
	return uint(bits.Len(uint(n - 1)))
}

// encode appends the code of blocks: the first id as a varint, then for
// every step the index of the next block among the choices (in as few
// bits as tell them and an escape apart), the escape followed by the
// zigzag-coded difference of the ids as a varint. Bits go in from the low
// end of each byte; the last byte is padded with zeros. stack is scratch.
// To marks it appends, for each block, the bits of the code up to it.
// (It is choices and step written out: the worker codes some 120 steps a
// sample.)
func (m *blockModel) encode(b []byte, blocks []uint32, stack []int32, marks []int32) ([]byte, []int32) {
	base := len(b)
	// The bits go through locals: a writer's fields would be stored and
	// loaded again at every step (it cost half the time).
	out, acc, n := putVarint(b, 0, 0, uint64(blocks[0]))
	if marks != nil {
		marks = append(marks, int32(8*(len(out)-base)+int(n)))
	}
	stack = stack[:0]
	var nb int
	if m != nil {
		nb = len(m.at)
	}
	for i := 1; i < len(blocks); i++ {
		prev, x := blocks[i-1], blocks[i]
		var next, ret []uint32
		exits, call := false, int32(-1)
		if int(prev) < nb {
			a := m.at[prev]
			h := m.recs[a]
			next, exits, call = m.recs[a+2:a+2+h&^exitBit], h&exitBit != 0, int32(m.recs[a+1])
			if exits && len(stack) > 0 {
				ret = m.conts[stack[len(stack)-1]].next
			}
		}
		k := len(next) + len(ret)
		sym := k
		for j := len(ret) - 1; j >= 0; j-- {
			if ret[j] == x {
				sym = len(next) + j
			}
		}
		for j := len(next) - 1; j >= 0; j-- {
			if next[j] == x {
				sym = j
			}
		}
		intra := sym < len(next)
		acc |= uint64(sym) << n
		if n += bitsFor(k + 1); n >= 32 {
			out = binary.LittleEndian.AppendUint32(out, uint32(acc))
			acc >>= 32
			n -= 32
		}
		if sym == k {
			d := int64(x) - int64(prev)
			out, acc, n = putVarint(out, acc, n, uint64(d<<1)^uint64(d>>63))
		}
		if marks != nil {
			marks = append(marks, int32(8*(len(out)-base)+int(n)))
		}
		if intra || int(x) >= nb || int(prev) >= nb {
			continue
		}
		// m.step
		switch {
		case exits && len(stack) > 0:
			c := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if k := m.conts[c].call; k >= 0 && m.entry[x] {
				stack = append(stack, k)
			}
		case call >= 0 && m.entry[x]:
			stack = append(stack, call)
		}
	}
	for ; n > 0; n = max(n, 8) - 8 {
		out = append(out, byte(acc))
		acc >>= 8
	}
	return out, marks
}

// putVarint writes z after the n < 32 bits in acc, in groups of seven
// bits, each with a bit that says whether another follows, and returns
// the bytes, the bits and their number.
func putVarint(out []byte, acc uint64, n uint, z uint64) ([]byte, uint64, uint) {
	for {
		g := z & 0x7f
		if z >= 0x80 {
			g |= 0x80
		}
		acc |= g << n
		if n += 8; n >= 32 {
			out = binary.LittleEndian.AppendUint32(out, uint32(acc))
			acc >>= 32
			n -= 32
		}
		if z < 0x80 {
			return out, acc, n
		}
		z >>= 7
	}
}

// decode appends the n blocks of code to out.
func (m *blockModel) decode(out []uint32, code []byte, n int) []uint32 {
	r := bitReader{b: code}
	prev := uint32(r.varint())
	out = append(out, prev)
	var stack []int32
	for i := 1; i < n; i++ {
		next, ret := m.choices(prev, stack)
		k := len(next) + len(ret)
		sym := int(r.bits(bitsFor(k + 1)))
		var x uint32
		switch {
		case sym < len(next):
			x = next[sym]
		case sym < k:
			x = ret[sym-len(next)]
		default:
			z := r.varint()
			x = uint32(int64(prev) + (int64(z>>1) ^ -int64(z&1)))
		}
		stack = m.step(stack, prev, x, sym < len(next))
		out = append(out, x)
		prev = x
	}
	return out
}

// bitReader reads what a bitWriter wrote; past the end it reads zeros.
type bitReader struct {
	b   []byte
	acc uint64
	n   uint
}

func (r *bitReader) bits(n uint) uint64 {
	var v uint64
	var got uint
	for got < n {
		if r.n == 0 {
			if len(r.b) >= 8 {
				r.acc, r.n = binary.LittleEndian.Uint64(r.b), 64
				r.b = r.b[8:]
			} else if len(r.b) > 0 {
				r.acc, r.n = uint64(r.b[0]), 8
				r.b = r.b[1:]
			} else {
				r.acc, r.n = 0, 64
			}
		}
		k := min(n-got, r.n)
		v |= (r.acc & (1<<k - 1)) << got
		if k == 64 {
			r.acc = 0
		} else {
			r.acc >>= k
		}
		r.n -= k
		got += k
	}
	return v
}

func (r *bitReader) varint() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		g := r.bits(8)
		v |= (g & 0x7f) << shift
		if g < 0x80 || shift > 63 {
			return v
		}
	}
}
