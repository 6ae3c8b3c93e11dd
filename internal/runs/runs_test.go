package runs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/tracer"
	"github.com/pathprof/pathprof/profile"
)

// gridSpecs are runs of grid on boards of different sizes, the last of
// which it refuses (exit code 2).
func gridSpecs() []Spec {
	return []Spec{
		{Label: "four", Args: []string{"4"}},
		{Label: "five", Args: []string{"5"}},
		{Label: "six", Args: []string{"6"}},
		{Label: "seven", Args: []string{"7"}},
		{Label: "too small", Args: []string{"3"}},
	}
}

// TestRunsEqualRunsAlone profiles grid's runs in one batch, with each
// strategy on two workers (P3's compiling its copies for each run, in
// waves of one), and checks the batch against each run
// profiled alone: the merged counts are the sum of the runs' profiles
// (and equal their merge), each input's counts are its run's profile,
// which equals the tracer's; the failed run is marked and kept.
func TestRunsEqualRunsAlone(t *testing.T) {
	ctx := context.Background()
	g := testprogs.CProgramByName(t, "grid")
	orig, err := os.ReadFile(g.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	specs := gridSpecs()
	base := runner.Config{ProgramName: "grid.wasm", CacheDir: testprogs.WazeroCacheDir(t)}
	alone := make([]*profile.Profile, len(specs))
	sum := profile.NewMerger()
	for i, s := range specs {
		cfg := base
		cfg.Args = s.Args
		var out bytes.Buffer
		cfg.Stdout = &out
		p, err := profiler.Profile(ctx, orig, profiler.Options{ModulePath: g.Wasm, Label: s.Label, Run: cfg})
		if err != nil {
			t.Fatal(err)
		}
		tr, _, err := tracer.Run(ctx, orig, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if ok, diff := equalCounts(tracer.Counts(p), tr.Paths); !ok {
			t.Fatalf("%s: profile differs from the tracer's: %s", s.Label, diff)
		}
		alone[i] = p
		if err := sum.Add(s.Label, s.Label, p); err != nil {
			t.Fatal(err)
		}
	}
	merged, err := sum.Profile()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []struct {
		strategy     profile.Strategy
		copies, jobs int
	}{{profile.SBL, 1, 0}, {profile.PBL, 2, 0}, {profile.P3, 3, 1}} {
		t.Run(string(st.strategy), func(t *testing.T) {
			var mu sync.Mutex
			var seen []Progress
			got, results, err := Profile(ctx, orig, specs, Options{
				Profile:  profiler.Options{Strategy: st.strategy, Copies: st.copies, Jobs: st.jobs, ModulePath: g.Wasm, Run: base},
				Workers:  2,
				Progress: func(p Progress) { mu.Lock(); seen = append(seen, p); mu.Unlock() },
			})
			if err != nil {
				t.Fatal(err)
			}
			if ok, diff := got.Equal(merged); !ok {
				t.Fatalf("--runs differs from the merge of the runs alone: %s", diff)
			}
			if len(got.Inputs) != len(specs) {
				t.Fatalf("%d inputs, want %d", len(got.Inputs), len(specs))
			}
			for i, in := range got.Inputs {
				j := indexOf(specs, in.Label)
				one, err := got.OfInput(i)
				if err != nil {
					t.Fatal(err)
				}
				if ok, diff := one.Equal(alone[j]); !ok {
					t.Fatalf("input %q: its counts differ from its run alone: %s", in.Label, diff)
				}
				if in.InputSHA256 != alone[j].Inputs[0].InputSHA256 || in.ExitCode != alone[j].ExitCode || in.Strategy != st.strategy {
					t.Fatalf("input %+v, alone %+v", in, alone[j].Inputs[0])
				}
			}
			last := seen[len(seen)-1]
			if len(seen) != len(specs) || last.Done != len(specs) || last.Total != len(specs) || last.Failed != 1 || last.Left != 0 {
				t.Fatalf("progress %+v", seen)
			}
			for _, r := range results {
				if failed := r.Label == "too small"; failed != (r.Err != nil) || failed != (r.ExitCode == 2) {
					t.Fatalf("result %+v", r)
				}
			}
			if got.ExitCode != 2 {
				t.Fatalf("exit code %d, want the failed run's 2", got.ExitCode)
			}
		})
	}
}

func indexOf(specs []Spec, label string) int {
	for i, s := range specs {
		if s.Label == label {
			return i
		}
	}
	return -1
}

func equalCounts(a, b map[tracer.Key]uint64) (bool, string) {
	for k, n := range a {
		if b[k] != n {
			return false, fmt.Sprintf("function %d, %s path [%s]: %d, tracer %d", k.Func, k.Kind, k.Blocks, n, b[k])
		}
	}
	return len(a) == len(b), "the tracer saw other paths"
}

// TestStop stops the runs after the first has ended: every run is still
// in the profile, those not started marked as not run, and the profile
// incomplete; none is lost.
func TestStop(t *testing.T) {
	g := testprogs.CProgramByName(t, "grid")
	orig, err := os.ReadFile(g.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	specs := gridSpecs()
	stop := make(chan string, 1)
	p, results, err := Profile(context.Background(), orig, specs, Options{
		Profile: profiler.Options{ModulePath: g.Wasm, Run: runner.Config{CacheDir: testprogs.WazeroCacheDir(t)}},
		Stop:    stop,
		Progress: func(pg Progress) {
			select {
			case stop <- "SIGINT":
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Inputs) != len(specs) || len(results) != len(specs) || p.Complete {
		t.Fatalf("%d inputs, %d results of %d runs, complete %v", len(p.Inputs), len(results), len(specs), p.Complete)
	}
	notRun := 0
	for _, in := range p.Inputs {
		if strings.HasPrefix(in.Incomplete, "not run: stopped by SIGINT") {
			notRun++
		}
	}
	// The first ended before the stop; the second may have started.
	if notRun < len(specs)-2 {
		t.Fatalf("%d runs marked not run, want at least %d: %+v", notRun, len(specs)-2, p.Inputs)
	}
}
