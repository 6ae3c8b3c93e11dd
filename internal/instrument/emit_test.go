package instrument

import (
	"math"
	"slices"
	"testing"
)

// TestSliceOfCall checks that calls repeating a pattern spread over the
// slots: for every period p up to 16 and every phase of it, the calls n =
// a, a+p, a+2p, ... of 100,000 fall in each of g slots (g = 2 to 8) within
// a few percent of an even share, where n mod g puts them all in one
// slot when g divides p. Every slot is also in range, and the first n
// calls, for every n, are within 8 calls of an even share each: a
// function called a few times is divided as evenly as by n mod g, nearly.
func TestSliceOfCall(t *testing.T) {
	const calls = 100000
	for g := 2; g <= 8; g++ {
		per := make([]int, g)
		for n := uint64(1); n <= calls; n++ {
			per[SliceOfCall(n, g)]++
			if lo, hi := slices.Min(per), slices.Max(per); hi-lo > 8 {
				t.Fatalf("g=%d: the first %d calls have %v per slot", g, n, per)
			}
		}
	}
	for g := 2; g <= 8; g++ {
		checkPeriodic(t, "calls", SliceOfCall, g, 1, calls, 1, 0.04)
	}
}

// checkPeriodic checks that slot spreads, over its g slots, every
// subsequence n = a, a+p, a+2p, ... of first .. last, for every period p
// from minPeriod to 16 and every phase a, within tol of an even share (and
// 2 more), and that every slot is in range.
func checkPeriodic(t *testing.T, what string, slot func(uint64, int) int, g int, first, last, minPeriod uint64, tol float64) {
	t.Helper()
	for p := minPeriod; p <= 16; p++ {
		for a := first; a < first+p; a++ {
			per := make([]int, g)
			total := 0
			for n := a; n <= last; n += p {
				s := slot(n, g)
				if s < 0 || s >= g {
					t.Fatalf("%s: %d in slot %d of %d", what, n, s, g)
				}
				per[s]++
				total++
			}
			even := float64(total) / float64(g)
			for s, c := range per {
				if math.Abs(float64(c)-even) > tol*even+2 {
					t.Fatalf("g=%d, %s %d+%d·m: slot %d has %d of %d, want about %.0f", g, what, a, p, s, c, total, even)
				}
			}
		}
	}
}

// TestSliceOfIteration checks that the iterations of a loop dealt out by
// a test take every slot once in each block of g (so the first n of them,
// for every n, are within one iteration of an even share, as by n mod g),
// that iteration 0 is slot 0's, and that iterations repeating a pattern
// spread over the slots: for every period p up to 16 and every phase,
// within a few percent of an even share, where n mod g puts them all in
// one slot when g divides p.
func TestSliceOfIteration(t *testing.T) {
	const iters = 100000
	for g := 2; g <= 8; g++ {
		if s := SliceOfIteration(0, g); s != 0 {
			t.Fatalf("g=%d: iteration 0 in slot %d", g, s)
		}
		per := make([]int, g)
		for n := uint64(0); n < iters; n++ {
			s := SliceOfIteration(n, g)
			if s < 0 || s >= g {
				t.Fatalf("iteration %d in slot %d of %d", n, s, g)
			}
			per[s]++
			if lo, hi := slices.Min(per), slices.Max(per); hi-lo > 1 {
				t.Fatalf("g=%d: the first %d iterations have %v per slot", g, n+1, per)
			}
		}
		checkPeriodic(t, "iterations", SliceOfIteration, g, 0, iters-1, 2, 0.05)
	}
}
