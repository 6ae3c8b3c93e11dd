package osp

import (
	"testing"

	"pathprof/internal/testprogs"
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
