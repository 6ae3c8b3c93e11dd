package parallel

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

// TestFor: every index runs once, whatever the number of workers, and
// the error is the lowest index's.
func TestFor(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		for _, w := range []int{0, 1, 3, 64} {
			counts := make([]atomic.Int32, n)
			err := For(n, w, func(i int) error {
				counts[i].Add(1)
				if i%5 == 3 {
					return fmt.Errorf("index %d", i)
				}
				return nil
			})
			for i := range counts {
				if c := counts[i].Load(); c != 1 {
					t.Fatalf("n %d, workers %d: index %d ran %d times", n, w, i, c)
				}
			}
			want := error(nil)
			if n > 3 {
				want = errors.New("index 3")
			}
			if fmt.Sprint(err) != fmt.Sprint(want) {
				t.Fatalf("n %d, workers %d: error %v, want %v", n, w, err, want)
			}
		}
	}
}
