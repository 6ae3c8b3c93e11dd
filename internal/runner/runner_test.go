package runner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
)

func TestCPrograms(t *testing.T) {
	for _, p := range testprogs.CPrograms(t) {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			cfg := p.Config(t)
			cfg.Stdout, cfg.Stderr = &stdout, &stderr
			res, err := runner.RunFile(context.Background(), p.Wasm, cfg)
			if err != nil {
				t.Fatalf("%v\nstderr:\n%s", err, stderr.Bytes())
			}
			if !res.Exited || res.ExitCode != p.WantExitCode {
				t.Errorf("exited=%v code=%d, want exited with %d", res.Exited, res.ExitCode, p.WantExitCode)
			}
			if got := stdout.String(); got != p.WantStdout {
				t.Errorf("stdout differs from %s.expected:\n%s", p.Name, diff(p.WantStdout, got))
			}
			t.Logf("compile %v, run %v", res.CompileTime, res.RunTime)
		})
	}
}

// TestExitCode checks that a status passed to exit() deep inside a C
// program comes out unchanged, as a normal result and not an error.
func TestExitCode(t *testing.T) {
	p := testprogs.CProgramByName(t, "records")
	var stdout bytes.Buffer
	res, err := runner.RunFile(context.Background(), p.Wasm, runner.Config{Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || !res.Exited || res.Trap != nil || res.StubCalls != nil {
		t.Errorf("result %+v, want exit code 3", res)
	}
	// The atexit handler's line proves stdio was flushed by exit().
	if !strings.HasSuffix(stdout.String(), "exit handler: 9 batches rejected\n") {
		t.Errorf("output does not end with the atexit line:\n%s", stdout.String())
	}
}

func TestGoHello(t *testing.T) {
	out := runHello(t, runner.Config{Args: []string{"a", "b"}, Env: []string{"A=1", "B=2", "EMPTY="}})
	var stable []string
	for _, line := range strings.SplitAfter(out, "\n") {
		if !strings.HasPrefix(line, "entropy: ") {
			stable = append(stable, line)
		}
	}
	if want := testprogs.GoHelloStableOutput(t); strings.Join(stable, "") != want {
		t.Errorf("output differs from expected.txt:\n%s", diff(want, strings.Join(stable, "")))
	}
	// argv[0] plus two; exactly the three variables given, none of the host's.
	if !strings.Contains(out, "entropy: args: 3 env: 3\n") {
		t.Errorf("args or environment leaked or lost:\n%s", out)
	}
}

// TestDeterminism runs the hello program, which prints map iteration order,
// an unseeded math/rand value and time.Now, and checks that nothing varies
// between runs, whether they share a compiled Program or not.
func TestDeterminism(t *testing.T) {
	wasm, err := os.ReadFile(testprogs.GoHello(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	prog, err := runner.Compile(ctx, wasm, runner.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close(ctx)

	var outs []string
	for i := range 3 {
		var stdout bytes.Buffer
		cfg := runner.Config{Stdout: &stdout}
		var err error
		if i == 2 {
			_, err = runner.Run(ctx, wasm, cfg)
		} else {
			_, err = prog.Run(ctx, cfg)
		}
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, stdout.String())
	}
	for i, out := range outs[1:] {
		if out != outs[0] {
			t.Errorf("run %d differs from run 0:\n%s", i+1, diff(outs[0], out))
		}
	}
	// wazero's fake wall clock starts at 2022-01-01 and advances 1ms per
	// reading, so anything else means the host clock got through.
	if !strings.Contains(outs[0], "entropy: now: 2022-01-01T00:00:00") {
		t.Errorf("time.Now is not the fake clock:\n%s", outs[0])
	}
}

func TestGoStdTest(t *testing.T) {
	const pkg = "regexp"
	wasm := testprogs.GoStdTest(t, pkg)
	dir := testprogs.StdPackageDir(t, pkg)
	var stdout, stderr bytes.Buffer
	res, err := runner.RunFile(context.Background(), wasm, runner.Config{
		CacheDir: testprogs.WazeroCacheDir(t),
		Args:     []string{"-test.short", "-test.v"},
		Env:      []string{"PWD=" + dir},
		Stdout:   &stdout,
		Stderr:   &stderr,
		// The package directory sits at its host path so that PWD-relative
		// testdata paths resolve; /tmp is for os.TempDir.
		Dirs: []runner.Mount{
			{HostDir: dir, GuestPath: dir, ReadOnly: true},
			{HostDir: t.TempDir(), GuestPath: "/tmp"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.HasSuffix(stdout.String(), "\nPASS\n") {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, tail(stdout.String(), 2000), stderr.Bytes())
	}
	// TestRE2Exhaustive reads testdata/re2-exhaustive.txt.bz2; skipped in
	// short mode, it is TestRE2Search that proves the files are reachable.
	if !strings.Contains(stdout.String(), "--- PASS: TestRE2Search") {
		t.Errorf("TestRE2Search did not pass; is testdata reachable?\n%s", tail(stdout.String(), 2000))
	}
	t.Logf("compile %v, run %v", res.CompileTime, res.RunTime)
}

// TestLargestModule compiles the largest test module through the
// compilation cache and runs a few of its tests.
func TestLargestModule(t *testing.T) {
	const pkg = "encoding/json"
	wasm := testprogs.LargestModule(t)
	dir := testprogs.StdPackageDir(t, pkg)
	var stdout, progress bytes.Buffer
	res, err := runner.RunFile(context.Background(), wasm, runner.Config{
		CacheDir: testprogs.WazeroCacheDir(t),
		Progress: &progress,
		Args:     []string{"-test.short", "-test.run=^TestMarshal"},
		Env:      []string{"PWD=" + dir},
		Stdout:   &stdout,
		Dirs:     []runner.Mount{{HostDir: dir, GuestPath: dir, ReadOnly: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || stdout.String() != "PASS\n" {
		t.Fatalf("exit code %d, stdout:\n%s", res.ExitCode, tail(stdout.String(), 2000))
	}
	if !strings.Contains(progress.String(), "compiling encoding_json.test") {
		t.Errorf("no progress line for the compilation: %q", progress.String())
	}
	t.Logf("compile %v (cached after the first run on a machine), run %v", res.CompileTime, res.RunTime)
}

func TestTrap(t *testing.T) {
	res, err := runner.Run(context.Background(), command(nil, opUnreachable), runner.Config{})
	if err == nil {
		t.Fatal("no error from a trapping program")
	}
	if res.Trap == nil || !errors.Is(err, res.Trap) {
		t.Errorf("Trap = %v, want the returned error %v", res.Trap, err)
	}
	if res.Exited || res.ExitCode != 1 {
		t.Errorf("exited=%v code=%d, want a non-exit with code 1", res.Exited, res.ExitCode)
	}
	if !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("error %q does not name the trap", err)
	}
}

func TestMissingImport(t *testing.T) {
	for _, c := range []struct {
		module, name  string
		missingModule bool
	}{
		{"wasi_snapshot_preview1", "no_such_call", false},
	} {
		wasm := command([][]byte{importFunc(c.module, c.name, 0)}, opCall, 0)
		_, err := runner.Run(context.Background(), wasm, runner.Config{ProgramName: "prog.wasm"})
		var ie *runner.ImportError
		if !errors.As(err, &ie) {
			t.Fatalf("error %v, want an ImportError", err)
		}
		if ie.Importer != "prog.wasm" || ie.Module != c.module || ie.Name != c.name || ie.Kind != "func" || ie.MissingModule != c.missingModule {
			t.Errorf("got %+v", ie)
		}
		for _, s := range []string{c.module, c.name, "prog.wasm"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not mention %q", err, s)
			}
		}
	}
}

// TestStubs checks that a function import of a module nothing provides
// is listed with the others and the flags that stub it, and that a stub
// returns what it is given and counts its calls, afresh in each run.
func TestStubs(t *testing.T) {
	ctx := context.Background()
	// (import "env" "a" (func)) (import "env" "b" (func)), _start calls a twice.
	wasm := command([][]byte{importFunc("env", "a", 0), importFunc("env", "b", 0)}, opCall, 0, opCall, 0)
	_, err := runner.Run(ctx, wasm, runner.Config{ProgramName: "prog.wasm"})
	var me *runner.MissingImportsError
	if !errors.As(err, &me) || len(me.Missing) != 2 || !strings.Contains(err.Error(), "env.a, env.b") || !strings.Contains(err.Error(), "--stub-missing") {
		t.Fatalf("error %v, want both imports listed", err)
	}
	prog, err := runner.Compile(ctx, wasm, runner.Config{Stubs: []runner.Stub{{Module: "env", Name: "b"}}, StubMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close(ctx)
	for range 2 {
		res, err := prog.Run(ctx, runner.Config{})
		if err != nil {
			t.Fatal(err)
		}
		// Stubs: env.b (given) first, then env.a (missing).
		if !slices.Equal(res.StubCalls, []uint64{0, 2}) || prog.Stubs()[1].String() != "env.a" {
			t.Errorf("stub calls %v of %v; want [0 2]", res.StubCalls, prog.Stubs())
		}
	}
	for _, bad := range []runner.Stub{{Module: "env", Name: "c"}, {Module: "env", Name: "a", Result: "1"}} {
		if _, err := runner.Run(ctx, wasm, runner.Config{Stubs: []runner.Stub{bad}, StubMissing: true}); !runner.IsSetupError(err) {
			t.Errorf("stub %+v: error %v", bad, err)
		}
	}
}

// TestModules checks that named modules are linked, instantiated afresh
// for each run and readable from AfterRun: the counter-module setup.
func TestModules(t *testing.T) {
	ctx := context.Background()
	calls := []byte{opCall, 0, opCall, 0, opCall, 0}
	cfg := runner.Config{
		Modules: []runner.NamedModule{{Name: "counters", Wasm: counterModule()}},
	}
	prog, err := runner.Compile(ctx, command([][]byte{importFunc("counters", "inc", 0)}, calls...), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close(ctx)
	for run := range 2 {
		var count uint64
		cfg.AfterRun = func(_ context.Context, mods map[string]api.Module) error {
			count = mods["counters"].ExportedGlobal("count").Get()
			return nil
		}
		if _, err := prog.Run(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		if count != 3 {
			t.Errorf("run %d: count = %d, want 3", run, count)
		}
	}

	cfg.AfterRun = func(context.Context, map[string]api.Module) error { return errors.New("boom") }
	if _, err := prog.Run(ctx, cfg); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("AfterRun error lost: %v", err)
	}

	bad := runner.Config{Modules: []runner.NamedModule{
		{Name: "counters", Wasm: counterModule()},
		{Name: "counters", Wasm: counterModule()},
	}}
	if _, err := runner.Compile(ctx, command(nil), bad); err == nil {
		t.Error("duplicate module names accepted")
	}
}

func TestInterrupt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	loop := []byte{opLoop, blockVoid, opBr, 0, opEnd}
	res, err := runner.Run(ctx, command(nil, loop...), runner.Config{Interruptible: true})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want a deadline error", err)
	}
	if res.Exited || res.Trap != nil {
		t.Errorf("result %+v, want neither an exit nor a trap", res)
	}
}

func TestBadConfig(t *testing.T) {
	for _, cfg := range []runner.Config{
		{Env: []string{"NOEQUALS"}},
		{Env: []string{"=value"}},
		{Dirs: []runner.Mount{{HostDir: "/tmp"}}},
	} {
		if _, err := runner.Run(context.Background(), command(nil), cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	noStart := module(section(secType, funcType()))
	if _, err := runner.Run(context.Background(), noStart, runner.Config{}); err == nil || !strings.Contains(err.Error(), "_start") {
		t.Errorf("module without _start: error %v", err)
	}
}

func runHello(t *testing.T, cfg runner.Config) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cfg.Stdout, cfg.Stderr = &stdout, &stderr
	res, err := runner.RunFile(context.Background(), testprogs.GoHello(t), cfg)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exit code %d, error %v\nstderr:\n%s", res.ExitCode, err, stderr.Bytes())
	}
	return stdout.String()
}

// diff shows the first differing line of two outputs, which is usually all
// it takes to see what went wrong.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  want: %s\n  got:  %s", i+1, wl, gl)
		}
	}
	return "(no difference)"
}

// tail keeps the end of long test output, where failures are reported.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// TestMemoryAfterExit checks a program's memory through growth to its
// maximum and a proc_exit, which closes the instance before AfterRun
// reads the memory: fresh pages are zero, growth beyond the maximum
// fails, and the memory is still there to read.
func TestMemoryAfterExit(t *testing.T) {
	const (
		secMemory = 5
		opBrIf    = 0x0d
		opI32Ne   = 0x47
		opI32Sub  = 0x6b
		opI32Shl  = 0x74
		opI32St   = 0x36
		opMemSize = 0x3f
		opMemGrow = 0x40
	)
	code := []byte{
		opLoop, blockVoid,
		opI32Const, 1, opMemGrow, 0, opI32Const, 0x7f, opI32Ne, opBrIf, 0,
		opEnd,
		opMemSize, 0, opI32Const, 16, opI32Shl, opI32Const, 4, opI32Sub,
		opMemSize, 0, opI32St, 2, 0,
		opI32Const, 7, opCall, 0,
	}
	mod := module(
		section(secType, funcType(), []byte{0x60, 1, i32, 0}),
		section(secImport, importFunc("wasi_snapshot_preview1", "proc_exit", 1)),
		section(secFunction, uleb(0)),
		section(secMemory, []byte{1, 1, 5}),
		section(secExport, export("_start", kindFunc, 1), export("memory", 2, 0)),
		section(secCode, body(code...)),
	)
	var mem []byte
	cfg := runner.Config{AfterRun: func(_ context.Context, mods map[string]api.Module) error {
		m := mods[runner.ProgramKey].Memory()
		b, ok := m.Read(0, m.Size())
		if !ok {
			return errors.New("cannot read the memory")
		}
		mem = bytes.Clone(b)
		return nil
	}}
	res, err := runner.Run(context.Background(), mod, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 7 {
		t.Fatalf("exit code %d, want 7", res.ExitCode)
	}
	want := make([]byte, 5*65536)
	want[len(want)-4] = 5
	if !bytes.Equal(mem, want) {
		t.Fatalf("memory of %d bytes, want 5 pages of zeros ending in the page count", len(mem))
	}
}
