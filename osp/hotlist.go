package osp

import (
	"encoding/binary"
	"fmt"
	"math"
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
// capacities it chooses: a byte arena holding the pairs (a 12-byte header
// and the subpath's code: varint differences of the block ids, mostly a
// byte a block, or with a model of the program's blocks the choice made
// at each step, mostly a bit or two), an open-addressing table of int32
// arena offsets, scratch buffers for the coded windows of one sample (and
// for the sample's differences, or for the codes from each of its
// windows' starts and the coder's stack), the windows' descriptions and
// the per-length state; plus the HotList struct. Bytes counts their
// capacities, and they never grow past the bound given to NewHotList.
type HotList struct {
	rng     rand.PCG
	classes []class
	byLen   []int // indices of classes, shortest length first

	slots   []int32 // arena offset of each pair, or -1
	arena   []byte
	used    int // bytes of arena in use
	n       int // pairs
	scratch []byte
	stack   []int32 // the coder's frames
	// Without a model: a sample's differences, and where each block's
	// starts in them.
	deltas  []byte
	deltaAt []int32
	// The codes of a sample's windows from each start (AddSample).
	starts []startCode
	codes  []byte
	marks  []int32
	wins   []window
	maxLen int
	model  *blockModel

	maxSlots, maxArena int
}

// class is the state of one length's sample.
type class struct {
	length int
	tau    float64
	// counting is true for a counting sample, false for a concise one
	// (also where a counting sample had to fall back, see add).
	counting bool
	bytes    int // arena bytes its pairs take
	pairs    int
	raises   int
	offered  uint64
	admit    uint8 // AddSample: a bit for each of the sample's windows admitted (WindowsPerLength ≤ 8)
}

// window is one subpath of a sample, encoded at scratch[from:to], and how
// often the sample holds it.
type window struct {
	from, to int32
	hash     uint32
	n        uint32
}

// Growth is the factor by which a length's τ is raised.
const Growth = 1.25

// headerBytes is the size of a pair's header in the arena: count u32,
// sum of squares u32, code size u16, length in blocks u16. The hash that
// places the pair in the table is worked out again when the table is
// rebuilt: the pairs are worth more than the time.
const (
	headerBytes = 12
	offSquares  = 4
	offSize     = 8
	offLength   = 10
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
		h.classes[i] = class{length: l, tau: 1, counting: kind == Counting}
		h.byLen = append(h.byLen, i)
	}
	slices.SortFunc(h.byLen, func(a, b int) int { return lengths[a] - lengths[b] })
	// The windows of one length of a sample have at most maxLen blocks
	// in all.
	h.scratch = make([]byte, 0, WindowsPerLength*(binary.MaxVarintLen32+1)+maxLen*m.stepBytes())
	if m == nil {
		// A sample's differences, coded once.
		h.deltas = make([]byte, 0, binary.MaxVarintLen32*maxLen)
		h.deltaAt = make([]int32, 0, maxLen+1)
	} else {
		h.stack = make([]int32, 0, maxLen)
		// Room for coding each start of a full sample once (prefixCode).
		h.starts = make([]startCode, 0, WindowsPerLength*len(lengths))
		steps, bytes := h.startsRoom(h.windowStarts(maxLen))
		h.marks = make([]int32, 0, steps)
		h.codes = make([]byte, 0, bytes)
	}
	h.wins = make([]window, 0, WindowsPerLength)
	avail := bound - h.Bytes()
	// A fifth of the rest for the table, filled to three quarters at
	// most; the rest for the pairs, whose headers alone take 12 bytes
	// for the table's 4.
	h.maxSlots = max(16, avail/5/4)
	h.maxArena = avail - 4*h.maxSlots
	if worst := headerBytes + binary.MaxVarintLen32 + 1 + maxLen*m.stepBytes(); h.maxArena < 2*len(lengths)*worst {
		return nil, fmt.Errorf("a memory bound of %d bytes is too small for %d lengths up to %d blocks (want at least %d)",
			bound, len(lengths), maxLen, bound-h.maxArena+2*len(lengths)*worst)
	}
	h.slots = make([]int32, 16)
	for i := range h.slots {
		h.slots[i] = -1
	}
	h.arena = make([]byte, min(1024, h.maxArena))
	return h, nil
}

// Bytes is the memory the samples hold: the capacities of their arrays
// and the struct. It only grows, so it is also the peak (not counting,
// while an array grows, the old copy that the garbage collector then
// frees).
func (h *HotList) Bytes() int {
	return int(unsafe.Sizeof(*h)) + 4*cap(h.slots) + cap(h.arena) + cap(h.scratch) + 4*cap(h.stack) +
		cap(h.deltas) + 4*cap(h.deltaAt) +
		cap(h.starts)*int(unsafe.Sizeof(startCode{})) + cap(h.codes) + 4*cap(h.marks) +
		cap(h.wins)*int(unsafe.Sizeof(window{})) + cap(h.classes)*int(unsafe.Sizeof(class{})) + 8*cap(h.byLen)
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
	enc, _ := h.model.encode(h.scratch[:0], blocks, h.stack, nil)
	h.add(c, enc, windowHash(enc, c.length), 1)
}

// WindowsPerLength is the most subpaths of one length that AddSample
// takes from a sample. More would say little more, the windows of one
// sample being alike where a loop runs, and would cost the worker more
// than the program takes to run the blocks between samples.
const WindowsPerLength = 4

// class.admit has a bit for each window of a sample.
var _ [8 - WindowsPerLength]struct{}

// Windows is the number of subpaths of length l that AddSample takes from
// a sample of m blocks: ⌊m/l⌋, at most WindowsPerLength.
func Windows(m, l int) int { return min(m/l, WindowsPerLength) }

// AddSample offers subpaths of one sample as one group: for each length L
// of the hot list, n = Windows(len(blocks), L) of them, blocks[k·s:k·s+L]
// for k < n with the stride s = ⌊len(blocks)/n⌋, so that they do not
// overlap and are spread over the sample. Only the first maxLen blocks
// count, maxLen being the longest length. (Four overlapping windows of
// 32 blocks instead of two found the top 10s no better: they filled the
// memory bound sooner, and τ rose.)
func (h *HotList) AddSample(blocks []uint32) {
	blocks = blocks[:min(len(blocks), h.maxLen)]
	// In a concise sample each window is admitted on its own with
	// probability 1/τ, so a subpath's admitted occurrences in the sample
	// are binomial, as in add and raise. The coins are flipped first:
	// coding is most of the work, and a window's code is a prefix of the
	// code of the longest window from the same start (coding goes block
	// by block from there), so each start is coded once, as far as its
	// longest admitted window, where the scratch has room. A counting
	// sample must look every window up, so it codes them all.
	for _, i := range h.byLen {
		c := &h.classes[i]
		c.admit = 0
		if c.length > len(blocks) {
			break
		}
		for w := range Windows(len(blocks), c.length) {
			c.offered++
			if c.counting || c.tau <= 1 || h.float()*c.tau < 1 {
				c.admit |= 1 << w
			}
		}
	}
	var starts []startCode
	cached := false
	deltas, at := h.deltas[:0], h.deltaAt[:0]
	if h.model != nil {
		starts, cached = h.prepareStarts(blocks)
	} else {
		// Without a model a window's code is its first id and a slice
		// of the sample's differences, coded once.
		at = append(at, 0)
		for i := 1; i < len(blocks); i++ {
			deltas = appendDelta(deltas, blocks[i], blocks[i-1])
			at = append(at, int32(len(deltas)))
		}
	}
	for _, i := range h.byLen {
		c := &h.classes[i]
		if c.length > len(blocks) {
			break
		}
		n := Windows(len(blocks), c.length)
		stride := len(blocks) / n
		// Code the admitted windows, each distinct one once with its
		// number.
		enc, wins := h.scratch[:0], h.wins[:0]
	windows:
		for k := 0; k < n*stride; k += stride {
			if c.admit&(1<<(k/stride)) == 0 {
				continue
			}
			from := len(enc)
			switch {
			case h.model == nil:
				enc = binary.AppendUvarint(enc, uint64(blocks[k]))
				enc = append(enc, deltas[at[k]:at[k+c.length-1]]...)
			case cached:
				enc = h.prefixCode(enc, blocks, starts, k, c.length)
			default:
				enc, _ = h.model.encode(enc, blocks[k:k+c.length], h.stack, nil)
			}
			w := window{from: int32(from), to: int32(len(enc)), hash: windowHash(enc[from:], c.length), n: 1}
			for j := range wins {
				if o := &wins[j]; o.hash == w.hash && string(enc[o.from:o.to]) == string(enc[w.from:w.to]) {
					o.n++
					enc = enc[:from]
					continue windows
				}
			}
			wins = append(wins, w)
		}
		for _, w := range wins {
			h.add(c, enc[w.from:w.to], w.hash, w.n)
		}
	}
}

// startCode is the code from one start of a sample's windows, as far as
// its longest window (admitted, once prepareStarts has looked), at
// codes[from:to], with the bits it has after each of its blocks at
// marks[mark:]; from is -1 until it is coded.
type startCode struct {
	start, length, from, to, mark int32
}

// windowStarts returns, for a sample of m blocks, the starts of its
// windows with the longest window from each.
func (h *HotList) windowStarts(m int) []startCode {
	starts := h.starts[:0]
	for _, i := range h.byLen {
		l := h.classes[i].length
		if l > m {
			break
		}
		n := Windows(m, l)
		stride := m / n
	windows:
		for k := 0; k < n*stride; k += stride {
			for j := range starts {
				if s := &starts[j]; int(s.start) == k {
					s.length = max(s.length, int32(l))
					continue windows
				}
			}
			starts = append(starts, startCode{start: int32(k), length: int32(l)})
		}
	}
	return starts
}

// startsRoom returns the marks and the bytes that coding the starts
// takes at most.
func (h *HotList) startsRoom(starts []startCode) (steps, bytes int) {
	for _, s := range starts {
		steps += int(s.length)
		bytes += codeBytes(int(s.length), h.model)
	}
	return steps, bytes
}

// codeBytes bounds the bytes of the code of l blocks.
func codeBytes(l int, m *blockModel) int {
	return binary.MaxVarintLen32 + (l-1)*m.stepBytes() + 1
}

// prepareStarts finds the starts of the windows of blocks, and says
// whether the scratch has room to code from all of them (it has for a
// full sample).
func (h *HotList) prepareStarts(blocks []uint32) ([]startCode, bool) {
	starts := h.windowStarts(len(blocks))
	if len(starts) > cap(h.starts) {
		return nil, false
	}
	if steps, bytes := h.startsRoom(starts); steps > cap(h.marks) || bytes > cap(h.codes) {
		return nil, false
	}
	for j := range starts {
		s := &starts[j]
		s.from, s.length = -1, 0
		// As far as the longest admitted window from there.
		for _, i := range h.byLen {
			c := &h.classes[i]
			if c.length > len(blocks) {
				break
			}
			n := Windows(len(blocks), c.length)
			if k, stride := int(s.start), len(blocks)/n; k%stride == 0 && k/stride < n && c.admit&(1<<(k/stride)) != 0 {
				s.length = max(s.length, int32(c.length))
			}
		}
	}
	h.codes, h.marks = h.codes[:0], h.marks[:0]
	return starts, true
}

// prefixCode appends the code of the window of blocks of length l from
// start k: the code from that start (made now if it is the first window
// from there) up to the window's last block, its last byte's bits beyond
// that cleared, as a window coded alone would have them.
func (h *HotList) prefixCode(enc []byte, blocks []uint32, starts []startCode, k, l int) []byte {
	for j := range starts {
		s := &starts[j]
		if int(s.start) != k {
			continue
		}
		if s.from < 0 {
			s.from, s.mark = int32(len(h.codes)), int32(len(h.marks))
			h.codes, h.marks = h.model.encode(h.codes, blocks[s.start:s.start+s.length], h.stack, h.marks)
			s.to = int32(len(h.codes))
		}
		nbits := int(h.marks[int(s.mark)+l-1])
		enc = append(enc, h.codes[s.from:int(s.from)+(nbits+7)/8]...)
		if r := nbits % 8; r != 0 {
			enc[len(enc)-1] &= byte(1)<<r - 1
		}
		return enc
	}
	panic("osp: a window from a start not found")
}

// add counts a occurrences, from one group, of the encoded subpath enc
// of length c.length: in a concise sample those admitted, in a counting
// sample all of them, of which those before the first that enters are
// not counted if the subpath has no pair.
func (h *HotList) add(c *class, enc []byte, hash uint32, a uint32) {
	entered := !c.counting
	for {
		if at := h.find(enc, hash, c.length); at >= 0 {
			n := uint64(binary.LittleEndian.Uint32(h.arena[at:])) + uint64(a)
			sq := uint64(binary.LittleEndian.Uint32(h.arena[at+offSquares:])) + uint64(a)*uint64(a)
			if n <= math.MaxUint32 && sq <= math.MaxUint32 {
				binary.LittleEndian.PutUint32(h.arena[at:], uint32(n))
				binary.LittleEndian.PutUint32(h.arena[at+offSquares:], uint32(sq))
				return
			}
			// Keep the count exact at the price of the sample's
			// rate: thin this length binomially, and the arriving
			// occurrences with it. Raising τ does not shrink a
			// counting sample's counts, so that length becomes a
			// concise sample from here on: its counts then
			// stand for all the elements since they entered, the
			// τ − 1 before (against counts of 2^32) not added.
			c.counting = false
			old := c.tau
			h.raise(c)
			if a = h.thin(c, a, old); a == 0 {
				return
			}
			continue
		}
		if !entered {
			if a = h.enter(c, a); a == 0 {
				return
			}
			entered = true
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
	binary.LittleEndian.PutUint32(h.arena[at:], a)
	binary.LittleEndian.PutUint32(h.arena[at+offSquares:], a*a)
	binary.LittleEndian.PutUint16(h.arena[at+offSize:], uint16(len(enc)))
	binary.LittleEndian.PutUint16(h.arena[at+offLength:], uint16(c.length))
	copy(h.arena[at+headerBytes:], enc)
	h.used += headerBytes + len(enc)
	h.n++
	c.pairs++
	c.bytes += headerBytes + len(enc)
	h.place(int32(at), hash)
}

// enter returns how many of a occurrences of a subpath without a pair a
// counting sample counts: each enters with probability 1/τ, and the
// first that does is counted with every one after it.
func (h *HotList) enter(c *class, a uint32) uint32 {
	if c.tau <= 1 {
		return a
	}
	if skip := h.geometric(1 / c.tau); skip < uint64(a) {
		return a - uint32(skip)
	}
	return 0
}

// thin returns what is left of a count n of length c when its τ was
// raised from old to c.tau.
func (h *HotList) thin(c *class, n uint32, old float64) uint32 {
	if !c.counting {
		return h.binomial(n, old/c.tau)
	}
	if n == 0 || h.float() < old/c.tau {
		return n
	}
	// The first counted element goes, and each next one until a coin of
	// probability 1/τ' says it would have entered.
	if lost := 1 + h.geometric(1/c.tau); lost < uint64(n) {
		return n - uint32(lost)
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

// slot maps a hash to a table index (Lemire's multiply-shift, so the
// table's length need not be a power of two).
func (h *HotList) slot(hash uint32) int { return int(uint64(hash) * uint64(len(h.slots)) >> 32) }

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
		h.slots = make([]int32, min(h.maxSlots, 2*len(h.slots)))
		h.rehash()
		grew = true
	}
	return grew
}

// find returns the arena offset of the pair of the given length holding
// enc, or -1. (A code does not say how many blocks it has.)
func (h *HotList) find(enc []byte, hash uint32, length int) int {
	for i := h.slot(hash); ; i++ {
		if i == len(h.slots) {
			i = 0
		}
		at := h.slots[i]
		if at < 0 {
			return -1
		}
		a := h.arena[at:]
		if int(binary.LittleEndian.Uint16(a[offSize:])) == len(enc) &&
			int(binary.LittleEndian.Uint16(a[offLength:])) == length &&
			string(a[headerBytes:headerBytes+len(enc)]) == string(enc) {
			return int(at)
		}
	}
}

func (h *HotList) place(at int32, hash uint32) {
	i := h.slot(hash)
	for h.slots[i] >= 0 {
		if i++; i == len(h.slots) {
			i = 0
		}
	}
	h.slots[i] = at
}

func (h *HotList) rehash() {
	for i := range h.slots {
		h.slots[i] = -1
	}
	for at := 0; at < h.used; {
		a := h.arena[at:]
		size := int(binary.LittleEndian.Uint16(a[offSize:]))
		h.place(int32(at), windowHash(a[headerBytes:headerBytes+size], int(binary.LittleEndian.Uint16(a[offLength:]))))
		at += headerBytes + size
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
		n := binary.LittleEndian.Uint32(h.arena[at:])
		sq := binary.LittleEndian.Uint32(h.arena[at+offSquares:])
		if int(binary.LittleEndian.Uint16(h.arena[at+offLength:])) == c.length {
			kept := h.thin(c, n, old)
			if kept == 0 {
				c.pairs--
				c.bytes -= size
			}
			var e float64
			if c.counting {
				e = math.Round(float64(sq) * float64(kept) / float64(n))
			} else {
				e = math.Round(keep*keep*float64(sq) + keep*(1-keep)*float64(n))
			}
			sq = uint32(min(max(e, float64(kept)), float64(kept)*float64(kept)))
			n = kept
		}
		if n > 0 {
			copy(h.arena[w:], h.arena[at:at+size])
			binary.LittleEndian.PutUint32(h.arena[w:], n)
			binary.LittleEndian.PutUint32(h.arena[w+offSquares:], sq)
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
func (h *HotList) binomial(n uint32, p float64) uint32 {
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
	var k uint32
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
			Count:   uint64(binary.LittleEndian.Uint32(a)),
			Squares: uint64(binary.LittleEndian.Uint32(a[offSquares:])),
		})
		at += headerBytes + size
	}
	return ps
}

// appendDelta appends x − prev, zigzag-coded, as a varint: the code of a
// step without a model.
func appendDelta(b []byte, x, prev uint32) []byte {
	d := int64(x) - int64(prev)
	z := uint64(d<<1) ^ uint64(d>>63)
	if z < 0x80 {
		return append(b, byte(z)) // most: blocks of one function
	}
	return binary.AppendUvarint(b, z)
}

// windowHash is the hash of a subpath's code and length.
func windowHash(code []byte, length int) uint32 {
	return hashBytes(code) ^ uint32(length)*0x9e3779b9
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// hashBytes hashes eight bytes at a time (each word xored in, then
// multiplied by the FNV prime and folded), and the rest byte by byte as
// FNV-1a does; folded to 32 bits. Byte by byte, the hash of every window
// took as long as the rest of the hot list's work.
func hashBytes(b []byte) uint32 {
	h := uint64(fnvOffset) ^ uint64(len(b))
	for ; len(b) >= 8; b = b[8:] {
		h = (h ^ binary.LittleEndian.Uint64(b)) * fnvPrime
		h ^= h >> 29
	}
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return uint32(h ^ h>>32)
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
