package profiler

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/profile"
)

// TestCompileWorkers: the copies compiled at once share the cores out
// whole, every copy gets at least one worker, and none gets more than
// one above another.
func TestCompileWorkers(t *testing.T) {
	for cores := 1; cores <= 16; cores++ {
		for n := 1; n <= 12; n++ {
			sum, lo, hi := 0, cores, 0
			for i := range n {
				w := compileWorkers(cores, n, i)
				sum += w
				lo, hi = min(lo, w), max(hi, w)
			}
			if lo < 1 || hi-lo > 1 || (n <= cores && sum != cores) || (n > cores && hi != 1) {
				t.Errorf("%d cores, %d copies: %d workers in all, %d to %d each", cores, n, sum, lo, hi)
			}
		}
	}
}

// TestWorkerWaves: a Worker with more copies than run at once (Jobs)
// holds no compiled copy and compiles them for each run, in waves; one
// with as many as run at once keeps them compiled. Either's runs make
// the profile of each run profiled alone.
func TestWorkerWaves(t *testing.T) {
	ctx := context.Background()
	p := cProgram(t, "grid")
	orig := readModule(t, p)
	for _, jobs := range []int{1, 3, 4} {
		pr, err := Prepare(orig, Options{Strategy: profile.P3, Copies: 4, Jobs: jobs, ModulePath: p.Path})
		if err != nil {
			t.Fatal(err)
		}
		w, err := pr.Compile(ctx, p.Config(t, &bytes.Buffer{}))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := w.CompilesPerRun(), jobs < 4; got != want {
			t.Fatalf("jobs %d: a worker of 4 copies compiles them per run: %v, want %v", jobs, got, want)
		}
		w.Alone = true
		for _, args := range [][]string{{"5"}, {"6"}} {
			cfg := p.Config(t, &bytes.Buffer{})
			cfg.Args = args
			alone, err := Profile(ctx, orig, Options{ModulePath: p.Path, Run: cfg})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Stdout = &bytes.Buffer{}
			got, err := w.Profile(ctx, "", cfg, nil)
			if err != nil {
				t.Fatalf("jobs %d, grid %s: %v", jobs, args[0], err)
			}
			if ok, diff := alone.Equal(got); !ok {
				t.Fatalf("jobs %d, grid %s: the worker's profile differs from the run's alone: %s", jobs, args[0], diff)
			}
		}
		w.Close(ctx)
	}
}

// TestWavesSaid: a run of more copies than run at once says in how many
// waves they run; one that runs them all at once does not.
func TestWavesSaid(t *testing.T) {
	p := cProgram(t, "grid")
	orig := readModule(t, p)
	for _, c := range []struct {
		jobs int
		want string
	}{{1, "running 4 copies 1 at a time, in 4 waves"}, {3, "running 4 copies 3 at a time, in 2 waves"}, {4, ""}} {
		var log bytes.Buffer
		if _, err := Profile(context.Background(), orig, Options{Strategy: profile.P3, Copies: 4, Jobs: c.jobs, ModulePath: p.Path, Run: p.Config(t, &bytes.Buffer{}), Progress: &log}); err != nil {
			t.Fatal(err)
		}
		if said := strings.Contains(log.String(), " at a time, in "); c.want == "" && said || c.want != "" && !strings.Contains(log.String(), c.want) {
			t.Errorf("jobs %d: want %q in\n%s", c.jobs, c.want, log.String())
		}
	}
}
