package bench

import (
	"context"
	"os"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
)

// BenchmarkSBLOverhead runs the quick subset of the suite (prepared in
// DefaultDir on first use) and reports the geometric mean of SBL's run
// time over the original's, by the report's measure (the running thread's
// CPU time where the system gives it), as sbl-x. One iteration takes
// under a minute; pathprof bench gives the per-program table.
func BenchmarkSBLOverhead(b *testing.B) {
	s, err := Prepare(DefaultDir(), PrepareOptions{})
	if err != nil {
		b.Fatal(err)
	}
	opt := Options{Quick: true, CacheDir: testprogs.WazeroCacheDir(b)}
	if testing.Verbose() {
		opt.Progress = os.Stderr
	}
	var ratio float64
	for b.Loop() {
		rep, err := Run(context.Background(), s, opt)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range rep.Programs {
			if p.Error != "" {
				b.Errorf("%s: %s", p.Name, p.Error)
			}
		}
		ratio = rep.GeoMean[SBL.String()]
	}
	b.ReportMetric(ratio, "sbl-x")
}
