package partition

import (
	"math/rand/v2"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
)

// TestCosterReuse checks that a coster that keeps a function's sorted
// weights from one task to the next prices every task as a fresh one
// does, when the functions and weights it is asked about change in any
// order.
func TestCosterReuse(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	type fn struct {
		d *cfg.DAG
		w []float64
	}
	var fns []fn
	for len(fns) < 40 {
		d := randDAG(r, 12)
		var w []float64
		if r.IntN(3) > 0 {
			w = make([]float64, len(d.Edges))
			for i := range w {
				w[i] = float64(r.IntN(5))
			}
		}
		fns = append(fns, fn{d, w})
	}
	var kept coster
	for it := range 3000 {
		f := fns[r.IntN(len(fns))]
		if r.IntN(4) == 0 {
			// Same DAG, other weights: the kept order must not serve.
			f.w = make([]float64, len(f.d.Edges))
			for i := range f.w {
				f.w[i] = float64(r.IntN(5))
			}
		}
		var set []bool
		if r.IntN(3) > 0 {
			set = make([]bool, len(f.d.Edges))
			for i := range set {
				set[i] = r.IntN(3) > 0
			}
		}
		fresh := coster{w: f.w}
		want, werr := fresh.cost(f.d, nil, set)
		kept.w = f.w
		got, gerr := kept.cost(f.d, nil, set)
		if (werr == nil) != (gerr == nil) || got != want {
			t.Fatalf("task %d: kept coster %d (%v), fresh %d (%v)", it, got, gerr, want, werr)
		}
	}
}
