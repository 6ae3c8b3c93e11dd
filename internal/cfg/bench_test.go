package cfg

import (
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
)

// pipeline decodes a module, builds every function's graph, DAG and path
// count, and encodes the module again.
func pipeline(b testing.TB, mod []byte) {
	m, err := wasm.Decode(mod)
	if err != nil {
		b.Fatal(err)
	}
	for i := range m.Code {
		g, err := Build(m, i, Options{})
		if err != nil {
			b.Fatal(err)
		}
		g.DAG().NumPaths()
	}
	if _, err := m.Encode(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPipeline measures decode + CFG + encode throughput on the
// largest module of the tests (target: at least 30 MB/s).
func BenchmarkPipeline(b *testing.B) {
	mod, err := os.ReadFile(testprogs.LargestModule(b))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(mod)))
	b.ResetTimer()
	for range b.N {
		pipeline(b, mod)
	}
}

// BenchmarkPipelineMemory reports the peak heap of one pipeline run, the
// module's own bytes included, as a multiple of the module size (target:
// under 8). Sampling the heap slows the run, so it is kept apart from the
// throughput benchmark.
func BenchmarkPipelineMemory(b *testing.B) {
	path := testprogs.LargestModule(b)
	var peakX float64
	for range b.N {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		var peak atomic.Uint64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > peak.Load() {
					peak.Store(ms.HeapAlloc)
				}
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
		}()
		mod, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		pipeline(b, mod)
		close(stop)
		<-done
		x := float64(peak.Load()-base) / float64(len(mod))
		peakX = max(peakX, x)
		b.ReportMetric(float64(len(mod))/1e6, "module-MB")
	}
	b.ReportMetric(peakX, "peak-heap-x")
}
