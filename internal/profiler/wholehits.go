package profiler

// This file prices every function profiled whole by the instrumenter
// itself, for a plan made with weights.

import (
	"slices"

	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/wasm"
)

// wholeHits is, per defined function, the hits of its probes on the run
// of weights when a copy profiles it whole, placed by them as a plan's
// copies place them (partition.Options.WholeHits): one copy of the module
// with every function that ran profiled whole, and its hits computed from
// the weights.
func wholeHits(orig []byte, m *wasm.Module, opt instrument.Options, weights [][]float64) ([]float64, error) {
	ran := func(w []float64) bool { return slices.ContainsFunc(w, func(x float64) bool { return x > 0 }) }
	opt.Mode = func(f *instrument.Func) instrument.Mode {
		w := weights[f.Index-m.NumImportedFuncs]
		if !ran(w) {
			return instrument.Mode{Kind: partition.None}
		}
		return instrument.Mode{Kind: partition.BallLarus, Freq: w}
	}
	res, err := instrument.Instrument(orig, opt)
	if err != nil {
		return nil, err
	}
	return res.FuncHitsOfFrequencies(weights)
}
