package profiler

// This file prices every function profiled whole by the instrumenter
// itself, for a plan made with weights.

import (
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/wasm"
)

// wholeHits is, per defined function, the hits of its probes on the run
// of weights when a copy profiles it whole, placed by them as a plan's
// copies place them (partition.Options.WholeHits): one copy of the module
// with every function that ran profiled whole, and its hits computed from
// the weights. What the model leaves out sits around loops (local loop
// counters), so a function without one is left to the model (-1) and to
// no probes here, which saves most of the copy's time. The copy is made
// from analysis, as the plan's copies are, not analysed again.
func wholeHits(orig []byte, m *wasm.Module, analysis *instrument.Result, opt instrument.Options, weights [][]float64) ([]float64, error) {
	ran := func(w []float64) bool { return slices.ContainsFunc(w, func(x float64) bool { return x > 0 }) }
	loops := func(d *cfg.DAG) bool {
		return d != nil && slices.ContainsFunc(d.Edges, func(e cfg.DAGEdge) bool { return e.Kind == cfg.EdgeDummyExit })
	}
	priced := make([]bool, len(weights))
	opt.Mode = func(f *instrument.Func) instrument.Mode {
		def := f.Index - m.NumImportedFuncs
		w := weights[def]
		if !ran(w) || !loops(f.DAG) {
			return instrument.Mode{Kind: partition.None}
		}
		priced[def] = true
		return instrument.Mode{Kind: partition.BallLarus, Freq: w}
	}
	opt.Analysis = analysis
	res, err := instrument.Instrument(orig, opt)
	if err != nil {
		return nil, err
	}
	hits, err := res.FuncHitsOfFrequencies(weights)
	if err != nil {
		return nil, err
	}
	for def, ok := range priced {
		if !ok {
			hits[def] = -1
		}
	}
	return hits, nil
}
