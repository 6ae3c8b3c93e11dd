package cluster

import "testing"

func TestArraySpec(t *testing.T) {
	for _, c := range []struct {
		units    []int
		throttle int
		want     string
	}{
		{[]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 4, "0-11%4"},
		{[]int{3, 4, 5, 8, 10, 11}, 0, "3-5,8,10-11"},
		{[]int{7}, 2, "7%2"},
	} {
		if got := ArraySpec(c.units, c.throttle); got != c.want {
			t.Errorf("ArraySpec(%v, %d) = %q, want %q", c.units, c.throttle, got, c.want)
		}
	}
}
