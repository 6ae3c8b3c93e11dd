// Tests of ScoreRun, the sample-trace-check-score step.
package osp

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/runner"
)

// TestScoreRun scores grid's run and checks it against the same run
// sampled and counted one step at a time: the runs in order, each with the
// program's own output, the same scores, the unbounded counts' scores in
// UnboundedCounts' order; then that a profile of another run, or runs
// that Run finds printed differently, are refused.
func TestScoreRun(t *testing.T) {
	ctx := context.Background()
	var p program
	for _, c := range benchPrograms(t, false) {
		if c.Name == "grid" {
			p = c
		}
	}
	orig, ins := readInstrumented(t, p)
	var sample, trace *Program
	for _, c := range []struct {
		prog **Program
		mode Mode
	}{{&sample, ModeSample}, {&trace, ModeTrace}} {
		prog, err := Compile(ctx, ins, c.mode, p.Config(t, &bytes.Buffer{}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { prog.Close(ctx) })
		*c.prog = prog
	}
	opt := Options{MeanSkip: 100, Lengths: []int{2, 4, 8}}
	var runs, outputs []string
	run := func(what string, run func(runner.Config) (runner.Result, error)) error {
		var out bytes.Buffer
		_, err := run(p.Config(t, &out))
		runs, outputs = append(runs, what), append(outputs, out.String())
		return err
	}
	rs, err := ScoreRun(ctx, sample, trace, ScoreOptions{Sampling: opt, Unbounded: true, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(runs, []string{SampledRun, TracedRun}) || outputs[0] == "" || outputs[0] != outputs[1] {
		t.Fatalf("runs %q, outputs %q", runs, outputs)
	}

	prof, _, err := Run(ctx, orig, opt, p.Config(t, &bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	ex, _, _, err := Count(ctx, orig, opt.Lengths, p.Config(t, &bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ScoreProfile(ex, prof, []int{10, 100})
	if err != nil {
		t.Fatal(err)
	}
	if rs.Exact.Blocks != ex.Blocks || !reflect.DeepEqual(rs.Score, want) {
		t.Errorf("ScoreRun scored %d block entries, %+v; step by step %d, %+v", rs.Exact.Blocks, rs.Score.Overall, ex.Blocks, want.Overall)
	}
	if len(rs.Unbounded) != 2 || rs.Unbounded[0].Every || !rs.Unbounded[1].Every || len(rs.Unbounded[1].Score.Lengths) != 3 {
		t.Errorf("unbounded scores %+v", rs.Unbounded)
	}

	// A profile of another run: grid with another argument.
	other := p
	other.Args = []string{"3"}
	otherProf, _, err := Run(ctx, orig, opt, other.Config(t, &bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	runs = nil
	if _, err := ScoreRun(ctx, nil, trace, ScoreOptions{Profile: otherProf, Run: run}); err == nil || !strings.Contains(err.Error(), "not comparable") {
		t.Errorf("a profile of another run: %v", err)
	}
	if !slices.Equal(runs, []string{TracedRun}) {
		t.Errorf("scoring a profile made the runs %q", runs)
	}
	differ := errors.New("printed differently")
	_, err = ScoreRun(ctx, sample, trace, ScoreOptions{Sampling: opt, Run: func(what string, r func(runner.Config) (runner.Result, error)) error {
		if err := run(what, r); err != nil || what == SampledRun {
			return err
		}
		return differ
	}})
	if !errors.Is(err, differ) {
		t.Errorf("runs that Run refuses: %v", err)
	}
}
