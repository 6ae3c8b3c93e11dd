package wasm

import (
	"math/rand"
	"testing"
)

// TestPadded encodes instructions with immediates in their shortest form
// and padded by up to two bytes, and checks that Padded tells them apart
// and that AppendInstr gives the shortest form back.
func TestPadded(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	vals := []uint64{0, 1, 63, 64, 127, 128, 8191, 8192, 1 << 20, 1<<31 - 1, 1 << 31, 1<<32 - 1}
	seen := map[bool]int{}
	for i := 0; i < 2000; i++ {
		v := vals[rng.Intn(len(vals))]
		pad := rng.Intn(3)
		// A u32 or i32 takes at most five bytes, an i64 ten.
		padU := func(b []byte, v uint64) []byte { return appendUPadded(b, v, min(sizeU(v)+pad, 5)) }
		var b []byte
		var want Instr
		switch rng.Intn(5) {
		case 0:
			want = Instr{Op: OpCall, A: uint32(v)}
			b = padU([]byte{byte(OpCall)}, v)
		case 1:
			want = Instr{Op: OpCallIndirect, A: uint32(v), B: 0}
			b = padU(padU([]byte{byte(OpCallIndirect)}, v), 0)
		case 2:
			c := int64(int32(uint32(v)))
			want = Instr{Op: OpI32Const, Const: uint64(uint32(c))}
			b = appendSPadded([]byte{byte(OpI32Const)}, c, min(sizeS(c)+pad, 5))
		case 3:
			c := -int64(v)
			want = Instr{Op: OpI64Const, Const: uint64(c)}
			b = appendSPadded([]byte{byte(OpI64Const)}, c, sizeS(c)+pad)
		case 4:
			want = Instr{Op: OpI32Load, A: 2, Offset: v}
			b = padU(padU([]byte{byte(OpI32Load)}, 2), v)
		}
		var in Instr
		r := NewReader(b, 0, "code")
		if err := r.Next(&in); err != nil {
			t.Fatalf("%x: %v", b, err)
		}
		short := AppendInstr(nil, &in)
		seen[len(short) < len(b)]++
		if got := Padded(&in); got != (len(short) < len(b)) {
			t.Fatalf("%x: Padded = %v, shortest %x", b, got, short)
		}
		if want := AppendInstr(nil, &want); string(short) != string(want) {
			t.Fatalf("%x: shortest %x, want %x", b, short, want)
		}
	}
	if seen[true] == 0 || seen[false] == 0 {
		t.Fatalf("padded and shortest encodings: %v", seen)
	}
}

// appendSPadded appends v as a signed LEB128 of exactly width bytes.
func appendSPadded(b []byte, v int64, width int) []byte {
	for i := 0; i < width-1; i++ {
		b = append(b, byte(v&0x7f)|0x80)
		v >>= 7
	}
	return append(b, byte(v&0x7f))
}
