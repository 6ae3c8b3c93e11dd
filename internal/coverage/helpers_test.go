package coverage

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/srcmap"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/tracer"
	"github.com/pathprof/pathprof/profile"
)

// run is one committed C program profiled, with its coverage.
type run struct {
	prog   testprogs.CProgram
	module []byte
	prof   *profile.Profile
	cov    *Coverage
}

var (
	runsMu sync.Mutex
	runs   = map[string]*run{}
)

// profiled profiles the C program name (of programs.txt or
// programs-O0.txt) once per test binary, checks its output against the
// native build's and its paths against the tracer's, and builds its
// coverage with sources found beside it.
func profiled(t testing.TB, name string) *run {
	t.Helper()
	runsMu.Lock()
	defer runsMu.Unlock()
	if r := runs[name]; r != nil {
		return r
	}
	var prog testprogs.CProgram
	for _, p := range append(testprogs.CPrograms(t), testprogs.CProgramsIn(t, "programs-O0.txt")...) {
		if p.Name == name {
			prog = p
		}
	}
	if prog.Name == "" {
		t.Fatalf("no C program %s", name)
	}
	b, err := os.ReadFile(prog.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	cfg := prog.Config(t)
	var stdout bytes.Buffer
	cfg.Stdout = &stdout
	p, err := profiler.Profile(context.Background(), b, profiler.Options{ModulePath: prog.Wasm, Run: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if p.ExitCode != prog.WantExitCode || stdout.String() != prog.WantStdout {
		t.Fatalf("%s: exit code %d and output unlike the native build's (exit code %d)", name, p.ExitCode, prog.WantExitCode)
	}
	// The profile the coverage comes from is the independent tracer's.
	tcfg := prog.Config(t)
	tcfg.Stdout = io.Discard
	traced, _, err := tracer.Run(context.Background(), b, tcfg)
	if traced == nil {
		t.Fatalf("%s: tracing: %v", name, err)
	}
	if !maps.Equal(traced.Paths, tracer.Counts(p)) {
		t.Fatalf("%s: the profile differs from the tracer's", name)
	}
	r := &run{prog: prog, module: b, prof: p}
	if r.cov, err = Build(p, b, Options{Roots: r.roots()}); err != nil {
		t.Fatal(err)
	}
	runs[name] = r
	return r
}

// roots are where the program's source is found: beside its module.
func (r *run) roots() *srcmap.Roots { return srcmap.NewRoots(r.prog.Wasm, nil) }

// lcovLines reads the DA records of an lcov tracefile for the source
// file whose path ends in /src: every line with code, and its count.
func lcovLines(t *testing.T, data []byte, src string) map[int]uint64 {
	t.Helper()
	out := map[int]uint64{}
	in := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := sc.Text()
		if f, ok := strings.CutPrefix(l, "SF:"); ok {
			in = strings.HasSuffix(f, "/"+src)
		}
		if rest, ok := strings.CutPrefix(l, "DA:"); ok && in {
			fs := strings.Split(rest, ",")
			n, err1 := strconv.Atoi(fs[0])
			c, err2 := strconv.ParseUint(fs[1], 10, 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("bad record %q", l)
			}
			out[n] = c
		}
	}
	return out
}

// fn is a function's FN and FNDA records.
type fn struct {
	line  int
	calls uint64
}

// lcovFuncs reads the FN and FNDA records of an lcov tracefile for the
// source file whose path ends in /src, by function name.
func lcovFuncs(t *testing.T, data []byte, src string) map[string]fn {
	t.Helper()
	out := map[string]fn{}
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		if f, ok := strings.CutPrefix(l, "SF:"); ok {
			in = strings.HasSuffix(f, "/"+src)
		}
		if !in {
			continue
		}
		// FN:line,name and FNDA:calls,name differ only in the field
		// their number fills.
		kind, rest, _ := strings.Cut(l, ":")
		if kind != "FN" && kind != "FNDA" {
			continue
		}
		n, name, _ := strings.Cut(rest, ",")
		f := out[name]
		var field any = &f.line
		if kind == "FNDA" {
			field = &f.calls
		}
		if _, err := fmt.Sscan(n, field); err != nil {
			t.Fatalf("bad record %q", l)
		}
		out[name] = f
	}
	return out
}

func lcov(t *testing.T, c *Coverage) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := c.WriteLCOV(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
