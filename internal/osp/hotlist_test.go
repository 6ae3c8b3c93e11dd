// Tests of HotList: exact while it fits, bounded, unbiased, τ raised and
// counts thinned, windows of a sample, fingerprints.

package osp

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// stream is a synthetic stream of subpaths: n draws from a Zipf
// distribution over distinct subpaths of the given lengths.
func stream(seed uint64, n, distinct int, lengths []int) [][]uint32 {
	r := rand.New(rand.NewPCG(seed, 1))
	paths := make([][]uint32, distinct)
	for i := range paths {
		p := make([]uint32, lengths[i%len(lengths)])
		for j := range p {
			p[j] = uint32(r.IntN(5000))
		}
		paths[i] = p
	}
	z := rand.NewZipf(r, 1.1, 2, uint64(distinct-1))
	out := make([][]uint32, n)
	for i := range out {
		out[i] = paths[z.Uint64()]
	}
	return out
}

func key(p []uint32) string { return fmt.Sprint(p) }

// TestHotListExactWhileItFits checks that with room for everything the
// sample is the stream: τ stays 1 and every count is exact.
func TestHotListExactWhileItFits(t *testing.T) {
	forKinds(t, testHotListExactWhileItFits)
}

// forKinds runs f on each kind of sample.
func forKinds(t *testing.T, f func(*testing.T, Kind)) {
	for _, kind := range []Kind{Counting, Concise} {
		t.Run(kind.String(), func(t *testing.T) { f(t, kind) })
	}
}

func testHotListExactWhileItFits(t *testing.T, kind Kind) {
	lengths := []int{2, 8, 32}
	h, err := NewHotList(4<<20, lengths, 1, kind)
	if err != nil {
		t.Fatal(err)
	}
	exact := map[string]uint64{}
	for _, p := range stream(1, 50000, 3000, lengths) {
		h.Add(p)
		exact[key(p)]++
	}
	for _, st := range h.Lengths() {
		if st.Tau != 1 || st.Raises != 0 {
			t.Errorf("length %d: τ %v after %d raises, want 1", st.Length, st.Tau, st.Raises)
		}
	}
	pairs := h.Pairs()
	if len(pairs) != len(exact) || h.Len() != len(exact) {
		t.Fatalf("%d pairs (Len %d), want %d", len(pairs), h.Len(), len(exact))
	}
	for _, p := range pairs {
		if p.Count != exact[key(p.Blocks)] {
			t.Errorf("%v: count %d, want %d", p.Blocks, p.Count, exact[key(p.Blocks)])
		}
	}
	if h.Bytes() > 4<<20 {
		t.Errorf("%d bytes, bound %d", h.Bytes(), 4<<20)
	}
}

// TestHotListBounded checks the invariants of a sample that must thin:
// the bytes never pass the bound, τ only grows, a concise sample's counts
// represent its stream at rate 1/τ, and the hottest subpaths' estimates
// are within a few standard deviations of their exact counts.
func TestHotListBounded(t *testing.T) { forKinds(t, testHotListBounded) }

func testHotListBounded(t *testing.T, kind Kind) {
	lengths := []int{2, 8, 32}
	const bound = 16 << 10
	h, err := NewHotList(bound, lengths, 7, kind)
	if err != nil {
		t.Fatal(err)
	}
	exact := map[string]uint64{}
	offered := map[int]uint64{}
	taus := make([]float64, len(lengths))
	for i, p := range stream(2, 200000, 20000, lengths) {
		h.Add(p)
		exact[key(p)]++
		offered[len(p)]++
		if i%1000 == 0 {
			if b := h.Bytes(); b > bound {
				t.Fatalf("after %d subpaths: %d bytes, bound %d", i, b, bound)
			}
			for j, st := range h.Lengths() {
				if st.Tau < taus[j] {
					t.Fatalf("length %d: τ fell from %v to %v", st.Length, taus[j], st.Tau)
				}
				taus[j] = st.Tau
			}
		}
	}
	if b := h.Bytes(); b > bound {
		t.Fatalf("%d bytes, bound %d", b, bound)
	}
	states := h.Lengths()
	sums := map[int]uint64{}
	pairs := map[int]int{}
	var byLen = map[int][]Pair{}
	for _, p := range h.Pairs() {
		sums[len(p.Blocks)] += p.Count
		pairs[len(p.Blocks)]++
		byLen[len(p.Blocks)] = append(byLen[len(p.Blocks)], p)
	}
	raised := false
	for _, st := range states {
		if st.Offered != offered[st.Length] || st.Pairs != pairs[st.Length] {
			t.Errorf("length %d: offered %d pairs %d, want %d and %d", st.Length, st.Offered, st.Pairs, offered[st.Length], pairs[st.Length])
		}
		raised = raised || st.Tau > 1
		if st.Counting != (kind == Counting) {
			t.Errorf("length %d: counting %v in a %v hot list", st.Length, st.Counting, kind)
		}
		// Σ count of a concise sample is Binomial-like with mean
		// offered/τ.
		mean := float64(offered[st.Length]) / st.Tau
		if d := math.Abs(float64(sums[st.Length]) - mean); kind == Concise && d > 5*math.Sqrt(mean)+1 {
			t.Errorf("length %d: the counts add up to %d, expected about %.0f (τ %.3g)", st.Length, sums[st.Length], mean, st.Tau)
		}
		// The true hottest five (the sample's own top five would pick
		// the counts that chance raised, among thousands).
		counts := map[string]float64{}
		for _, p := range byLen[st.Length] {
			counts[key(p.Blocks)], _ = Estimate(p, st)
		}
		var top []string
		for k := range exact {
			if strings.Count(k, " ")+1 == st.Length {
				top = append(top, k)
			}
		}
		slices.SortFunc(top, func(a, b string) int { return cmp.Or(cmp.Compare(exact[b], exact[a]), strings.Compare(a, b)) })
		for _, k := range top[:min(5, len(top))] {
			est := counts[k]
			truth := float64(exact[k])
			if d := math.Abs(est - truth); d > 5*math.Sqrt(truth*st.Tau)+st.Tau {
				t.Errorf("length %d: estimate %.0f of a subpath seen %.0f times (τ %.3g)", st.Length, est, truth, st.Tau)
			}
		}
	}
	if !raised {
		t.Fatal("the bound never made the sample thin: the test tests nothing")
	}
	// The longest subpaths are the most diverse: they take the thinning.
	if states[2].Tau < states[0].Tau {
		t.Errorf("τ of length 32 (%v) below that of length 2 (%v)", states[2].Tau, states[0].Tau)
	}
}

// TestHotListUnbiased checks that Estimate is unbiased for both kinds of
// sample (its mean over many seeds is within a few standard errors of the
// exact count), and that a counting sample's estimates of the hottest
// subpaths vary much less than a concise sample's.
func TestHotListUnbiased(t *testing.T) {
	lengths := []int{4}
	s := stream(3, 20000, 4000, lengths)
	exact := map[string]uint64{}
	for _, p := range s {
		exact[key(p)]++
	}
	// Subpaths of several frequencies: the 1st, 10th and 100th hottest.
	var keys []string
	for k := range exact {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if exact[a] != exact[b] {
			return int(exact[b]) - int(exact[a])
		}
		return 0
	})
	probe := []string{keys[0], keys[9], keys[99]}
	const runs = 200
	sds := map[Kind][]float64{}
	for _, kind := range []Kind{Counting, Concise} {
		sum := make([]float64, len(probe))
		sumSq := make([]float64, len(probe))
		var tau float64
		for seed := range uint64(runs) {
			h, err := NewHotList(4<<10, lengths, seed, kind)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range s {
				h.Add(p)
			}
			st := h.Lengths()[0]
			tau = st.Tau
			got := map[string]float64{}
			for _, p := range h.Pairs() {
				got[key(p.Blocks)], _ = Estimate(p, st)
			}
			for i, k := range probe {
				sum[i] += got[k]
				sumSq[i] += got[k] * got[k]
			}
		}
		if tau < 2 {
			t.Fatalf("%v: τ is only %v: the test tests nothing", kind, tau)
		}
		for i, k := range probe {
			mean := sum[i] / runs
			sd := math.Sqrt(max(0, sumSq[i]/runs-mean*mean))
			sds[kind] = append(sds[kind], sd)
			se := sd / math.Sqrt(runs)
			if d := math.Abs(mean - float64(exact[k])); d > 4*se+0.5 {
				t.Errorf("%v: subpath seen %d times: mean estimate %.1f over %d seeds (standard error %.1f)", kind, exact[k], mean, runs, se)
			}
		}
	}
	// The hottest subpath is counted exactly once it has entered.
	if sds[Counting][0] > sds[Concise][0]/2 {
		t.Errorf("standard deviation of the hottest subpath's estimate: %.1f counting, %.1f concise", sds[Counting][0], sds[Concise][0])
	}
}

// TestLargeCounts checks that counts and sums of squares far past 32
// bits stay in a counting sample (a window of a loop can be in a sample
// many times), and that the sum of squares keeps growing.
func TestLargeCounts(t *testing.T) {
	h, _ := NewHotList(64<<10, []int{2}, 5, Counting)
	c := &h.classes[0]
	blocks := []uint32{7, 8}
	for range 5 {
		h.add(c, fingerprint(blocks), blocks, 1e9)
	}
	st, p := h.Lengths()[0], h.Pairs()[0]
	if !st.Counting || st.Tau != 1 || p.Count != 5e9 || math.Abs(float64(p.Squares)/5e18-1) > 1e-6 {
		t.Fatalf("%+v, count %d, squares %d", st, p.Count, p.Squares)
	}
	// Squares kept as a float32 sum would stop growing past 2^24 times
	// what each group adds; as a mean over the count they stay right.
	other := []uint32{9, 9}
	for i := range 1 << 24 {
		h.add(c, fingerprint(other), other, uint64(1+2*(i%2)))
	}
	p = h.Pairs()[1]
	if want := uint64(1<<23) * 4; p.Count != want || math.Abs(float64(p.Squares)/float64(p.Count)-2.5) > 1e-3 {
		t.Fatalf("count %d, squares %d: want %d and 2.5 times that", p.Count, p.Squares, want)
	}
}

// TestThinCounting checks that a counting sample thinned from τ to τ'
// holds a subpath as one taken at τ' from the start would: the count that
// a stream of n elements leaves, entered at τ and thinned to τ', has the
// mean and the chance of being zero of one entered at τ'.
func TestThinCounting(t *testing.T) {
	h, _ := NewHotList(64<<10, []int{2}, 5, Counting)
	for _, c := range []struct {
		n         uint64
		tau, next float64
	}{{1, 1, 1.25}, {5, 1, 1.25}, {5, 4, 5}, {30, 2, 2.5}, {30, 10, 12.5}, {200, 20, 25}} {
		const draws = 40000
		var thinned, direct, zeroT, zeroD float64
		for range draws {
			a := h.enter(&class{tau: c.tau, counting: true}, c.n)
			k := h.thin(&class{tau: c.next, counting: true}, a, c.tau)
			d := h.enter(&class{tau: c.next, counting: true}, c.n)
			thinned += float64(k)
			direct += float64(d)
			if k == 0 {
				zeroT++
			}
			if d == 0 {
				zeroD++
			}
		}
		if m1, m2 := thinned/draws, direct/draws; math.Abs(m1-m2) > 0.02*float64(c.n)+0.05 {
			t.Errorf("%d elements, τ %v → %v: mean count %.3f thinned, %.3f entered at τ'", c.n, c.tau, c.next, m1, m2)
		}
		if z1, z2 := zeroT/draws, zeroD/draws; math.Abs(z1-z2) > 0.015 {
			t.Errorf("%d elements, τ %v → %v: absent %.3f thinned, %.3f entered at τ'", c.n, c.tau, c.next, z1, z2)
		}
	}
}

func TestBinomial(t *testing.T) {
	h, _ := NewHotList(64<<10, []int{2}, 5, Concise)
	for _, c := range []struct {
		n uint64
		p float64
	}{{1, 0.8}, {10, 0.8}, {1000, 0.8}, {1000, 0.2}, {20000, 1 / 1.25}, {7, 0}, {7, 1}} {
		const draws = 4000
		var s, s2 float64
		for range draws {
			k := float64(h.binomial(c.n, c.p))
			if k < 0 || k > float64(c.n) {
				t.Fatalf("Binomial(%d, %v) gave %v", c.n, c.p, k)
			}
			s += k
			s2 += k * k
		}
		mean, vr := s/draws, s2/draws-(s/draws)*(s/draws)
		wantMean, wantVar := float64(c.n)*c.p, float64(c.n)*c.p*(1-c.p)
		if math.Abs(mean-wantMean) > 5*math.Sqrt(wantVar/draws)+1e-9 {
			t.Errorf("Binomial(%d, %v): mean %.3f, want %.3f", c.n, c.p, mean, wantMean)
		}
		if wantVar > 0 && math.Abs(vr-wantVar) > 0.15*wantVar {
			t.Errorf("Binomial(%d, %v): variance %.3f, want %.3f", c.n, c.p, vr, wantVar)
		}
	}
}

func TestEncodeBlocks(t *testing.T) {
	// Without a model a subpath is its first id and the differences.
	var m *blockModel
	r := rand.New(rand.NewPCG(9, 9))
	for range 1000 {
		p := make([]uint32, 1+r.IntN(64))
		for i := range p {
			if r.IntN(2) == 0 {
				p[i] = uint32(r.Int64N(1 << 32))
			} else {
				p[i] = uint32(r.IntN(100))
			}
		}
		enc, _ := m.encode(nil, p, nil, nil)
		if got := m.decode(nil, enc, len(p)); !slices.Equal(got, p) {
			t.Fatalf("%v came back as %v", p, got)
		}
		if len(enc) > binary.MaxVarintLen32+1+(len(p)-1)*m.stepBytes() {
			t.Fatalf("%v took %d bytes, more than the bound", p, len(enc))
		}
	}
	// Neighbouring ids take a byte each.
	if n := len(first(m.encode(nil, []uint32{1000, 1001, 1003, 999, 1000}, nil, nil))); n != 2+4 {
		t.Errorf("%d bytes for five neighbouring blocks, want 6", n)
	}
}

func TestNewHotListTooSmall(t *testing.T) {
	if _, err := NewHotList(1000, []int{2, 64}, 0, Concise); err == nil {
		t.Error("a 1000-byte bound was accepted")
	}
	if _, err := NewHotList(1<<20, []int{2, 2}, 0, Concise); err == nil {
		t.Error("a length given twice was accepted")
	}
}

// loopySamples returns n samples of 32 blocks, each a run of pieces of 2
// to 5 blocks drawn (Zipf) from a few, so that windows repeat within a
// sample as in a loop.
func loopySamples(seed uint64, n int) [][]uint32 {
	r := rand.New(rand.NewPCG(seed, 2))
	pieces := make([][]uint32, 40)
	for i := range pieces {
		p := make([]uint32, 2+i%4)
		for j := range p {
			p[j] = uint32(r.IntN(300))
		}
		pieces[i] = p
	}
	z := rand.NewZipf(r, 1.2, 1, uint64(len(pieces)-1))
	out := make([][]uint32, n)
	for i := range out {
		var s []uint32
		for len(s) < 32 {
			s = append(s, pieces[z.Uint64()]...)
		}
		out[i] = s[:32]
	}
	return out
}

// TestAddSample checks that AddSample offers each sample's windows of
// every length (every fourth block's for the short lengths, those that do
// not overlap for the long ones), and that with room for everything each
// pair's count and sum of squares are exact.
func TestAddSample(t *testing.T) { forKinds(t, testAddSample) }

func testAddSample(t *testing.T, kind Kind) {
	lengths := []int{2, 8, 3, 32}
	h, _ := NewHotList(4<<20, lengths, 1, kind)
	type cs struct{ n, sq uint64 }
	want := map[string]cs{}
	offered := map[int]uint64{}
	for _, s := range loopySamples(3, 5000) {
		h.AddSample(s)
		for _, l := range lengths {
			in := map[string]uint64{}
			for k := 0; k+l <= len(s); k += Stride(len(s), l) {
				in[key(s[k:k+l])]++
				offered[l]++
			}
			for k, n := range in {
				w := want[k]
				want[k] = cs{w.n + n, w.sq + n*n}
			}
		}
	}
	got := h.Pairs()
	if len(got) != len(want) {
		t.Fatalf("%d pairs, want %d", len(got), len(want))
	}
	repeated := 0
	for _, p := range got {
		w := want[key(p.Blocks)]
		// The sum of squares is kept as a float32 mean over the
		// count: within a part in a million here.
		if p.Count != w.n || math.Abs(float64(p.Squares)-float64(w.sq)) > max(0.5, 1e-6*float64(w.sq)) {
			t.Fatalf("%v: count %d, squares %d; want %d, %d", p.Blocks, p.Count, p.Squares, w.n, w.sq)
		}
		if p.Squares > p.Count {
			repeated++
		}
	}
	if repeated == 0 {
		t.Error("no subpath repeated within a sample: the test says nothing about squares")
	}
	for _, st := range h.Lengths() {
		if st.Tau != 1 || st.Offered != offered[st.Length] {
			t.Errorf("length %d: τ %v, offered %d, want 1 and %d", st.Length, st.Tau, st.Offered, offered[st.Length])
		}
	}
}

// TestAddSampleBounded checks AddSample under thinning: the bound holds,
// every length's windows are counted as offered, and each pair's sum of
// squares stays between its count and its count squared.
func TestAddSampleBounded(t *testing.T) { forKinds(t, testAddSampleBounded) }

func testAddSampleBounded(t *testing.T, kind Kind) {
	lengths := []int{2, 4, 8, 16, 32}
	const bound = 7500
	h, err := NewHotList(bound, lengths, 7, kind)
	if err != nil {
		t.Fatal(err)
	}
	samples := loopySamples(4, 20000)
	for _, s := range samples {
		h.AddSample(s)
		if h.Bytes() > bound {
			t.Fatalf("%d bytes, bound %d", h.Bytes(), bound)
		}
	}
	raised := false
	for _, st := range h.Lengths() {
		if st.Offered != uint64(len(samples)*Windows(32, st.Length)) {
			t.Errorf("length %d: offered %d", st.Length, st.Offered)
		}
		raised = raised || st.Tau > 1
	}
	if !raised {
		t.Fatal("no τ was raised")
	}
	for _, p := range h.Pairs() {
		if p.Count == 0 || p.Squares < p.Count || p.Squares > p.Count*p.Count {
			t.Fatalf("%v: count %d, squares %d", p.Blocks, p.Count, p.Squares)
		}
	}
}

// TestFingerprints checks that a window's fingerprint worked out from a
// sample's prefixes is the subpath's own: a subpath offered by AddSample
// and by Add has one pair, holding both.
func TestFingerprints(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for range 200 {
		h, _ := NewHotList(1<<20, []int{1, 3, 16}, 1, Counting)
		s := make([]uint32, 16)
		for i := range s {
			s[i] = r.Uint32()
		}
		h.AddSample(s)
		for _, l := range []int{1, 3, 16} {
			k := Stride(len(s), l) * r.IntN(Windows(len(s), l))
			h.Add(s[k : k+l])
		}
		if len(h.Pairs()) != Windows(16, 1)+Windows(16, 3)+Windows(16, 16) {
			t.Fatalf("%d pairs for %d windows: a window offered twice has two", len(h.Pairs()), Windows(16, 1)+Windows(16, 3)+Windows(16, 16))
		}
	}
}
