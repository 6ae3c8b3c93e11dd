// Tests of the unbounded counts of a run's samples.

package osp

import (
	"bytes"
	"context"
	"math"
	"testing"
)

// TestUnbounded runs calc with a hot list that never thins (τ stays 1 at
// every length): its profile must then be exactly the unbounded count of
// the same windows, estimate for estimate, and every window of the
// samples must count no subpath more often than the run made it.
func TestUnbounded(t *testing.T) {
	ctx := context.Background()
	p := benchPrograms(t, false)[0]
	orig, ins := readInstrumented(t, p)
	same, err := NewUnbounded(ins, DefaultLengths, false)
	if err != nil {
		t.Fatal(err)
	}
	every, err := NewUnbounded(ins, DefaultLengths, true)
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Memory: 64 << 20, MeanSkip: 500, Observe: func(b []uint32) {
		same.AddSample(b)
		every.AddSample(b)
	}}
	prog, err := Compile(ctx, ins, ModeSample, p.Config(t, &bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close(ctx)
	prof, _, err := prog.Sample(ctx, opt, p.Config(t, &bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range prof.Sampling.ByLength {
		if l.Tau != 1 {
			t.Fatalf("length %d was thinned (τ = %v): the bound is too small for this test", l.Length, l.Tau)
		}
		if same.Offered[i] != l.Windows {
			t.Errorf("length %d: %d windows offered to the unbounded count, %d to the hot list", l.Length, same.Offered[i], l.Windows)
		}
		if w := prof.Sampling.Samples * uint64(SampleBlocks(DefaultLengths)-l.Length+1); every.Offered[i] != w {
			t.Errorf("length %d: every window is %d, want %d", l.Length, every.Offered[i], w)
		}
	}
	ex, _, _, err := Count(ctx, orig, prof.Sampling.Lengths, p.Config(t, &bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	fromProfile, err := ScoreProfile(ex, prof, []int{10, 100})
	if err != nil {
		t.Fatal(err)
	}
	fromSame, err := same.Score(ex, prof.Run.BlockEntries, []int{10, 100})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range fromProfile.Lengths {
		for j, a := range r.At {
			b := fromSame.Lengths[i].At[j]
			if a.Hits != b.Hits || a.InProfile != b.InProfile || math.Abs(a.MedianError-b.MedianError) > 1e-9 || math.Abs(a.Covered-b.Covered) > 1e-9 {
				t.Errorf("length %d, top %d: the profile scores %+v, the same windows unbounded %+v", r.Length, a.K, a, b)
			}
		}
	}
	if _, err := same.Score(ex, prof.Run.BlockEntries+1, []int{10}); err == nil {
		t.Error("scored against the exact counts of a run of another length")
	}
	for i, l := range every.Lengths {
		for k, c := range every.counts[i] {
			if n := ex.Tables[i].Get(k); c.n > n {
				t.Fatalf("length %d: a subpath counted %d times in the samples, %d in the run", l, c.n, n)
			}
		}
	}
	// Every window finds calc's short subpaths (among near ties: its
	// length 4 has them).
	fromEvery, err := every.Score(ex, prof.Run.BlockEntries, []int{10})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range fromEvery.Lengths[:3] {
		if a := r.At[0]; a.RecallNear < 0.9 || a.MedianError > 0.05 {
			t.Errorf("every window, length %d: recall@10 with near ties %.2f, median error %.3f", r.Length, a.RecallNear, a.MedianError)
		}
	}
}
