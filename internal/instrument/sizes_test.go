package instrument

import (
	"encoding/binary"
	"os"
	"testing"

	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/testprogs"
)

// codePayload returns the size of a module's code section payload, read
// from the section headers.
func codePayload(t *testing.T, b []byte) int64 {
	t.Helper()
	for pos := 8; pos < len(b); {
		id := b[pos]
		size, n := binary.Uvarint(b[pos+1:])
		if n <= 0 {
			t.Fatalf("bad section size at %d", pos+1)
		}
		if id == 10 {
			return int64(size)
		}
		pos += 1 + n + int(size)
	}
	t.Fatal("no code section")
	return 0
}

// TestSizes checks that the kinds of added code account for every byte
// the copy adds to the code section, in copies with counters in memory
// and in a counter module, with hit counts, without loop counters and
// with every function's calls shared out.
func TestSizes(t *testing.T) {
	paths := []string{testprogs.GoHello(t)}
	for _, p := range testprogs.CPrograms(t) {
		paths = append(paths, p.Wasm)
	}
	sliced := func(f *Func) Mode { return Mode{Kind: partition.Sliced, Slices: 2, Slots: []int{1}} }
	opts := []Options{{}, {SeparateCounters: true}, {CountHits: true}, {NoLoopCounts: true}, {Mode: sliced}}
	for _, path := range paths {
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, opt := range opts {
			res, err := Instrument(orig, opt)
			if err != nil {
				t.Fatal(err)
			}
			s := &res.Sizes
			if s.Bytes[SizeOther] != 0 {
				t.Errorf("%s, options %d: %d bytes of no kind", path, i, s.Bytes[SizeOther])
			}
			if got, want := s.Total(), codePayload(t, res.Module)-codePayload(t, orig); got != want {
				t.Errorf("%s, options %d: the kinds sum to %d bytes, the code section grew by %d", path, i, got, want)
			}
			if s.Bytes[SizeDense] <= 0 || s.Bytes[SizeLocals] <= 0 {
				t.Errorf("%s, options %d: %d bytes of dense counts, %d of locals", path, i, s.Bytes[SizeDense], s.Bytes[SizeLocals])
			}
			if (s.Bytes[SizeHits] > 0) != opt.CountHits || (s.Bytes[SizeSliced] > 0) != (opt.Mode != nil) {
				t.Errorf("%s, options %d: %d bytes of hit counts, %d of sliced calls", path, i, s.Bytes[SizeHits], s.Bytes[SizeSliced])
			}
		}
	}
}
