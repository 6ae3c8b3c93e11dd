// Benchmark of instrumenting a large module.

package instrument

import (
	"os"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
)

// BenchmarkInstrument measures instrumenting the largest test module, or
// the module named by $PATHPROF_BENCH_MODULE (target: a 30 MB module in
// under 5 s).
func BenchmarkInstrument(b *testing.B) {
	path := os.Getenv("PATHPROF_BENCH_MODULE")
	if path == "" {
		path = testprogs.LargestModule(b)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(orig)))
	for range b.N {
		if _, err := Instrument(orig, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
