package profiler

import "testing"

// TestCompileWorkers: the copies compiled at once share the cores out
// whole, every copy gets at least one worker, and none gets more than
// one above another.
func TestCompileWorkers(t *testing.T) {
	for cores := 1; cores <= 16; cores++ {
		for n := 1; n <= 12; n++ {
			sum, lo, hi := 0, cores, 0
			for i := range n {
				w := compileWorkers(cores, n, i)
				sum += w
				lo, hi = min(lo, w), max(hi, w)
			}
			if lo < 1 || hi-lo > 1 || (n <= cores && sum != cores) || (n > cores && hi != 1) {
				t.Errorf("%d cores, %d copies: %d workers in all, %d to %d each", cores, n, sum, lo, hi)
			}
		}
	}
}
