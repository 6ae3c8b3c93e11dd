// Benchmark of HotList.AddSample.

package osp

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
)

// BenchmarkAddSample measures what the worker spends per sample in the
// hot list, on samples cut at random places of real runs' block entries
// (the C programs' first 20 million), at the default bound and lengths,
// with subpaths coded as id differences (plain) and by the program's
// block model (compact).
func BenchmarkAddSample(b *testing.B) {
	for _, p := range testprogs.CRuns(b) {
		if p.Name == "records" || p.Name == "grid" {
			continue
		}
		samples, ins := runSamples(b, p, 4096, SampleBlocks(DefaultLengths))
		for _, compact := range []bool{false, true} {
			var m *blockModel
			name := p.Name + "/plain"
			if compact {
				m, name = ins.model, p.Name+"/compact"
			}
			b.Run(name, func(b *testing.B) {
				h, err := newHotList(DefaultMemory, DefaultLengths, 1, m, Counting)
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					h.AddSample(samples[i%len(samples)])
				}
			})
		}
	}
}

// runSamples traces a run and cuts n samples of m blocks at random block
// entries of its first 20 million; it returns them with the instrumented
// module.
func runSamples(b testing.TB, p testprogs.Run, n, m int) ([][]uint32, *Instrumented) {
	ctx := context.Background()
	ins, prog := compiled(b, p, ModeTrace)
	rc := p.Config(b, &bytes.Buffer{})
	var stream []uint32
	if _, err := prog.trace(ctx, rc, func(ids []uint32) {
		if len(stream) < 20_000_000 {
			stream = append(stream, ids...)
		}
	}); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([][]uint32, n)
	for i := range out {
		at := rng.IntN(len(stream) - m)
		out[i] = stream[at : at+m]
	}
	return out, ins
}
