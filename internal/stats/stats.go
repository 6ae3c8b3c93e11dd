// Package stats holds the summaries of repeated measurements that bench and
// osp report: the median and the geometric mean.
package stats

import (
	"math"
	"slices"
)

// Median returns the median of xs (the mean of the middle two for an even
// count), or NaN for none. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// GeoMean returns the geometric mean of xs, or NaN for none or for any
// value that is not positive. It sums logarithms, so long lists of ratios
// do not overflow.
func GeoMean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 1) {
			return math.NaN()
		}
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(xs)))
}
