package instrument

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
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

// TestUnprofiledBodies checks that a copy leaves the bodies of the
// functions it does not profile as they are, without scratch locals:
// byte for byte, but for the memory.size and memory.grow that counters in
// the program's memory rewrite.
func TestUnprofiledBodies(t *testing.T) {
	paths := []string{testprogs.GoHello(t)}
	for _, p := range testprogs.CPrograms(t) {
		paths = append(paths, p.Wasm)
	}
	half := func(f *Func) Mode {
		if f.Index%2 == 1 {
			return Mode{Kind: partition.None}
		}
		return Mode{Kind: partition.BallLarus}
	}
	for _, path := range paths {
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Instrument(orig, Options{Mode: half})
		if err != nil {
			t.Fatal(err)
		}
		om, err := wasm.Decode(orig)
		if err != nil {
			t.Fatal(err)
		}
		cm, err := wasm.Decode(res.Module)
		if err != nil {
			t.Fatal(err)
		}
		same, probed := 0, 0
		for i, f := range res.Funcs {
			ob, cb := om.Code[i].Body, cm.Code[i].Body
			if f.Index%2 == 0 {
				if f.Placement != nil && len(cb) > len(ob) {
					probed++
				}
				continue
			}
			if bytes.Equal(ob, cb) {
				same++
				continue
			}
			if !usesMemorySize(t, &om.Code[i]) {
				t.Errorf("%s: function %d (%s), not profiled, has a body of %d bytes, the original %d", path, f.Index, f.Name, len(cb), len(ob))
			}
		}
		if same == 0 || probed == 0 {
			t.Errorf("%s: %d unprofiled functions kept their bodies, %d profiled ones grew", path, same, probed)
		}
	}
}

// usesMemorySize says whether a body holds memory.size or memory.grow.
func usesMemorySize(t *testing.T, c *wasm.Code) bool {
	r := wasm.NewReader(c.Body[c.ExprOff:], 0, "code")
	var in wasm.Instr
	for !r.Done() {
		if err := r.Next(&in); err != nil {
			t.Fatal(err)
		}
		if in.Op == 0x3F || in.Op == 0x40 {
			return true
		}
	}
	return false
}
