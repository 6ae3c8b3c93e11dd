package instrument

import (
	"bytes"
	"testing"

	"github.com/pathprof/pathprof/internal/wasm"
)

// TestShortest merges the rewriting of three padded instructions with a
// probe's edits: one inserted before the first (which is still written
// shortest, after it), one that replaces the second (which is left to
// it), none at the third. The body's bytes, the bytes saved and the offset
// map back to the original instructions are checked.
func TestShortest(t *testing.T) {
	expr := []byte{
		0x41, 0x81, 0x80, 0x80, 0x80, 0x00, // i32.const 1, padded to 5 bytes
		0x10, 0x82, 0x80, 0x00, // call 2, padded to 3
		0x41, 0x83, 0x80, 0x00, // i32.const 3, padded to 3
		0x1a, 0x1a, 0x0b, // drop, drop, end
	}
	c := wasm.NewCode(nil, expr)
	e := c.ExprOff
	padded := []uint32{e, e + 6, e + 10}
	list := []wasm.Edit{
		{Off: e, Ins: []byte{0x01}},             // nop before the first
		{Off: e + 6, Del: 4, Ins: []byte{0x01}}, // the call replaced
		{Off: e + 15, Ins: []byte{0x01, 0x01}},  // two nops before the second drop
	}
	z := &sizer{}
	out, err := shortest(&c, padded, list, z)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Splice(out); err != nil {
		t.Fatal(err)
	}
	want := []byte{0x01, 0x41, 0x01, 0x01, 0x41, 0x03, 0x1a, 0x01, 0x01, 0x1a, 0x0b}
	if got := c.Body[c.ExprOff:]; !bytes.Equal(got, want) {
		t.Fatalf("body % x, want % x", got, want)
	}
	if got := z.s.Bytes[SizeShortest]; got != -6 {
		t.Errorf("bytes saved %d, want 6", -got)
	}
	// New offset -> original: the nop, both bytes of the first constant
	// and of the second map to their instructions.
	for n, o := range map[uint32]uint32{0: 0, 1: 0, 2: 0, 3: 6, 4: 10, 5: 10, 6: 14, 9: 15, 10: 16} {
		if got := c.Map.Orig(e + n); got != e+o {
			t.Errorf("offset %d maps to %d, want %d", n, got-e, o)
		}
	}
}
