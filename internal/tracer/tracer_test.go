package tracer_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/tracer"
	"github.com/pathprof/pathprof/internal/wasmtest"
)

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// instrument traces module b and checks that the traced module validates.
func instrument(t *testing.T, b []byte) *tracer.Traced {
	t.Helper()
	tr, err := tracer.Instrument(b)
	if err != nil {
		t.Fatal(err)
	}
	wasmtest.Validate(t, "the traced module", tr.Wasm)
	return tr
}

// TestCPrograms traces every committed C program: the traced module must
// validate and behave like the original, and its paths must pass
// checkPaths.
func TestCPrograms(t *testing.T) {
	for _, p := range testprogs.CPrograms(t) {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			orig := readFile(t, p.Wasm)
			tr := instrument(t, orig)
			run := func(wasm []byte, trace bool) (*tracer.Result, runner.Result, string) {
				var stdout, stderr bytes.Buffer
				cfg := p.Config(t)
				cfg.Stdout, cfg.Stderr = &stdout, &stderr
				var r *tracer.Result
				var res runner.Result
				var err error
				if trace {
					r, res, err = tr.Run(context.Background(), cfg)
				} else {
					res, err = runner.Run(context.Background(), wasm, cfg)
				}
				if err != nil {
					t.Fatalf("%v\nstderr:\n%s", err, stderr.Bytes())
				}
				return r, res, stdout.String()
			}
			_, plain, _ := run(orig, false)
			r, res, out := run(nil, true)
			if !res.Exited || res.ExitCode != p.WantExitCode {
				t.Errorf("exited=%v code=%d, want exited with %d", res.Exited, res.ExitCode, p.WantExitCode)
			}
			if out != p.WantStdout {
				t.Errorf("traced stdout differs from %s.expected", p.Name)
			}
			checkPaths(t, orig, r, nil)
			var n uint64
			for _, c := range r.Paths {
				n += c
			}
			t.Logf("%s: %d block events, %d paths (%d distinct), %d dropped; run %v traced, %v plain (%.0fx)", p.Name,
				r.Events, n, len(r.Paths), r.Dropped, res.RunTime.Round(time.Millisecond), plain.RunTime.Round(time.Microsecond),
				res.RunTime.Seconds()/plain.RunTime.Seconds())
		})
	}
}

// TestGoHello traces a Go program: a large runtime, goroutines that switch
// by unwinding the wasm stack, and proc_exit at the end.
func TestGoHello(t *testing.T) {
	orig := readFile(t, testprogs.GoHello(t))
	tr := instrument(t, orig)
	var stdout, stderr bytes.Buffer
	r, res, err := tr.Run(context.Background(), runner.Config{Stdout: &stdout, Stderr: &stderr})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exit code %d, error %v\nstderr:\n%s", res.ExitCode, err, stderr.Bytes())
	}
	var stable []string
	for _, line := range strings.SplitAfter(stdout.String(), "\n") {
		if !strings.HasPrefix(line, "entropy: ") {
			stable = append(stable, line)
		}
	}
	if want := testprogs.GoHelloStableOutput(t); strings.Join(stable, "") != want {
		t.Errorf("traced output differs from expected.txt:\n%s", stdout.String())
	}
	checkPaths(t, orig, r, nil)
	t.Logf("%d block events, %d distinct paths, %d dropped, run %v", r.Events, len(r.Paths), r.Dropped, res.RunTime.Round(time.Millisecond))
}

// TestGoStdTest traces standard-library test binaries named in
// $PATHPROF_TRACE_STD (comma-separated, e.g. "sort,regexp"); it is off by
// default because they run for seconds to minutes traced (regexp: over a
// billion block events).
func TestGoStdTest(t *testing.T) {
	pkgs := os.Getenv("PATHPROF_TRACE_STD")
	if pkgs == "" {
		t.Skip("set PATHPROF_TRACE_STD=sort,regexp,... to trace Go test binaries")
	}
	for pkg := range strings.SplitSeq(pkgs, ",") {
		t.Run(pkg, func(t *testing.T) {
			orig := readFile(t, testprogs.GoStdTest(t, pkg))
			var stdout, stderr bytes.Buffer
			cfg := testprogs.GoStdTestConfig(t, pkg)
			cfg.Stdout, cfg.Stderr = &stdout, &stderr
			r, res, err := tracer.Run(context.Background(), orig, cfg)
			if err != nil || !strings.HasSuffix(stdout.String(), "PASS\n") {
				t.Fatalf("error %v\nstdout:\n%.2000s\nstderr:\n%.2000s", err, stdout.String(), stderr.String())
			}
			checkPaths(t, orig, r, nil)
			t.Logf("%d block events, %d distinct paths, %d dropped, run %v", r.Events, len(r.Paths), r.Dropped, res.RunTime.Round(time.Millisecond))
		})
	}
}
