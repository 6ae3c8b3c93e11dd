package osp

import "testing"

func TestBlockLine(t *testing.T) {
	bl := func(offs ...int) []BlockRef {
		var b []BlockRef
		for _, o := range offs {
			b = append(b, BlockRef{Offset: o})
		}
		return b
	}
	for _, c := range []struct {
		blocks []BlockRef
		want   string
	}{
		{bl(1, 2, 3), "  0x1 0x2 0x3\n"},
		{bl(1, 1, 1, 2), "  0x1×3 0x2\n"},
		{bl(1, 2, 1, 2, 1, 2, 3), "  (0x1 0x2)×3 0x3\n"},
		{bl(5, 1, 2, 2, 1, 2, 2), "  0x5 (0x1 0x2×2)×2\n"},
		{bl(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), "  0x1 0x2 0x3 0x4 0x5\n  0x6 0x7 0x8 0x9 0xa\n  0xb 0xc\n"},
	} {
		if got := blockLine(c.blocks, nil, "  ", 22); got != c.want {
			t.Errorf("%v: %q, want %q", c.blocks, got, c.want)
		}
	}
	toks := []tok{{"a.c:", "1"}, {"a.c:", "2"}, {"b.c:", "3"}, {"b.c:", "3"}}
	if got := joinToks(toks); got != "a.c:1,2 b.c:3×2" {
		t.Errorf("joinToks: %q", got)
	}
}
