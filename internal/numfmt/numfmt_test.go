// This file tests Thousands and Ints.
package numfmt

import "testing"

func TestThousands(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", 100000: "100,000",
		18446744073709551615: "18,446,744,073,709,551,615"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestInts(t *testing.T) {
	for _, c := range []struct {
		xs   []int
		want string
	}{{nil, ""}, {[]int{4}, "4"}, {[]int{2, 4, 8, 16}, "2,4,8,16"}} {
		if got := Ints(c.xs); got != c.want {
			t.Errorf("Ints(%v) = %q, want %q", c.xs, got, c.want)
		}
	}
}
