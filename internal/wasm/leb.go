package wasm

// This file reads and writes LEB128 integers, the binary format's
// variable-length encoding.

import "errors"

var (
	errLEBTooLong   = errors.New("integer representation too long")
	errLEBTooLarge  = errors.New("integer too large")
	errLEBTruncated = errors.New("unexpected end")
)

// readU returns an unsigned LEB128 value of at most bits bits from b,
// and the number of bytes it took. It rejects encodings longer than
// ceil(bits/7) bytes and unused bits that are set, as the spec requires.
func readU(b []byte, bits uint) (uint64, int, error) {
	// Most immediates take one byte: read inline, without the loop.
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1, nil
	}
	return readLEB(b, bits, false)
}

// readS returns a signed LEB128 value of at most bits bits (32, 33 or 64).
// Its unused bits must all equal the value's sign bit.
func readS(b []byte, bits uint) (int64, int, error) {
	if len(b) > 0 && b[0] < 0x80 {
		// One byte: its bit 6 is the sign.
		return int64(int8(b[0]<<1) >> 1), 1, nil
	}
	v, n, err := readLEB(b, bits, true)
	return int64(v), n, err
}

// readLEB reads an unsigned or signed LEB128 value for readU and readS: the
// two differ only in what the last possible byte may hold and in the sign
// extension, so one loop serves both.
func readLEB(b []byte, bits uint, signed bool) (uint64, int, error) {
	var v uint64
	var shift uint
	max := int((bits + 6) / 7)
	for i := 0; ; i++ {
		if i >= len(b) {
			return 0, 0, errLEBTruncated
		}
		if i >= max {
			return 0, 0, errLEBTooLong
		}
		c := b[i]
		if i == max-1 {
			// The continuation bit must be clear, and the bits beyond the
			// value's width zero (unsigned) or copies of its sign bit.
			if c&0x80 != 0 {
				return 0, 0, errLEBTooLong
			}
			used := bits - shift // value bits in this byte, sign bit included
			if used < 7 {
				upper := c &^ (1<<used - 1)
				if signed && c>>(used-1)&1 == 1 {
					if upper != 0x7f&^(1<<used-1) {
						return 0, 0, errLEBTooLarge
					}
				} else if upper != 0 {
					return 0, 0, errLEBTooLarge
				}
			}
		}
		v |= uint64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if signed && shift < 64 && c&0x40 != 0 {
				v |= ^uint64(0) << shift
			}
			return v, i + 1, nil
		}
	}
}

// AppendULEB128 appends the shortest unsigned LEB128 encoding of v, for
// code outside the package that writes module bytes by hand.
func AppendULEB128(b []byte, v uint64) []byte { return appendU(b, v) }

// AppendSLEB128 appends the shortest signed LEB128 encoding of v, for
// code outside the package that writes module bytes by hand.
func AppendSLEB128(b []byte, v int64) []byte { return appendS(b, v) }

// appendU appends the shortest unsigned LEB128 encoding of v.
func appendU(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// appendU32 appends the shortest unsigned LEB128 encoding of v, a u32
// value such as an index.
func appendU32(b []byte, v uint32) []byte { return appendU(b, uint64(v)) }

// appendUPadded appends v as an unsigned LEB128 of exactly width bytes
// (width must be large enough), so a field can be rewritten in place.
func appendUPadded(b []byte, v uint64, width int) []byte {
	for i := 0; i < width-1; i++ {
		b = append(b, byte(v&0x7f)|0x80)
		v >>= 7
	}
	return append(b, byte(v&0x7f))
}

// appendS appends the shortest signed LEB128 encoding of v.
func appendS(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// sizeU is the length of the shortest unsigned LEB128 encoding of v.
func sizeU(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// sizeS is the length of the shortest signed LEB128 encoding of v.
func sizeS(v int64) int {
	n := 1
	for v >= 64 || v < -64 {
		v >>= 7
		n++
	}
	return n
}
