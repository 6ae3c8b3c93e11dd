// Benchmark of instrumenting a large module.

package instrument

import (
	"os"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
)

// BenchmarkInstrument measures instrumenting the largest test module, or
// the module named by $PATHPROF_BENCH_MODULE (target, issue 32: a 30 MB
// module in 3 s; profiler's BenchmarkBuildSBL adds SBL's plan).
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
	var res *Result
	for range b.N {
		if res, err = Instrument(orig, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(res.Module))/float64(len(orig)), "size-ratio")
	logSizes(b, &res.Sizes)
}

// logSizes logs what a copy adds to the code section, by kind.
func logSizes(b *testing.B, s *Sizes) {
	total := s.Total()
	b.Logf("%-18s %12s %6s %10s", "added code", "bytes", "share", "sequences")
	for k := range NumSizeKinds {
		if s.Bytes[k] != 0 || s.Count[k] != 0 {
			b.Logf("%-18s %12d %5.1f%% %10d", k, s.Bytes[k], 100*float64(s.Bytes[k])/float64(total), s.Count[k])
		}
	}
	b.Logf("%-18s %12d", "total", total)
}
