package profiler

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// FuzzBuildPlan feeds plans, as a manifest carries them, to BuildPlan: a
// plan that does not fit the module is refused with an error, never a
// panic, and one that is accepted gives valid copies. Seeds are real plans
// of grid, with and without edge frequencies, and one that shares out
// calls.
func FuzzBuildPlan(f *testing.F) {
	orig := readC(f, "grid")
	a, err := Analyze(orig)
	if err != nil {
		f.Fatal(err)
	}
	freq := make([][]float64, len(a.Result.Funcs))
	for i, fn := range a.Result.Funcs {
		if fn.DAG == nil || i%2 == 1 {
			continue
		}
		w, err := numbering.StaticWeights(fn.DAG)
		if err != nil {
			f.Fatal(err)
		}
		for j := range w {
			w[j] = math.Round(w[j] * 1000)
		}
		freq[i] = w
	}
	for _, seed := range []struct {
		strategy profile.Strategy
		k        int
		opt      partition.Options
	}{{"sbl", 1, partition.Options{Weights: freq}}, {"p3", 2, partition.Options{}}, {"p3", 3, partition.Options{Weights: freq}}} {
		cs, err := Build(orig, seed.strategy, seed.k, instrument.Options{}, seed.opt)
		if err != nil {
			f.Fatal(err)
		}
		b, err := json.Marshal(cs.Plan)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		if seed.strategy == "p3" && seed.opt.Weights != nil {
			// And with calls shared out.
			if b, err = json.Marshal(slicedPlan(f, cs, freq)); err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p partition.Plan
		if json.Unmarshal(b, &p) != nil {
			return
		}
		cs, err := BuildPlan(orig, &p, instrument.Options{})
		if err != nil {
			return
		}
		for c, res := range cs.Copy {
			if _, err := wasm.Decode(res.Module); err != nil {
				t.Fatalf("copy %d of an accepted plan does not decode: %v", c, err)
			}
		}
	})
}

// FuzzMergeParts feeds a part, as hosts write it (pathprof exec, or the
// pathprof.mjs of a JavaScript host, whose pages may POST it from
// anywhere), to MergeParts beside the real part of the other copy: a part
// that does not fit is refused with an error, never a panic, and a merged
// profile is valid. Seeds are the real parts of grid's two P3 copies.
func FuzzMergeParts(f *testing.F) {
	p := testprogs.CProgramByName(f, "grid")
	orig := readC(f, "grid")
	cs, err := Build(orig, profile.P3, 2, instrument.Options{SeparateCounters: true}, partition.Options{})
	if err != nil {
		f.Fatal(err)
	}
	man, err := WriteDir(f.TempDir(), p.Wasm, orig, cs, nil, HostJS)
	if err != nil {
		f.Fatal(err)
	}
	fuzzMerge(f, p, cs, func(c int, run *CopyRun, sum []byte, _ runner.Config) *Part {
		return NewPart(man, c, run, sum)
	}, func(parts []*Part) (*profile.Profile, error) {
		return MergeParts(man, cs, parts)
	})
}

// fuzzMerge seeds f with the parts, as newPart makes them, of p's two
// copies cs, and fuzzes merge with a part beside the real part of the
// other copy: MergeParts and MergeRun take parts from the same untrusted
// places, so they are held to the same checks.
func fuzzMerge(f *testing.F, p testprogs.CProgram, cs *Copies,
	newPart func(c int, run *CopyRun, sum []byte, cfg runner.Config) *Part,
	merge func(parts []*Part) (*profile.Profile, error)) {
	var real [2]*Part
	for c := range real {
		var out bytes.Buffer
		cfg := p.Config(f)
		cfg.Stdout = &out
		run := RunCopy(context.Background(), cs.Copy[c], cfg)
		if err := run.Failure(); err != nil {
			f.Fatal(err)
		}
		real[c] = newPart(c, run, outputSum(out.Bytes()), cfg)
		b, err := json.Marshal(real[c])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		part, err := ParsePart(b)
		if err != nil {
			return
		}
		other := real[0]
		if part.Copy == 0 {
			other = real[1]
		}
		prof, err := merge([]*Part{other, part})
		if err != nil {
			return
		}
		if err := prof.Validate(); err != nil {
			t.Fatalf("merged an invalid profile: %v", err)
		}
	})
}

func readC(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(testprogs.CProgramByName(t, name).Wasm)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzMergeRun feeds a work unit's part, as a batch engine's task wrote
// it on some node, to MergeRun beside the real part of the run's other
// unit: a part that is not that unit's is refused with an error, never a
// panic, and a merged profile is valid. Seeds are the real parts of
// grid's two P3 copies on one run.
func FuzzMergeRun(f *testing.F) {
	p := testprogs.CProgramByName(f, "grid")
	orig := readC(f, "grid")
	cs, err := Build(orig, profile.P3, 2, instrument.Options{}, partition.Options{})
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	man, err := WriteDir(dir, p.Wasm, orig, cs, nil, "")
	if err != nil {
		f.Fatal(err)
	}
	man.SetRuns([]string{"grid", "other"})
	fuzzMerge(f, p, cs, func(u int, run *CopyRun, sum []byte, cfg runner.Config) *Part {
		return NewUnitPart(man, u, run, sum, "grid", cfg, nil)
	}, func(parts []*Part) (*profile.Profile, error) {
		return MergeRun(man, cs, parts)
	})
}
