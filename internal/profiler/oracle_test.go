package profiler

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/tracer"
	"github.com/pathprof/pathprof/profile"
)

type program = testprogs.Run

// oraclePrograms are the programs whose SBL profile is checked against the
// tracer: the C programs, the benchmark's kernels, a Go program, gofmt
// over part of GOROOT, and standard-library test binaries.
func oraclePrograms(t *testing.T) []program {
	ps := append(testprogs.CRuns(t), testprogs.KernelRuns(t)...)
	ps = append(ps, program{Name: "go-hello", Path: testprogs.GoHello(t)})
	src := testprogs.StdPackageDir(t, "go/ast")
	ps = append(ps, program{Name: "gofmt", Path: testprogs.Gofmt(t), Args: []string{"-l", src},
		Dirs: func(testing.TB) []runner.Mount { return []runner.Mount{{HostDir: src, GuestPath: src, ReadOnly: true}} }})
	for _, pkg := range []string{"sort", "strconv", "compress/flate", "regexp"} {
		ps = append(ps, testprogs.GoTestRun(t, pkg))
	}
	return ps
}

// TestSBLEqualsTracer is the exactness check: the SBL profile of each run
// equals, path for path and count for count, what the independent tracer
// saw; the instrumented program prints the same and exits the same as the
// original.
func TestSBLEqualsTracer(t *testing.T) {
	ctx := context.Background()
	for _, p := range oraclePrograms(t) {
		t.Run(p.Name, func(t *testing.T) {
			orig := readModule(t, p)
			var want bytes.Buffer
			r0, err := runner.Run(ctx, orig, p.Config(t, &want))
			if err != nil {
				t.Fatal(err)
			}
			if p.Want != "" && want.String() != p.Want {
				t.Fatalf("the original printed %q, want %q", want.String(), p.Want)
			}
			var got bytes.Buffer
			prof, err := Profile(ctx, orig, Options{ModulePath: p.Path, Run: p.Config(t, &got)})
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() || prof.ExitCode != r0.ExitCode {
				t.Fatalf("instrumented run differs: exit %d, want %d; stdout equal: %v", prof.ExitCode, r0.ExitCode, got.String() == want.String())
			}
			var traced bytes.Buffer
			checkTraced(t, p.Name, orig, p.Config(t, &traced), prof)
			if traced.String() != want.String() {
				t.Fatal("traced run printed something else")
			}
			sbl := tracer.Counts(prof)
			var execs uint64
			for _, n := range sbl {
				execs += n
			}
			if len(sbl) == 0 {
				t.Fatal("no paths")
			}
			t.Logf("%d distinct paths, %d path executions, %d probe hits: equal to the tracer's", len(sbl), execs, prof.Runs[0].ProbeHits)
		})
	}
}

// readModule reads p's module.
func readModule(t *testing.T, p program) []byte {
	t.Helper()
	b, err := os.ReadFile(p.Path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkTraced runs orig under the tracer with cfg and fails unless prof
// holds the paths, and the counts, that the tracer saw.
func checkTraced(t *testing.T, label string, orig []byte, cfg runner.Config, prof *profile.Profile) {
	t.Helper()
	tr, _, err := tracer.Run(context.Background(), orig, cfg)
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	if diff := diffCounts(tracer.Counts(prof), tr.Paths); diff != "" {
		t.Fatalf("%s: SBL profile differs from the tracer's:\n%s", label, diff)
	}
}

func diffCounts(a, b map[tracer.Key]uint64) string {
	var lines []string
	for k, n := range a {
		if b[k] != n {
			lines = append(lines, fmt.Sprintf("  func %d %s [%s]: profile %d, tracer %d", k.Func, k.Kind, k.Blocks, n, b[k]))
		}
	}
	for k, n := range b {
		if _, ok := a[k]; !ok {
			lines = append(lines, fmt.Sprintf("  func %d %s [%s]: profile 0, tracer %d", k.Func, k.Kind, k.Blocks, n))
		}
	}
	sort.Strings(lines)
	if len(lines) > 20 {
		lines = append(lines[:20], fmt.Sprintf("  ... %d more", len(lines)-20))
	}
	out := ""
	for _, l := range lines {
		out += l + "\n"
	}
	return out
}
