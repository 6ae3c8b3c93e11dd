package profiler

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// TestCopiesShareAnalysis checks that copies instrumented from the
// analysis (instrument.Options.Analysis) share its graphs, DAGs and
// numberings, are byte for byte the copies instrumented on their own, and
// leave the analysis as a fresh one: on plans of every mode (whole,
// selective, calls and loop iterations shared out), with the counters in
// memory and in counter modules.
func TestCopiesShareAnalysis(t *testing.T) {
	for _, name := range []string{"sort", "wordfreq", "records", "grid"} {
		p := cProgram(t, name)
		orig, _, freq := exactRun(t, p)
		m, err := wasm.Decode(orig)
		if err != nil {
			t.Fatal(err)
		}
		for _, opt := range []instrument.Options{{}, {SeparateCounters: true, CountHits: true}} {
			pbl, err := Build(orig, profile.PBL, 4, opt, partition.Options{Weights: freq})
			if err != nil {
				t.Fatal(err)
			}
			loops, _ := loopPlan(t, pbl, freq)
			plans := map[string]*partition.Plan{"pbl": pbl.Plan, "sliced": slicedPlan(t, pbl, freq), "loops": loops}
			for _, k := range []int{2, 8} {
				for _, w := range [][][]float64{nil, freq} {
					cs, err := Build(orig, profile.P3, k, opt, partition.Options{Weights: w})
					if err != nil {
						t.Fatal(err)
					}
					plans[fmt.Sprintf("p3 k=%d weighted=%v", k, w != nil)] = cs.Plan
				}
			}
			for label, plan := range plans {
				label = fmt.Sprintf("%s %s separate=%v", name, label, opt.SeparateCounters)
				cs, err := BuildPlan(orig, plan, opt)
				if err != nil {
					t.Fatalf("%s: %v", label, err)
				}
				fresh, _, _, err := analyze(orig, opt)
				if err != nil {
					t.Fatal(err)
				}
				for i, f := range cs.Funcs {
					g := fresh.Funcs[i]
					if !reflect.DeepEqual([]any{f.Graph, f.DAG, f.Num, f.Cuts}, []any{g.Graph, g.DAG, g.Num, g.Cuts}) {
						t.Fatalf("%s: function %d's analysis changed while the copies were instrumented", label, f.Index)
					}
				}
				for c, res := range cs.Copy {
					for i, f := range res.Funcs {
						if a := cs.Funcs[i]; f.Graph != a.Graph || f.DAG != a.DAG || f.Num != a.Num {
							t.Fatalf("%s: copy %d's function %d does not share the analysis", label, c, f.Index)
						}
					}
					alone, err := instrument.Instrument(orig, copyOptions(m, plan, c, opt))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(alone.Module, res.Module) || !bytes.Equal(alone.Counters, res.Counters) {
						t.Fatalf("%s: copy %d differs from the copy instrumented alone", label, c)
					}
				}
			}
		}
	}
}
