package profiler

// This file plans a partitioned run by the previous profile of its module
// (package history), and keeps the run's profile for the next one.

import (
	"github.com/pathprof/pathprof/internal/history"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/profile"
)

// previousWeights returns the edge frequencies of the previous profile the
// store holds for the module orig at path, and what they are; nil when it
// holds none that matches a function that ran.
func previousWeights(orig []byte, path string, store *history.Store) ([][]float64, *profile.Weights, error) {
	if !store.Holds(hashHex(orig), path) {
		return nil, nil, nil
	}
	a, err := Analyze(orig)
	if err != nil {
		return nil, nil, err
	}
	prev, err := store.Find(a.SHA256, path, historyFuncs(a.Result.Funcs))
	if err != nil || prev == nil {
		return nil, nil, err
	}
	w := &profile.Weights{Source: profile.WeightsPrevious, SHA256: prev.Profile.Module.SHA256}
	if !prev.Same {
		if prev.Matched == 0 {
			return nil, nil, nil
		}
		w.Matched, w.Ran = prev.Matched, prev.Ran
	}
	freq, err := a.Result.EdgeFrequencies(prev.Profile.Functions)
	if err != nil {
		return nil, nil, err
	}
	return freq, w, nil
}

// historyFuncs is what the store keeps of a module's functions.
func historyFuncs(fs []*instrument.Func) []history.Func {
	out := make([]history.Func, len(fs))
	for i, f := range fs {
		out[i] = history.Func{Index: f.Index, Name: f.Name}
		if f.Num != nil {
			out[i].DAG = f.DAG
		}
	}
	return out
}
