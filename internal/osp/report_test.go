// Tests of the text report: block lines and the few-samples warning.

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

func TestFewSamplesWarning(t *testing.T) {
	prof := func(samples, blocks uint64) *Profile {
		return &Profile{Run: RunFacts{BlockEntries: blocks}, Sampling: Sampling{Samples: samples, MeanSkip: 6000, Lengths: DefaultLengths}}
	}
	for _, c := range []struct {
		p    *Profile
		want string
	}{
		{prof(12511, 76537628), ""},
		{prof(169, 987427), "only 169 samples: the estimates are rough, and subpaths below a length's floor are mostly missing; --skip 429 would take about 2000 in this run"},
		{prof(6, 20762), "only 6 samples: the estimates are rough, and subpaths below a length's floor are mostly missing; --skip 1 would take about 319 in this run"},
	} {
		if got := fewSamples(c.p); got != c.want {
			t.Errorf("%d samples in %d block entries: %q, want %q", c.p.Sampling.Samples, c.p.Run.BlockEntries, got, c.want)
		}
	}
}
