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
		for p := uint64(1); p <= 16; p++ {
			for a := uint64(1); a <= p; a++ {
				per := make([]int, g)
				total := 0
				for n := a; n <= calls; n += p {
					s := SliceOfCall(n, g)
					if s < 0 || s >= g {
						t.Fatalf("call %d in slot %d of %d", n, s, g)
					}
					per[s]++
					total++
				}
				even := float64(total) / float64(g)
				for s, c := range per {
					if math.Abs(float64(c)-even) > 0.04*even+2 {
						t.Fatalf("g=%d, calls %d+%d·m: slot %d has %d of %d, want about %.0f", g, a, p, s, c, total, even)
					}
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
		for p := uint64(2); p <= 16; p++ {
			for a := uint64(0); a < p; a++ {
				per := make([]int, g)
				total := 0
				for n := a; n < iters; n += p {
					per[SliceOfIteration(n, g)]++
					total++
				}
				even := float64(total) / float64(g)
				for s, c := range per {
					if math.Abs(float64(c)-even) > 0.05*even+2 {
						t.Fatalf("g=%d, iterations %d+%d·m: slot %d has %d of %d, want about %.0f", g, a, p, s, c, total, even)
					}
				}
			}
		}
	}
}
