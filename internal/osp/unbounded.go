// Unbounded: a run's samples counted with no memory bound, to tell the
// bound's misses from the samples'.

package osp

import (
	"fmt"
	"math"
)

// Unbounded counts the windows that a run's samples offer with no memory
// bound and no thinning: the hot list's windows (every Stride(M, L)-th
// block of a sample of M blocks) or, with every, each window of each
// sample. Scored against the exact counts of the same run it says what
// the samples themselves allow, so that a length the profile misses is
// told apart: missed for the bound (the unbounded count of the same
// windows finds its top 10), for the windows taken (only every window
// finds it), or for the samples (neither does: no hot list fed these
// samples would). It is a yardstick for scoring runs, not a profiler: its
// memory grows with every distinct window sampled.
type Unbounded struct {
	Lengths []int
	// Every is true when every window of a sample is counted.
	Every bool
	// Offered counts the windows offered, per length.
	Offered []uint64

	offsets []int
	maxLen  int
	counts  []map[uint64]windowCount
	pow     []uint64
	pre     []uint64
	local   map[uint64]uint64 // one sample's windows of one length
}

// windowCount is a window's count over the samples and the sum over
// samples of its count in the sample squared, which the variance of the
// estimate is taken from as the hot list does (Estimate).
type windowCount struct{ n, squares uint64 }

// NewUnbounded returns an empty count of the windows of ins's samples
// for the given lengths (checked as Options checks them).
func NewUnbounded(ins *Instrumented, lengths []int, every bool) (*Unbounded, error) {
	if err := checkLengths(lengths); err != nil {
		return nil, err
	}
	u := &Unbounded{Lengths: lengths, Every: every, Offered: make([]uint64, len(lengths)), offsets: ins.offsets(), local: map[uint64]uint64{}}
	for _, l := range lengths {
		u.maxLen = max(u.maxLen, l)
		u.counts = append(u.counts, map[uint64]windowCount{})
		u.pow = append(u.pow, powMod(l))
	}
	return u, nil
}

// UnboundedCounts returns the two unbounded counts of ins's samples, the
// hot list's windows and every window, and an Options.Observe that feeds
// both.
func UnboundedCounts(ins *Instrumented, lengths []int) ([]*Unbounded, func(blocks []uint32), error) {
	var us []*Unbounded
	for _, every := range []bool{false, true} {
		u, err := NewUnbounded(ins, lengths, every)
		if err != nil {
			return nil, nil, err
		}
		us = append(us, u)
	}
	return us, func(blocks []uint32) {
		for _, u := range us {
			u.AddSample(blocks)
		}
	}, nil
}

// AddSample counts the windows of one sample, as HotList.AddSample
// offers them (or all of them). Its keys are those of Exact.
func (u *Unbounded) AddSample(blocks []uint32) {
	blocks = blocks[:min(len(blocks), u.maxLen)]
	pre := append(u.pre[:0], 0)
	for _, id := range blocks {
		pre = append(pre, hashStep(pre[len(pre)-1], u.offsets[id]))
	}
	u.pre = pre
	for i, l := range u.Lengths {
		m, st := Windows(len(blocks), l), Stride(len(blocks), l)
		if u.Every && m > 0 {
			m, st = len(blocks)-l+1, 1
		}
		u.Offered[i] += uint64(m)
		clear(u.local)
		for k := 0; k < m; k++ {
			u.local[windowKey(pre[k*st+l], pre[k*st], u.pow[i])]++
		}
		counts := u.counts[i]
		for w, n := range u.local {
			c := counts[w]
			counts[w] = windowCount{c.n + n, c.squares + n*n}
		}
	}
}

// Score scores the unbounded counts against ex, the exact counts of the
// same run of blockEntries block entries, as ScoreProfile scores a
// profile: a window counted n times out of W offered is estimated to
// occur n·blockEntries/W times.
func (u *Unbounded) Score(ex *Exact, blockEntries uint64, ks []int) (*Score, error) {
	if ex.Blocks != blockEntries {
		return nil, fmt.Errorf("the exact counts are of %d block entries, the samples of a run of %d", ex.Blocks, blockEntries)
	}
	est := make(map[int]map[uint64]estimate, len(ex.Lengths))
	for _, l := range ex.Lengths {
		est[l] = map[uint64]estimate{}
	}
	for i, l := range u.Lengths {
		m := est[l]
		if m == nil {
			return nil, fmt.Errorf("the samples have windows of length %d, which were not counted", l)
		}
		if u.Offered[i] == 0 {
			continue
		}
		scale := float64(blockEntries) / float64(u.Offered[i])
		for k, c := range u.counts[i] {
			e, v := Estimate(Pair{Count: c.n, Squares: c.squares}, LengthState{Tau: 1, Counting: true})
			m[k] = estimate{e * scale, 1.96 * math.Sqrt(v) * scale}
		}
	}
	return scoreEstimates(ex, est, ks), nil
}
