package cfg

import (
	"os"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
)

// FuzzBuild checks that building graphs, DAGs and path counts of any
// module that decodes never panics or hangs.
func FuzzBuild(f *testing.F) {
	n := 0
	for _, sm := range testprogs.SpecModules(f) {
		if sm.Kind != "module" && sm.Kind != "assert_invalid" || n >= 300 {
			continue
		}
		if b, err := os.ReadFile(sm.Path); err == nil && len(b) < 4096 {
			f.Add(b)
			n++
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := wasm.Decode(b)
		if err != nil {
			return
		}
		for i := range m.Code {
			g, err := Build(m, i, Options{NoReturn: func(f uint32) bool { return f == 0 }})
			if err != nil {
				continue
			}
			g.DAG().NumPaths()
		}
	})
}
