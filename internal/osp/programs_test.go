// The test programs OSP's tests run, instrumented and compiled.

package osp

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
)

type program = testprogs.Run

// benchPrograms are the committed C programs, the Go hello program and
// the sort package's test binary.
func benchPrograms(t *testing.T, withGo bool) []program {
	ps := testprogs.CRuns(t)
	if !withGo {
		return ps
	}
	return append(ps, program{Name: "hello", Path: testprogs.GoHello(t)}, testprogs.GoTestRun(t, "sort"))
}

// instrumented reads and instruments p's module.
func instrumented(t testing.TB, p program) *Instrumented {
	_, ins := readInstrumented(t, p)
	return ins
}

// readInstrumented returns p's module and the module instrumented.
func readInstrumented(t testing.TB, p program) ([]byte, *Instrumented) {
	orig, err := os.ReadFile(p.Path)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := Instrument(orig)
	if err != nil {
		t.Fatal(err)
	}
	return orig, ins
}

// compiled returns p's module instrumented and compiled in mode; the
// program is closed when the test ends.
func compiled(t testing.TB, p program, mode Mode) (*Instrumented, *Program) {
	ctx := context.Background()
	ins := instrumented(t, p)
	prog, err := Compile(ctx, ins, mode, p.Config(t, &bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Close(ctx) })
	return ins, prog
}
