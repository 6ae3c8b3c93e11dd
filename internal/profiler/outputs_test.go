package profiler

// Tests of outputCheck, the comparison of the copies' outputs by chunk
// digests.

import (
	"bytes"
	"strings"
	"testing"
)

// writeAll writes out to copy c's writer in pieces of n bytes.
func writeAll(o *outputCheck, c int, out []byte, n int) *chunkWriter {
	w := o.writer(c)
	for len(out) > 0 {
		m := min(n, len(out))
		w.Write(out[:m])
		out = out[m:]
	}
	return w
}

func TestOutputCheck(t *testing.T) {
	out := bytes.Repeat([]byte("0123456789abcdef\n"), 3000) // 51,000 bytes: 12 chunks and a part
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
		want string // "" for none
	}{
		{"same", func(b []byte) []byte { return b }, ""},
		{"one byte", func(b []byte) []byte { b[20000] = 'x'; return b }, "copy 2's stdout differs from copy 0's within bytes 16384 to 20479"},
		{"in the last part", func(b []byte) []byte { b[len(b)-1] = 'x'; return b }, "within bytes 49152 to 53247"},
		{"shorter", func(b []byte) []byte { return b[:len(b)-17] }, "within bytes 49152 to 53247"},
		{"shorter by whole chunks", func(b []byte) []byte { return b[:8192] }, "copy 2 wrote 8192 bytes to stdout, copy 0 51000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var early []string
			o := newOutputCheck("stdout", 3, func(err error) { early = append(early, err.Error()) })
			// Copies 0 and 1 write the same in pieces of different sizes;
			// copy 2, maybe otherwise, interleaved with them.
			w0 := o.writer(0)
			w2 := o.writer(2)
			other := tc.edit(bytes.Clone(out))
			for i := 0; i < len(out); i += 1000 {
				w0.Write(out[i:min(i+1000, len(out))])
				if i < len(other) {
					w2.Write(other[i:min(i+1000, len(other))])
				}
			}
			w1 := writeAll(o, 1, out, 333)
			for _, w := range []*chunkWriter{w0, w1, w2} {
				w.Close()
			}
			err := o.finish()
			if tc.want == "" {
				if err != nil || len(early) > 0 {
					t.Fatalf("error %v, reported %q", err, early)
				}
				if len(o.pending) != 0 {
					t.Fatalf("%d chunk digests kept after every copy wrote them", len(o.pending))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if len(early) != 1 || early[0] != err.Error() {
				t.Fatalf("reported %q as it came, then %v", early, err)
			}
		})
	}
}

// TestOutputCheckKeepsLittle checks that the digests kept grow with how
// far the copies are apart, not with the output.
func TestOutputCheckKeepsLittle(t *testing.T) {
	o := newOutputCheck("stdout", 2, nil)
	w0, w1 := o.writer(0), o.writer(1)
	chunk := bytes.Repeat([]byte{'a'}, outputChunk)
	most := 0
	for range 10000 {
		w0.Write(chunk)
		most = max(most, len(o.pending))
		w1.Write(chunk)
	}
	if most != 1 || len(o.pending) != 0 {
		t.Fatalf("kept up to %d digests, %d at the end; want 1 and 0", most, len(o.pending))
	}
}
