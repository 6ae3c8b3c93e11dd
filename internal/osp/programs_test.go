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

// copyVariant is a way the tests build a sampling copy: with every other
// function block by block (mixed), and with jumps threaded or not.
type copyVariant struct {
	name          string
	mixed, thread bool
}

// copyVariants are the copy as Instrument makes it, mixed, and unthreaded.
var copyVariants = []copyVariant{{"", false, true}, {" mixed", true, true}, {" unthreaded", false, false}}

// instrument builds the sampling copy of orig as v says.
func (v copyVariant) instrument(t *testing.T, orig []byte) *Instrumented {
	t.Helper()
	var blockwise func(uint32) bool
	if v.mixed {
		blockwise = func(f uint32) bool { return f%2 == 0 }
	}
	ins, err := instrumentWith(orig, countdownEnd, blockwise, v.thread)
	if err != nil {
		t.Fatal(err)
	}
	return ins
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
