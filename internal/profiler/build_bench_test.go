// Benchmarks of instrumenting a module with each strategy, as `pathprof
// instrument` does: analysis, plan (with the static estimate for PBL and
// P3) and every copy.

package profiler

import (
	"os"
	"testing"

	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/profile"
)

// benchBuild builds the copies of the largest test module, or of the
// module named by $PATHPROF_BENCH_MODULE (issue 32's targets: a 30 MB
// module instrumented for SBL in 3 s; P3's planning is most of its
// instrumenting). plan-s is the time partition.Make took.
func benchBuild(b *testing.B, strategy profile.Strategy, k int) {
	path := os.Getenv("PATHPROF_BENCH_MODULE")
	if path == "" {
		path = testprogs.LargestModule(b)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(orig)))
	b.ReportAllocs()
	var cs *Copies
	for b.Loop() {
		if cs, err = Build(orig, strategy, k, instrument.Options{}, partition.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(cs.PlanSeconds, "plan-s")
}

func BenchmarkBuildSBL(b *testing.B)  { benchBuild(b, profile.SBL, 1) }
func BenchmarkBuildP3k2(b *testing.B) { benchBuild(b, profile.P3, 2) }
func BenchmarkBuildP3k4(b *testing.B) { benchBuild(b, profile.P3, 4) }
