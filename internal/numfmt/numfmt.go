// Package numfmt writes numbers as the text reports of bench and osp show
// them: with thousands separators, and lists of them joined by commas.
package numfmt

import (
	"strconv"
	"strings"
)

// Thousands formats n with commas between groups of three digits.
func Thousands(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Ints joins xs with commas, as the --lengths flag takes them.
func Ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
