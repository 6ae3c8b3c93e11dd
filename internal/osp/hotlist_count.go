// Counting and concise samples: how an offered subpath is counted or
// admitted with probability 1/τ, and how a length's τ is raised and its
// counts thinned when the bound is reached.

package osp

import (
	"encoding/binary"
	"math"
)

// add counts a occurrences, from one group, of the subpath blocks, whose
// fingerprint is fp and whose length is c.length: in a concise sample
// those admitted, in a counting sample all of them, of which those before
// the first that enters are not counted if the subpath has no pair.
func (h *HotList) add(c *class, fp uint64, blocks []uint32, a uint64) {
	entered := !c.counting
	var enc []byte
	for {
		if at := h.find(fp, c.length); at >= 0 {
			n := binary.LittleEndian.Uint64(h.arena[at:]) + a
			binary.LittleEndian.PutUint64(h.arena[at:], n)
			q := h.meanSquare(at)
			h.setMeanSquare(at, q+(float64(a)*float64(a)-float64(a)*q)/float64(n))
			return
		}
		if !entered {
			if a = h.enter(c, a); a == 0 {
				return
			}
			entered = true
		}
		if enc == nil {
			enc, _ = h.model.encode(h.scratch[:0], blocks, h.stack, nil)
		}
		need := headerBytes + len(enc)
		if h.fits(need) {
			break
		}
		if h.grow(need) {
			continue
		}
		v := h.victim(need)
		old := v.tau
		h.raise(v)
		// The new occurrences entered at rate 1/τ: if their length was
		// thinned, they are thinned as its pairs were.
		if v == c {
			if a = h.thin(c, a, old); a == 0 {
				return
			}
		}
	}
	at := h.used
	binary.LittleEndian.PutUint64(h.arena[at:], a)
	h.setMeanSquare(at, float64(a))
	binary.LittleEndian.PutUint64(h.arena[at+offFP:], fp)
	binary.LittleEndian.PutUint16(h.arena[at+offSize:], uint16(len(enc)))
	binary.LittleEndian.PutUint16(h.arena[at+offLength:], uint16(c.length))
	copy(h.arena[at+headerBytes:], enc)
	h.used += headerBytes + len(enc)
	h.n++
	c.pairs++
	c.bytes += headerBytes + len(enc)
	h.place(at, fp, c.length)
}

// enter returns how many of a occurrences of a subpath without a pair a
// counting sample counts: each enters with probability 1/τ, and the
// first that does is counted with every one after it.
func (h *HotList) enter(c *class, a uint64) uint64 {
	if c.tau <= 1 {
		return a
	}
	if skip := h.geometric(1 / c.tau); skip < a {
		return a - skip
	}
	return 0
}

// thin returns what is left of a count n of length c when its τ was
// raised from old to c.tau.
func (h *HotList) thin(c *class, n uint64, old float64) uint64 {
	if !c.counting {
		return h.binomial(n, old/c.tau)
	}
	if n == 0 || h.float() < old/c.tau {
		return n
	}
	// The first counted element goes, and each next one until a coin of
	// probability 1/τ' says it would have entered.
	if lost := 1 + h.geometric(1/c.tau); lost < uint64(n) {
		return n - lost
	}
	return 0
}

// geometric draws the number of failures before the first success of
// coins of probability p.
func (h *HotList) geometric(p float64) uint64 {
	if p >= 1 {
		return 0
	}
	u := 1 - h.float() // (0, 1]
	g := math.Log(u) / math.Log1p(-p)
	if g >= 1<<62 {
		return 1 << 62
	}
	return uint64(g)
}

// victim is the length to thin: the one whose pairs take the most bytes
// when the arena is what is full, the one with the most pairs when the
// table is (the longest on a tie).
func (h *HotList) victim(need int) *class {
	byPairs := h.used+need <= len(h.arena)
	size := func(c *class) int {
		if byPairs {
			return c.pairs
		}
		return c.bytes
	}
	v := &h.classes[0]
	for i := range h.classes {
		c := &h.classes[i]
		if size(c) > size(v) || (size(c) == size(v) && c.length > v.length) {
			v = c
		}
	}
	return v
}

// raise multiplies c's τ by Growth and thins its counts (thin), compacting
// the arena in place. A concise sample's pair thinned binomially has its
// sum of squares replaced by its expectation after the thinning, q²·S +
// q(1−q)·n for a count n kept with probability q each; a counting
// sample's pair loses its first elements, from groups unknown, and keeps
// the ratio S/n. Either within what the new count n' allows (n' to n'²).
func (h *HotList) raise(c *class) {
	old := c.tau
	c.tau *= Growth
	keep := old / c.tau
	c.raises++
	w := 0
	h.n = 0
	for at := 0; at < h.used; {
		size := headerBytes + int(binary.LittleEndian.Uint16(h.arena[at+offSize:]))
		n := binary.LittleEndian.Uint64(h.arena[at:])
		q := h.meanSquare(at)
		if int(binary.LittleEndian.Uint16(h.arena[at+offLength:])) == c.length {
			kept := h.thin(c, n, old)
			if kept == 0 {
				c.pairs--
				c.bytes -= size
			}
			// Squares over count: a counting sample keeps it; a
			// concise sample's expected sum after the thinning, over
			// the count kept. At least 1 and at most the count.
			if !c.counting && kept > 0 {
				q = (keep*keep*q*float64(n) + keep*(1-keep)*float64(n)) / float64(kept)
			}
			q = min(max(q, 1), float64(kept))
			n = kept
		}
		if n > 0 {
			copy(h.arena[w:], h.arena[at:at+size])
			binary.LittleEndian.PutUint64(h.arena[w:], n)
			h.setMeanSquare(w, q)
			w += size
			h.n++
		}
		at += size
	}
	h.used = w
	h.rehash()
}

// binomial draws from Binomial(n, p) exactly, in time proportional to the
// smaller of the successes and the failures, by jumping from one to the
// next with geometric gaps.
func (h *HotList) binomial(n uint64, p float64) uint64 {
	switch {
	case n == 0:
		return 0
	case n == 1: // most pairs of the long lengths, at every raise
		if h.float() < p {
			return 1
		}
		return 0
	}
	q, flip := p, false
	if q > 0.5 {
		q, flip = 1-q, true
	}
	var k uint64
	if q > 0 {
		lq := math.Log1p(-q)
		var pos uint64
		for {
			u := 1 - h.float() // (0, 1]
			pos += 1 + uint64(math.Log(u)/lq)
			if pos > uint64(n) {
				break
			}
			k++
		}
	}
	if flip {
		return n - k
	}
	return k
}
