package wasm

import (
	"bytes"
	"math"
	"testing"
)

// TestAddI64 checks that a negative constant is subtracted as its
// negation, and that the one constant without a negation is added.
func TestAddI64(t *testing.T) {
	for _, c := range []struct {
		v     int64
		konst int64
		op    Op
	}{
		{0, 0, OpI64Add},
		{5, 5, OpI64Add},
		{-5, 5, OpI64Sub},
		{-1 << 40, 1 << 40, OpI64Sub},
		{math.MaxInt64, math.MaxInt64, OpI64Add},
		{math.MinInt64 + 1, math.MaxInt64, OpI64Sub},
		{math.MinInt64, math.MinInt64, OpI64Add},
	} {
		var got, want Asm
		got.AddI64(c.v)
		want.I64(c.konst).Op(c.op)
		if !bytes.Equal(got.B, want.B) {
			t.Errorf("AddI64(%d) = % x, want % x", c.v, got.B, want.B)
		}
	}
}
