package wasm

import (
	"math"
	"testing"
)

// TestLEB: readU and readS give back what appendU and appendS wrote, for
// one-byte encodings (read inline) and longer ones alike, and agree with
// readLEB's loop on every one-byte encoding.
func TestLEB(t *testing.T) {
	for c := 0; c < 0x80; c++ {
		b := []byte{byte(c), 0xff}
		for _, bits := range []uint{32, 33, 64} {
			s, n, err := readS(b, bits)
			w, m, werr := readLEB(b, bits, true)
			if s != int64(w) || n != m || err != werr {
				t.Fatalf("readS(%#x, %d) = %d, %d, %v; the loop gives %d, %d, %v", c, bits, s, n, err, int64(w), m, werr)
			}
			u, n, err := readU(b, bits)
			w, m, werr = readLEB(b, bits, false)
			if u != w || n != m || err != werr {
				t.Fatalf("readU(%#x, %d) = %d, %d, %v; the loop gives %d, %d, %v", c, bits, u, n, err, w, m, werr)
			}
		}
	}
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, 127, 128, -129, 1 << 20, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64} {
		b := appendS(nil, v)
		if got, n, err := readS(b, 64); got != v || n != len(b) || err != nil {
			t.Errorf("readS(appendS(%d)) = %d, %d, %v", v, got, n, err)
		}
		if v < 0 {
			continue
		}
		b = appendU(nil, uint64(v))
		if got, n, err := readU(b, 64); got != uint64(v) || n != len(b) || err != nil {
			t.Errorf("readU(appendU(%d)) = %d, %d, %v", v, got, n, err)
		}
	}
	if _, _, err := readU(nil, 32); err != errLEBTruncated {
		t.Errorf("readU of nothing: %v", err)
	}
}
