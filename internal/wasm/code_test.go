package wasm

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// manyBodies is a module of n functions of type () -> (), with the bodies
// given (a valid one where bad has none).
func manyBodies(n int, bad map[int][]byte) []byte {
	b := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	section := func(id byte, payload []byte) {
		b = append(b, id)
		b = appendU(b, uint64(len(payload)))
		b = append(b, payload...)
	}
	section(1, []byte{1, 0x60, 0, 0})
	funcs := appendU(nil, uint64(n))
	for range n {
		funcs = append(funcs, 0)
	}
	section(3, funcs)
	code := appendU(nil, uint64(n))
	for i := range n {
		body, ok := bad[i]
		if !ok {
			body = []byte{0, 0x01, 0x0B} // nop; end
		}
		code = appendU(code, uint64(len(body)))
		code = append(code, body...)
	}
	section(10, code)
	return b
}

// TestDecodeBodiesInParallel checks that checking the bodies in parallel
// reports what checking them one after the other does: the first
// malformed body's error, a framing error after it notwithstanding.
func TestDecodeBodiesInParallel(t *testing.T) {
	malformed := [][]byte{
		{0, 0x0B, 0x01},       // bytes after the final end
		{0, 0x01},             // no end
		{0, 0x41},             // i32.const without its immediate
		{1, 1, 0x55, 0x0B},    // a local of no type: a framing error
		{1, 0xFF, 0xFF, 0xFF}, // a local count cut short
	}
	r := rand.New(rand.NewPCG(3, 4))
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	for it := range 60 {
		n := 1 + r.IntN(3000)
		bad := map[int][]byte{}
		for range r.IntN(4) {
			bad[r.IntN(n)] = malformed[r.IntN(len(malformed))]
		}
		mod := manyBodies(n, bad)
		runtime.GOMAXPROCS(1)
		_, want := Decode(mod)
		runtime.GOMAXPROCS(4)
		_, got := Decode(mod)
		if (want == nil) != (len(bad) == 0) {
			t.Fatalf("module %d (%d bad bodies): one at a time: %v", it, len(bad), want)
		}
		if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
			t.Fatalf("module %d: in parallel: %v, one at a time: %v", it, got, want)
		}
	}
}
