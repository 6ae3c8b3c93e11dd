package partition

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
)

// TestFindCallersParallel checks FindCallers, which scans the bodies on
// every core, against one scan of the bodies in order, on the C programs
// and the largest test module, with one and with three workers.
func TestFindCallersParallel(t *testing.T) {
	paths := []string{testprogs.LargestModule(t)}
	for _, p := range testprogs.CPrograms(t) {
		paths = append(paths, p.Wasm)
	}
	for _, path := range paths {
		_, m := wasmtest.DecodeFile(t, path)
		sites := make([]int, m.NumFuncs())
		refs := make([]bool, m.NumFuncs())
		var in wasm.Instr
		for i := range m.Code {
			c := &m.Code[i]
			r := wasm.NewReader(c.Body, c.OrigOff, "code")
			r.Seek(int(c.ExprOff))
			for !r.Done() {
				if err := r.Next(&in); err != nil {
					t.Fatal(err)
				}
				switch in.Op {
				case wasm.OpCall, wasm.OpReturnCall:
					sites[in.A]++
				case wasm.OpRefFunc:
					refs[in.A] = true
				}
			}
		}
		var first *Callers
		for _, procs := range []int{1, 3} {
			old := runtime.GOMAXPROCS(procs)
			c, err := FindCallers(m)
			runtime.GOMAXPROCS(old)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Sites, sites) {
				t.Fatalf("%s, %d workers: call sites differ from one scan's", path, procs)
			}
			for fn, ref := range refs {
				if ref && !c.Escapes[fn] {
					t.Fatalf("%s, %d workers: function %d's reference is taken, not marked escaping", path, procs, fn)
				}
			}
			if first == nil {
				first = c
			} else if !reflect.DeepEqual(c, first) {
				t.Fatalf("%s: 3 workers find other callers than 1", path)
			}
		}
	}
}
