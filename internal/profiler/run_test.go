package profiler

// This file tests the run step: a copy compiled once and run again.

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"reflect"
	"testing"

	"github.com/pathprof/pathprof/internal/instrument"
)

// TestCopyProgramRunsAgain: a copy compiled once and run three times
// prints, counts and counts calls the same each time as a copy compiled
// for one run: every run starts from a fresh instance, its counters (in
// the program's memory or in a counter module) and call counters at zero.
func TestCopyProgramRunsAgain(t *testing.T) {
	ctx := context.Background()
	p := cProgram(t, "wordfreq")
	orig, _, freq := exactRun(t, p)
	for _, opt := range []instrument.Options{{}, {SeparateCounters: true}} {
		_, cs := slicedCopies(t, orig, freq, 2, opt)
		for c, res := range cs.Copy {
			label := fmt.Sprintf("counter module %v, copy %d", opt.SeparateCounters, c)
			var want bytes.Buffer
			once := RunCopy(ctx, res, p.Config(t, &want))
			if err := once.Failure(); err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			if len(once.Counts) == 0 || len(once.Calls) == 0 {
				t.Fatalf("%s: %d functions counted, %d call counters", label, len(once.Counts), len(once.Calls))
			}
			prog, err := CompileCopy(ctx, res, p.Config(t, &bytes.Buffer{}))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				var out bytes.Buffer
				run := prog.Run(ctx, p.Config(t, &out))
				if err := run.Failure(); err != nil {
					t.Fatalf("%s run %d: %v", label, i, err)
				}
				if out.String() != want.String() || run.Result.ExitCode != once.Result.ExitCode {
					t.Fatalf("%s run %d: printed or exited differently", label, i)
				}
				if !reflect.DeepEqual(run.Counts, once.Counts) || !maps.Equal(run.Calls, once.Calls) {
					t.Fatalf("%s run %d: counts or calls differ from a single run's", label, i)
				}
			}
			if err := prog.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}
