// What a HotList is offered: one subpath (Add), or the windows of a sample
// taken every WindowStride blocks (AddSample), and how many a sample has.

package osp

import (
	"fmt"
	"slices"
)

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
