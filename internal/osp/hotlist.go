package osp

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"unsafe"
)

// HotList holds counting samples or concise samples (Gibbons and Matias,
// SIGMOD 1998) of streams of subpaths, one stream per subpath length,
// together in a fixed number of bytes.
//
// Each length's sample is kept as ⟨subpath, count⟩ pairs under a
// threshold τ, so a hot subpath costs its bytes once however often it is
// sampled. In a concise sample each element of the stream enters with
// probability 1/τ and is counted. In a counting sample (the default) an
// element whose subpath has no pair enters with probability 1/τ, and once
// a subpath has its pair every later element of it is counted: a hot
// subpath's count is then exact but for the elements before it entered,
// τ − 1 on average, where a concise sample's count keeps only one element
// in τ. Elements arrive in groups (the windows of one recorded sample,
// which may repeat a subpath), and each pair also keeps the sum over
// groups of the square of its count in the group, which is what the
// variance of the stream's own count is estimated from. Every τ starts at
// 1 (everything enters and is counted). When a new pair finds no room,
// the length whose pairs take the most bytes has its τ raised to τ' =
// Growth·τ and its pairs thinned so that they are what a sample at τ'
// would hold: in a concise sample each counted element stays with
// probability τ/τ' (the count is thinned binomially); in a counting
// sample a pair keeps its count with probability τ/τ', and otherwise
// loses its first element and then each next one until a coin of
// probability 1/τ' falls heads, as if it had entered later (Gibbons and
// Matias). Pairs left at zero are dropped. Estimate turns a pair into
// the number of elements of its subpath the stream held.
//
// Lengths have a τ each because their streams differ: short subpaths are
// few and repeat, so their samples stay exact (τ = 1) in little memory,
// while long ones are diverse and take the thinning.
//
// The bytes are those of the arrays that HotList allocates itself, with
// capacities it chooses: a byte arena holding the pairs (a 24-byte header
// and the subpath's code: varint differences of the block ids, mostly a
// byte a block, or with a model of the program's blocks the choice made
// at each step, mostly a bit or two), an open-addressing table of 8-byte
// slots (part of a pair's fingerprint and its arena offset), scratch for
// one sample (its prefix fingerprints, a small table of its distinct
// windows of one length, one window's code and the coder's stack) and
// the per-length state; plus the HotList struct. Bytes counts their
// capacities, and they never grow past the bound given to NewHotList.
type HotList struct {
	rng     rand.PCG
	classes []class
	byLen   []int // indices of classes, shortest length first

	slots   []uint64 // a pair's fingerprint's low half << 32 | its arena offset + 1, or 0
	arena   []byte
	used    int // bytes of arena in use
	n       int // pairs
	scratch []byte
	stack   []int32 // the coder's frames
	// AddSample's: the fingerprints of a sample's prefixes, and a table
	// of the distinct windows of one length of it (entries with n = 0
	// are free), in the order they came.
	pre      []uint64
	local    []localWindow
	distinct []int32
	maxLen   int
	model    *blockModel

	maxSlots, maxArena int
}

// class is the state of one length's sample.
type class struct {
	length int
	tau    float64
	// counting is true for a counting sample, false for a concise one.
	counting bool
	bytes    int // arena bytes its pairs take
	pairs    int
	raises   int
	offered  uint64
	pow      uint64 // fpBase^length, for fingerprints of windows
}

// localWindow is one distinct window of one length of a sample: its
// fingerprint, where it first starts, and how often the sample holds it.
type localWindow struct {
	fp    uint64
	first int32
	n     uint32
}

// Growth is the factor by which a length's τ is raised.
const Growth = 1.25

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

// Kind is the kind of sample a HotList keeps.
type Kind int

const (
	// Counting samples count every element of a subpath once it has
	// entered.
	Counting Kind = iota
	// Concise samples count the elements that entered, each with
	// probability 1/τ.
	Concise
)

func (k Kind) String() string {
	if k == Concise {
		return "concise"
	}
	return "counting"
}

// NewHotList returns empty samples of the given kind for subpaths of the
// given lengths that never hold more than bound bytes. seed fixes the
// coin flips.
func NewHotList(bound int, lengths []int, seed uint64, kind Kind) (*HotList, error) {
	return newHotList(bound, lengths, seed, nil, kind)
}

// newHotList is NewHotList with the subpaths coded by the model m (nil:
// as differences of block ids).
func newHotList(bound int, lengths []int, seed uint64, m *blockModel, kind Kind) (*HotList, error) {
	if err := checkLengths(lengths); err != nil {
		return nil, err
	}
	maxLen := slices.Max(lengths)
	h := &HotList{rng: *rand.NewPCG(seed, 0x6f7370686f746c69), maxLen: maxLen, model: m}
	h.classes = make([]class, len(lengths))
	for i, l := range lengths {
		h.classes[i] = class{length: l, tau: 1, counting: kind == Counting, pow: fpPow(l)}
		h.byLen = append(h.byLen, i)
	}
	slices.SortFunc(h.byLen, func(a, b int) int { return lengths[a] - lengths[b] })
	h.scratch = make([]byte, 0, codeBytes(maxLen, m))
	h.stack = make([]int32, 0, maxLen)
	h.pre = make([]uint64, h.maxLen+1)
	// At most half full, so that a window's probe is short.
	h.local = make([]localWindow, 1<<bits.Len(uint(2*h.maxLen-1)))
	h.distinct = make([]int32, 0, h.maxLen)
	avail := bound - h.Bytes()
	// A fifth of the rest for the table, filled to three quarters at
	// most, and the rest for the pairs, whose headers alone take 24
	// bytes for the table's 8 (a quarter with the block model, whose
	// codes are shorter): so that both fill at about the same number of
	// pairs.
	share := 5
	if m != nil {
		share = 4
	}
	h.maxSlots = max(16, avail/share/8)
	h.maxArena = min(avail-8*h.maxSlots, math.MaxUint32-1)
	if worst := headerBytes + codeBytes(maxLen, m); h.maxArena < 2*len(lengths)*worst {
		return nil, fmt.Errorf("a memory bound of %d bytes is too small for %d lengths up to %d blocks (want at least %d)",
			bound, len(lengths), maxLen, bound-h.maxArena+2*len(lengths)*worst)
	}
	h.slots = make([]uint64, 16)
	h.arena = make([]byte, min(1024, h.maxArena))
	return h, nil
}

// Bytes is the memory the samples hold: the capacities of their arrays
// and the struct. It only grows, so it is also the peak (not counting,
// while an array grows, the old copy that the garbage collector then
// frees).
func (h *HotList) Bytes() int {
	return int(unsafe.Sizeof(*h)) + 8*cap(h.slots) + cap(h.arena) + cap(h.scratch) + 4*cap(h.stack) +
		8*cap(h.pre) + cap(h.local)*int(unsafe.Sizeof(localWindow{})) + 4*cap(h.distinct) +
		cap(h.classes)*int(unsafe.Sizeof(class{})) + 8*cap(h.byLen)
}

// Len is the number of distinct subpaths held.
func (h *HotList) Len() int { return h.n }

// LengthState is one length's sample state.
type LengthState struct {
	Length int
	Tau    float64
	// Counting is true for a counting sample (see Kind).
	Counting bool
	Pairs    int
	Bytes    int
	Raises   int
	Offered  uint64
}

// Lengths returns the state of each length's sample, in the order of the
// lengths given to NewHotList.
func (h *HotList) Lengths() []LengthState {
	out := make([]LengthState, len(h.classes))
	for i, c := range h.classes {
		out[i] = LengthState{Length: c.length, Tau: c.tau, Counting: c.counting, Pairs: c.pairs, Bytes: c.bytes, Raises: c.raises, Offered: c.offered}
	}
	return out
}

// Estimate returns how many elements of a pair's subpath its length's
// stream held, as the sample estimates it, and the variance of that
// estimate; st is the state of the pair's length.
//
// A concise sample's count times τ is unbiased, and so is a counting
// sample's count plus τ − 1: the elements before the first that entered
// are geometric, and summing over where it entered gives exactly the
// number of elements (and 0 where none entered). The variance adds what
// the thinning leaves uncertain (for a counting sample the elements
// before it entered, τ(τ − 1) at most) to that of the stream's own count,
// estimated from the groups as Σ k², the groups being rare and nearly
// independent; for a counting sample Σ k² covers only the counted
// elements, and is scaled up to the estimate.
func Estimate(p Pair, st LengthState) (estimate, variance float64) {
	n, sq, tau := float64(p.Count), float64(p.Squares), st.Tau
	if !st.Counting {
		return n * tau, sq * tau * tau
	}
	if n == 0 {
		return 0, 0
	}
	estimate = n + tau - 1
	return estimate, sq*estimate/n + tau*(tau-1)
}

func (h *HotList) float() float64 {
	return float64(h.rng.Uint64()>>11) / (1 << 53)
}

func (h *HotList) class(length int) *class {
	for i := range h.classes {
		if h.classes[i].length == length {
			return &h.classes[i]
		}
	}
	return nil
}

// Add offers one occurrence of the subpath blocks, whose length must be
// one of those given to NewHotList: a group of one.
func (h *HotList) Add(blocks []uint32) {
	c := h.class(len(blocks))
	if c == nil {
		panic(fmt.Sprintf("osp: a subpath of length %d offered to a hot list without that length", len(blocks)))
	}
	c.offered++
	if !c.counting && c.tau > 1 && h.float()*c.tau >= 1 {
		return
	}
	h.add(c, fingerprint(blocks), blocks, 1)
}

// SampleBlocks is the number of blocks a sample records for subpaths of
// the given lengths: the longest.
func SampleBlocks(lengths []int) int { return slices.Max(lengths) }

// WindowStride is how far apart AddSample takes the windows of the
// lengths of at most half the sample.
const WindowStride = 4

// Stride is how far apart AddSample takes the subpaths of length l from a
// sample of m blocks: WindowStride where l is at most m/2, l (windows
// that do not overlap) for longer ones.
func Stride(m, l int) int {
	if 2*l <= m {
		return WindowStride
	}
	return l
}

// Windows is the number of subpaths of length l that AddSample takes from
// a sample of m blocks: those starting at 0, s, 2s, ... (s = Stride(m,
// l)) that fit.
func Windows(m, l int) int {
	if m < l {
		return 0
	}
	return (m-l)/Stride(m, l) + 1
}

// AddSample offers the windows of one sample, for each length L of the
// hot list, as one group per length: the subpaths blocks[k:k+L] for k =
// 0, s, 2s, ..., s = Stride(len(blocks), L). Only the first SampleBlocks
// blocks count.
//
// A sample's start is a block entry as random as any, so the window from
// each offset is one of the run's windows offered with the same
// probability, and their sum is too. Many windows, and not a few spread
// over the sample: where a loop runs, a few windows land on a few of the
// loop's rotations by chance, and that luck decides which of many
// near-equal subpaths come out on top, while windows every few blocks
// hold each rotation about as often as the loop ran it within the
// sample. Only up to half the sample: a longer length has one window a
// sample, and more of its windows (from longer samples) would be nearly
// all distinct, fill the bound, raise τ and cost the worker lookups
// that miss (see docs/osp.md). Windows are told apart
// by their fingerprints, from the sample's prefix fingerprints in one
// multiplication each; a sample's repeats are gathered first, and only a
// subpath that enters the sample is coded.
func (h *HotList) AddSample(blocks []uint32) {
	blocks = blocks[:min(len(blocks), h.maxLen)]
	pre := h.pre[:len(blocks)+1]
	for i, b := range blocks {
		pre[i+1] = pre[i]*fpBase + fpBlock(b)
	}
	local := h.local
	mask := uint64(len(local) - 1)
	for _, i := range h.byLen {
		c := &h.classes[i]
		m := Windows(len(blocks), c.length)
		if m == 0 {
			break
		}
		c.offered += uint64(m)
		st := Stride(len(blocks), c.length)
		// In a concise sample each window is admitted on its own with
		// probability 1/τ: the next one admitted is a geometric number
		// of windows on.
		k := 0
		if !c.counting {
			k = int(min(h.geometric(1/c.tau), uint64(m)))
		}
		distinct := h.distinct[:0]
		for k < m {
			fp := pre[k*st+c.length] - pre[k*st]*c.pow
			for j := fp * 0x9e3779b97f4a7c15 >> 32 & mask; ; j = (j + 1) & mask {
				e := &local[j]
				if e.n == 0 {
					*e = localWindow{fp: fp, first: int32(k * st), n: 1}
					distinct = append(distinct, int32(j))
					break
				}
				if e.fp == fp {
					e.n++
					break
				}
			}
			k++
			if !c.counting {
				k += int(min(h.geometric(1/c.tau), uint64(m)))
			}
		}
		h.distinct = distinct
		for _, j := range distinct {
			e := local[j]
			local[j].n = 0
			h.add(c, e.fp, blocks[e.first:int(e.first)+c.length], uint64(e.n))
		}
	}
}

// codeBytes bounds the bytes of the code of l blocks.
func codeBytes(l int, m *blockModel) int {
	return binary.MaxVarintLen32 + (l-1)*m.stepBytes() + 1
}

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

// Pair is one subpath of a sample with its count, and the sum over the
// groups it was offered in of the square of its count in the group.
type Pair struct {
	Blocks  []uint32
	Count   uint64
	Squares uint64
}

// Pairs returns the pairs of every length, in the order they entered.
func (h *HotList) Pairs() []Pair {
	ps := make([]Pair, 0, h.n)
	for at := 0; at < h.used; {
		a := h.arena[at:]
		size := int(binary.LittleEndian.Uint16(a[offSize:]))
		n := int(binary.LittleEndian.Uint16(a[offLength:]))
		ps = append(ps, Pair{
			Blocks:  h.model.decode(make([]uint32, 0, n), a[headerBytes:headerBytes+size], n),
			Count:   binary.LittleEndian.Uint64(a),
			Squares: roundSquares(h.meanSquare(at) * float64(binary.LittleEndian.Uint64(a))),
		})
		at += headerBytes + size
	}
	return ps
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

// A subpath's fingerprint is Σ v(id_i)·B^(n−1−i) mod 2^64, where v
// scrambles a block id into 64 bits (splitmix64's finalizer) and B is an
// odd constant: a window's fingerprint then comes from the sample's
// prefix fingerprints in one multiplication and one subtraction. Two
// different subpaths of one length share it only where their scrambled
// blocks' weighted differences cancel modulo 2^64, about one chance in
// 2^64 for subpaths not built to collide; they would then share a pair.
const fpBase = 0x9e3779b97f4a7c15 | 1

func fpBlock(id uint32) uint64 {
	z := uint64(id) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func fingerprint(blocks []uint32) uint64 {
	var h uint64
	for _, b := range blocks {
		h = h*fpBase + fpBlock(b)
	}
	return h
}

// fpPow is fpBase^n mod 2^64.
func fpPow(n int) uint64 {
	p := uint64(1)
	for range n {
		p *= fpBase
	}
	return p
}

// powMod is hashBase^n mod 2^61−1.
func powMod(n int) uint64 {
	p := uint64(1)
	for range n {
		p = mulMod(p, hashBase)
	}
	return p
}

// sortPairs orders pairs by count, most first, then by length and blocks,
// so that equal samples list equally.
func sortPairs(ps []Pair) {
	slices.SortFunc(ps, func(a, b Pair) int {
		if a.Count != b.Count {
			if a.Count > b.Count {
				return -1
			}
			return 1
		}
		if len(a.Blocks) != len(b.Blocks) {
			return len(a.Blocks) - len(b.Blocks)
		}
		return slices.Compare(a.Blocks, b.Blocks)
	})
}
