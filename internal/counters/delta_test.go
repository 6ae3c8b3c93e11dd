package counters

import (
	"context"
	"math/rand/v2"
	"testing"
)

// TestDelta drives the generated counter module with random counts, the
// hash table growing several times, and opens and closes intervals at
// random points: Delta's sum equals the counts kept in Go for the counts
// made inside the intervals, and so does its sum taken inside an open
// interval.
func TestDelta(t *testing.T) {
	paths, l, mod := testLayout(t, 64)
	var err error
	ctx := context.Background()
	inst := instantiate(t, ctx, mod)
	dense, hashed := inst.ExportedFunction(CountName), inst.ExportedFunction(CountHashName)
	area := func() []byte {
		b, ok := inst.Memory().Read(0, inst.Memory().Size())
		if !ok {
			t.Fatal("cannot read memory")
		}
		return b
	}
	check := func(label string, got, want Counts) {
		t.Helper()
		n := 0
		for f, ps := range want {
			for p, c := range ps {
				if got[f][p] != c {
					t.Fatalf("%s: f%d path %d: got %d, want %d", label, f, p, got[f][p], c)
				}
				n++
			}
		}
		for f, ps := range got {
			for p := range ps {
				if want[f][p] == 0 {
					t.Fatalf("%s: f%d path %d counted outside the intervals", label, f, p)
				}
			}
		}
	}
	var d Delta
	want := Counts{}
	open := false
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 20000; i++ {
		if r.IntN(300) == 0 {
			if open {
				err = d.Close(area())
			} else {
				err = d.Open(area())
			}
			if err != nil {
				t.Fatal(err)
			}
			open = !open
		}
		if r.IntN(2000) == 0 {
			got, err := d.Counts(area())
			if err != nil {
				t.Fatal(err)
			}
			check("inside", got, want)
		}
		f := uint32(1 + r.IntN(len(paths)-1))
		p := r.Uint64N(min(paths[f], 3000))
		if l.Funcs[f].Kind == KindDense {
			_, err = dense.Call(ctx, uint64(l.Slot(f))+p)
		} else {
			_, err = hashed.Call(ctx, uint64(f), p, 1)
		}
		if err != nil {
			t.Fatal(err)
		}
		if open {
			if want[f] == nil {
				want[f] = map[uint64]uint64{}
			}
			want[f][p]++
		}
	}
	if open {
		if err := d.Close(area()); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.Counts(nil)
	if err != nil {
		t.Fatal(err)
	}
	check("at the end", got, want)
}
