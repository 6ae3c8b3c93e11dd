package profiler

import (
	"math"
	"testing"

	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/profile"
)

// TestWholeHitsPlanned: planned by a profile, a copy of whole functions
// is loaded with exactly the hits it makes on the profiled run. The
// planner's model of the probes alone leaves out the clearing and
// flushing of local loop counters, as much again as the probes in
// wordfreq's strlen.
func TestWholeHitsPlanned(t *testing.T) {
	checked := 0
	for _, p := range oraclePrograms(t) {
		if p.Name != "wordfreq" && p.Name != "calc" {
			continue
		}
		orig, _, freq := exactRun(t, p)
		cs, err := Build(orig, profile.PBL, 4, instrument.Options{}, partition.Options{Weights: freq})
		if err != nil {
			t.Fatal(err)
		}
		for c, res := range cs.Copy {
			per, err := res.FuncHitsOfFrequencies(freq)
			if err != nil {
				t.Fatal(err)
			}
			var hits, slack float64
			for _, h := range per {
				hits += h
				slack += 0.5 // each function's cost is rounded
			}
			if load := float64(cs.Plan.Copies[c].Load); math.Abs(load-hits) > slack {
				t.Errorf("%s copy %d: planned load %v, hits %v", p.Name, c, load, hits)
			}
		}
		checked++
	}
	if checked != 2 {
		t.Fatalf("%d programs checked", checked)
	}
}
