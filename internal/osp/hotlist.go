// HotList: the bounded samples of subpath streams that a sampling run
// keeps, one per length, their state, estimates and pairs.

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
