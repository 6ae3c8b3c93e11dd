// This file tests Median and GeoMean.
package stats

import (
	"math"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{2, 2, 9, 1, 2}, 2},
	} {
		in := append([]float64(nil), c.xs...)
		if got := Median(c.xs); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.want)
		}
		for i := range in {
			if in[i] != c.xs[i] {
				t.Fatalf("Median sorted its argument")
			}
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}

func TestGeoMean(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{2}, 2},
		{[]float64{1, 4}, 2},
		{[]float64{1.1, 1.1, 1.1}, 1.1},
		{[]float64{0.5, 2, 8}, 2},
	} {
		if got := GeoMean(c.xs); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("GeoMean(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	// A thousand ratios of 1e300 would overflow a product.
	big := make([]float64, 1000)
	for i := range big {
		big[i] = 1e300
	}
	if got := GeoMean(big); math.Abs(got/1e300-1) > 1e-9 {
		t.Errorf("GeoMean of 1000 × 1e300 = %v", got)
	}
	for _, xs := range [][]float64{nil, {1, 0}, {1, -2}, {math.NaN()}, {math.Inf(1)}} {
		if !math.IsNaN(GeoMean(xs)) {
			t.Errorf("GeoMean(%v) is not NaN", xs)
		}
	}
}
