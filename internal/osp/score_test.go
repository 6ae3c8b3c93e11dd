// Tests of the exact counts and of Score, by hand and with near ties.

package osp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestExactCounts checks the window counts against counting the block
// sequences themselves, over several batches.
func TestExactCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	offsets := make([]int, 6)
	for i := range offsets {
		offsets[i] = 100 + 7*i
	}
	lengths := []int{1, 2, 3, 8}
	var ids []uint32
	for range 5000 {
		// Mostly a loop over 0,1,2 with excursions, so that windows repeat.
		if r.IntN(10) == 0 {
			ids = append(ids, uint32(3+r.IntN(3)))
		} else {
			ids = append(ids, uint32(len(ids)%3))
		}
	}
	ex := NewExact(lengths, offsets)
	for i := 0; i < len(ids); {
		n := min(len(ids)-i, 1+r.IntN(700))
		ex.Push(ids[i : i+n])
		i += n
	}
	if ex.Blocks != uint64(len(ids)) {
		t.Fatalf("%d blocks, want %d", ex.Blocks, len(ids))
	}
	for li, l := range lengths {
		want := map[uint64]uint64{}
		seqs := map[string]uint64{}
		for i := 0; i+l <= len(ids); i++ {
			o := make([]int, l)
			for j := range o {
				o[j] = offsets[ids[i+j]]
			}
			want[HashOffsets(o)]++
			seqs[fmt.Sprint(o)]++
		}
		if len(want) != len(seqs) {
			t.Fatalf("length %d: %d keys for %d distinct sequences: a collision", l, len(want), len(seqs))
		}
		tb := ex.Tables[li]
		if tb.Len() != len(want) || tb.Total != uint64(len(ids)-l+1) {
			t.Errorf("length %d: %d distinct, %d windows; want %d and %d", l, tb.Len(), tb.Total, len(want), len(ids)-l+1)
		}
		for k, c := range want {
			if got := tb.Get(k); got != c {
				t.Errorf("length %d: key %x counted %d times, want %d", l, k, got, c)
			}
		}
	}
}

func TestMulMod(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for range 10000 {
		a, b := r.Uint64()%hashMod, r.Uint64()%hashMod
		want := mulSlow(a, b)
		if got := mulMod(a, b); got != want {
			t.Fatalf("%d·%d mod p: %d, want %d", a, b, got, want)
		}
	}
}

// mulSlow is a·b mod p by doubling and adding, bit by bit.
func mulSlow(a, b uint64) uint64 {
	var r uint64
	for i := 63; i >= 0; i-- {
		r = (r << 1) % hashMod
		if b>>i&1 == 1 {
			r = (r + a) % hashMod
		}
	}
	return r
}

// handExact builds exact counts over blocks a..f at offsets 10, 20, ...
// from a stream written as a string of letters.
func handExact(stream string, lengths []int) *Exact {
	offsets := []int{10, 20, 30, 40, 50, 60}
	ex := NewExact(lengths, offsets)
	ids := make([]uint32, len(stream))
	for i, c := range stream {
		ids[i] = uint32(c - 'a')
	}
	ex.Push(ids)
	return ex
}

func handSubpath(s string, est float64) Subpath {
	sp := Subpath{Length: len(s), Estimate: est}
	for _, c := range s {
		sp.Blocks = append(sp.Blocks, BlockRef{Offset: 10 * int(c-'a'+1)})
	}
	return sp
}

// TestScoreByHand checks recall and errors on counts worked out by hand.
func TestScoreByHand(t *testing.T) {
	// Length 2 windows of "ababababcdcdce": ab×4, ba×3, bc×1, cd×2, dc×2, ce×1.
	ex := handExact("ababababcdcdce", []int{2})
	prof := &Profile{Subpaths: []Subpath{
		handSubpath("ab", 5), // exact 4: error 25%
		handSubpath("cd", 3), // exact 2: error 50%
		handSubpath("ba", 3), // exact 3: error 0
		handSubpath("ee", 2), // never ran
	}}
	s, err := ScoreProfile(ex, prof, []int{2, 3, 10})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Lengths[0]
	if r.Distinct != 6 || r.Windows != 13 || r.Sampled != 4 {
		t.Fatalf("distinct %d windows %d sampled %d, want 6, 13, 4", r.Distinct, r.Windows, r.Sampled)
	}
	// Top 2 by count: ab (4), ba (3); the profile's top 2: ab, and cd or
	// ba (tied at 3, broken by key): threshold 3, so recall is 1/2 or 2/2.
	at2 := r.At[0]
	if at2.Threshold != 3 {
		t.Errorf("c_2 = %d, want 3", at2.Threshold)
	}
	// Errors over the true top 2: ab 25%, ba 0%.
	if at2.MedianError != 0.125 || at2.MaxError != 0.25 {
		t.Errorf("top 2: median error %v, max %v; want 0.125 and 0.25", at2.MedianError, at2.MaxError)
	}
	// Top 3: ab 4, ba 3, then cd and dc tied at 2: c_3 = 2. The
	// profile's top 3 are ab, cd, ba: all at least 2.
	at3 := r.At[1]
	if at3.Threshold != 2 || at3.Hits != 3 || at3.Recall != 1 {
		t.Errorf("top 3: threshold %d, hits %d, recall %v; want 2, 3, 1", at3.Threshold, at3.Hits, at3.Recall)
	}
	// With error bounds: ab 5 ± 0.5 misses 4, ba 3 ± 0 holds 3, cd 3 ± 1
	// holds 2; the other three are not in the profile.
	bounded := *prof
	bounded.Subpaths = slices.Clone(prof.Subpaths)
	bounded.Subpaths[0].Error, bounded.Subpaths[1].Error = 0.5, 1
	sb, _ := ScoreProfile(ex, &bounded, []int{2, 10})
	if a := sb.Lengths[0].At[0]; a.InProfile != 2 || a.Covered != 0.5 {
		t.Errorf("top 2: %d in the profile, %v covered; want 2 and 1/2", a.InProfile, a.Covered)
	}
	if a := sb.Lengths[0].At[1]; a.InProfile != 3 || math.Abs(a.Covered-2.0/3) > 1e-12 {
		t.Errorf("top 10: %d in the profile, %v covered; want 3 and 2/3", a.InProfile, a.Covered)
	}
	// Top 10 of 6 distinct: the profile's 4 hold 3 that ran (ee did
	// not), so recall is 3/6. Errors: ab .25, ba 0, cd .5 or dc 1 (not
	// sampled), bc 1, ce 1.
	at10 := r.At[2]
	if at10.Hits != 3 || at10.Recall != 0.5 || at10.MaxError != 1 || len(at10.Top) != 6 {
		t.Errorf("top 10: hits %d recall %v max error %v, %d listed; want 3, 0.5, 1, 6", at10.Hits, at10.Recall, at10.MaxError, len(at10.Top))
	}
	if at10.Top[0].Exact != 4 || at10.Top[0].Rank != 1 || at10.Top[0].Estimate != 5 {
		t.Errorf("first of the true top: %+v", at10.Top[0])
	}
	if s.Overall.Windows != 13 || s.Overall.At[0].Threshold != 6 {
		t.Errorf("overall: %d windows, c_2 = %d; want 13 and 6 (3 × length 2)", s.Overall.Windows, s.Overall.At[0].Threshold)
	}
}

// TestScoreOverall checks the ranking by count × length across lengths.
func TestScoreOverall(t *testing.T) {
	// "aaaaaa": a×6 (length 1), aa×5 (length 2), aaa×4 (length 3).
	// By count × length: aaa 12, aa 10, a 6.
	ex := handExact("aaaaaa", []int{1, 2, 3})
	prof := &Profile{Subpaths: []Subpath{
		handSubpath("a", 6),
		handSubpath("aa", 6),  // error 20%, weight 12
		handSubpath("aaa", 2), // error 50%, weight 6
	}}
	s, err := ScoreProfile(ex, prof, []int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	o := s.Overall
	if o.Distinct != 3 || o.Windows != 15 {
		t.Fatalf("overall: %d distinct, %d windows; want 3 and 15", o.Distinct, o.Windows)
	}
	// True first: aaa (12). The profile's first: aa (12): exact weight
	// 10 < 12, a miss. Its error is that of aaa: 50%.
	if a := o.At[0]; a.Threshold != 12 || a.Hits != 0 || a.MedianError != 0.5 {
		t.Errorf("overall top 1: threshold %d, hits %d, error %v; want 12, 0, 0.5", a.Threshold, a.Hits, a.MedianError)
	}
	// Top 2: aaa, aa (c_2 = 10); the profile's top 2: aa (10) and aaa or
	// a (6 each): one or two hits, never none.
	if a := o.At[1]; a.Threshold != 10 || a.Hits < 1 || math.Abs(a.MedianError-0.35) > 1e-12 {
		t.Errorf("overall top 2: threshold %d, hits %d, median error %v; want 10, ≥1, 0.35", a.Threshold, a.Hits, a.MedianError)
	}
	if _, err := ScoreProfile(handExact("ab", []int{1}), &Profile{Subpaths: []Subpath{handSubpath("ab", 1)}}, []int{1}); err == nil {
		t.Error("a profile with a length that was not counted was scored")
	}
}

// TestScoreNearTies checks that RecallNear counts a subpath within
// NearTie of the k-th's count as a hit, and Recall does not.
func TestScoreNearTies(t *testing.T) {
	// Subpaths of one block: a×200, c×199 (0.5% below), e×190 (5% below).
	stream := strings.Repeat("ace", 190) + strings.Repeat("ac", 9) + "a"
	ex := handExact(stream, []int{1})
	for _, c := range []struct {
		top              string
		hits, hitsNear   int
		recall, nearness float64
	}{{"a", 1, 1, 1, 1}, {"c", 0, 1, 0, 1}, {"e", 0, 0, 0, 0}} {
		prof := &Profile{Subpaths: []Subpath{handSubpath(c.top, 250)}}
		s, err := ScoreProfile(ex, prof, []int{1})
		if err != nil {
			t.Fatal(err)
		}
		a := s.Lengths[0].At[0]
		if a.Threshold != 200 || a.Hits != c.hits || a.HitsNear != c.hitsNear || a.Recall != c.recall || a.RecallNear != c.nearness {
			t.Errorf("profile's top %s: c_1 %d, hits %d, near %d, recall %v, near %v; want 200, %d, %d, %v, %v",
				c.top, a.Threshold, a.Hits, a.HitsNear, a.Recall, a.RecallNear, c.hits, c.hitsNear, c.recall, c.nearness)
		}
	}
}
