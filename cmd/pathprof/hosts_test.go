package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/profile"
)

// hostsProgram is the path of a module of testdata/hosts.
func hostsProgram(t *testing.T, name string) string {
	return filepath.Join(testprogs.ModuleRoot(t), "testdata", "hosts", name+".wasm")
}

// TestStubsAndRegions profiles markers.wasm with its imports stubbed and
// a region, and checks the profile records both and the report says so.
func TestStubsAndRegions(t *testing.T) {
	m := hostsProgram(t, "markers")
	dir := t.TempDir()
	out := filepath.Join(dir, "p.json")
	code, stdout, stderr := runCmd("profile", "-q", "-o", out, "--stub", "bench.rounds=3", "--stub-missing",
		"--region", "bench.start,bench.stop", "--top", "3", m)
	if code != 0 || !strings.HasPrefix(stdout, "rounds 3 ") {
		t.Fatalf("exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	p := readProfile(t, out)
	if len(p.Stubs) != 6 || p.Stubs[0] != (profile.Stub{Import: "bench.rounds", Result: "3", Calls: 1}) {
		t.Errorf("stubs: %+v", p.Stubs)
	}
	if p.Region == nil || p.Region.Start != "bench.start" || p.Region.Opened != 3 || p.Region.Closed != 3 || !p.Region.CutPartial {
		t.Errorf("region: %+v", p.Region)
	}
	for _, want := range []string{"bench.rounds", "returns 3", "region", "bench.start"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the report does not say %q:\n%s", want, stderr)
		}
	}
	code, report, _ := runCmd("report", out)
	if code != 0 || !strings.Contains(report, "bench.rounds (returns 3") || !strings.Contains(report, "region") {
		t.Errorf("report: exit %d\n%s", code, report)
	}
}

// TestHostsBadInput checks that each mistake in a stub, a region or an
// invocation gives one line and exit 1, and a region never opened a
// warning and an empty profile.
func TestHostsBadInput(t *testing.T) {
	m := hostsProgram(t, "markers")
	out := filepath.Join(t.TempDir(), "p.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--stub", "bench.nope", "--stub-missing"}, "imports no function bench.nope"},
		{[]string{"--stub", "bench.rounds=1.5", "--stub-missing"}, "returns i32"},
		{[]string{"--stub", "bench.start=1", "--stub-missing"}, "returns nothing"},
		{[]string{"--stub", "wasi_snapshot_preview1.fd_write", "--stub-missing"}, "provided"},
		{[]string{"--region", "bench.start", "--stub-missing"}, "MODULE.START,MODULE.END"},
		{[]string{"--region", "bench.nope,bench.stop", "--stub-missing"}, "imports no function bench.nope"},
		{[]string{"--region-func", "nope", "--stub-missing"}, "no function"},
		{nil, "bench.start, bench.stop, bench.rounds, bench.seed, bench.scale, bench.report"},
	} {
		code, _, stderr := runCmd(append(append([]string{"profile", "-q", "-o", out}, c.args...), m)...)
		if code != 1 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, want 1 and one line saying %q:\n%s", c.args, code, c.want, stderr)
		}
	}
	// A region whose markers are never called: the profile is written,
	// empty, with a warning.
	code, _, stderr := runCmd("profile", "-q", "-o", out, "--stub-missing", "--region", "bench.report,bench.stop", m)
	if code != 0 || !strings.Contains(stderr, "never opened") {
		t.Errorf("a region never opened: exit %d, stderr %q", code, stderr)
	}
	if p := readProfile(t, out); countPaths(p) != 0 || p.Region.Opened != 0 {
		t.Errorf("a region never opened counted paths: %+v", p.Region)
	}
}

// TestInvoke profiles the reactor through --invoke: the results are
// printed after the program's output, and mistakes in a call give one
// line, exit 1.
func TestInvoke(t *testing.T) {
	m := hostsProgram(t, "reactor")
	out := filepath.Join(t.TempDir(), "p.json")
	code, stdout, stderr := runCmd("profile", "-q", "-o", out, "--invoke", "fib:12", "--invoke", "lookup_sum:10,1", "--invoke", "hello", m)
	if code != 0 || !strings.HasSuffix(stdout, "fib(12) = 144\nlookup_sum(10, 1) = -4\nhello()\n") || !strings.Contains(stdout, "table[3] = 2") {
		t.Fatalf("exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runCmd("osp", "-q", "-o", filepath.Join(t.TempDir(), "o.json"), "--invoke", "fib:12", m); code != 0 || stdout != "fib(12) = 144\n" {
		t.Errorf("osp --invoke: exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	if code, report, _ := runCmd("report", out); code != 0 || !strings.Contains(report, "invoked   fib(12) = 144\n") {
		t.Errorf("the report does not list the calls (exit %d):\n%s", code, report)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "not a WASI command (a reactor or a library? --invoke"},
		{[]string{"--invoke", "nope"}, "exports no function nope (its functions: _initialize, fib,"},
		{[]string{"--invoke", "fib"}, "fib takes 1 arguments (i32), not 0"},
		{[]string{"--invoke", "fib:1.5"}, `argument 1, "1.5": fib wants i32`},
		{[]string{"--invoke", "lookup_sum:x,1"}, "wants i64"},
		{[]string{"--invoke", ":1"}, "want NAME"},
	} {
		code, _, stderr := runCmd(append(append([]string{"profile", "-q", "-o", out}, c.args...), m)...)
		if code == 0 || code == 2 && c.args != nil && c.args[1] != ":1" || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, want one line saying %q:\n%s", c.args, code, c.want, stderr)
		}
	}
}

// TestNamesWithoutNameSection checks that a module without a name
// section still names every function a report shows: exported ones by
// their exports, the others by DWARF.
func TestNamesWithoutNameSection(t *testing.T) {
	m := hostsProgram(t, "reactor-noname")
	code, stdout, stderr := runCmd("inspect", m)
	for _, name := range []string{" fib\n", " lookup_sum\n", " printf_core\n", " _initialize\n"} {
		if code != 0 || !strings.Contains(stdout, name) {
			t.Errorf("inspect does not name %q (exit %d):\n%s%s", name, code, stdout, stderr)
		}
	}
	out := filepath.Join(t.TempDir(), "p.json")
	if code, _, stderr := runCmd("profile", "-q", "-o", out, "--invoke", "fib:5", "--invoke", "hello", m); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	// Only what the linker made up, such as __wasm_call_ctors, has no
	// DWARF; the report calls it func[N].
	unnamed := 0
	for _, f := range readProfile(t, out).Functions {
		if len(f.Paths) > 0 && f.Name == "" {
			unnamed++
		}
	}
	code, report, _ := runCmd("report", out)
	if code != 0 || unnamed > 1 || !strings.Contains(report, "__fwritex") {
		t.Errorf("%d functions that ran have no name (exit %d):\n%s", unnamed, code, report)
	}
}

// TestRefusals checks that a module using what the runtime cannot run is
// refused in one line naming the feature and what would work instead:
// the GC proposal (a struct type, an anyref), memory64, wasi-threads'
// thread-spawn and a component.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	header := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	cases := []struct {
		name   string
		module []byte
		want   []string
	}{
		// (type (struct (field i32)))
		{"gc-struct", append(header, 1, 5, 1, 0x5f, 1, 0x7f, 0), []string{"struct type", "GC proposal", "Kotlin/Wasm", "linear memory"}},
		// (type (func (param anyref)))
		{"gc-anyref", append(header, 1, 5, 1, 0x60, 1, 0x6e, 0), []string{"anyref", "GC proposal"}},
		// (memory i64 1)
		{"memory64", append(header, 5, 3, 1, 4, 1), []string{"memory64", "wasm32"}},
		// (import "wasi" "thread-spawn" (func (param i32) (result i32)))
		{"thread-spawn", append(header, 1, 6, 1, 0x60, 1, 0x7f, 1, 0x7f,
			2, 21, 1, 4, 'w', 'a', 's', 'i', 12, 't', 'h', 'r', 'e', 'a', 'd', '-', 's', 'p', 'a', 'w', 'n', 0, 0),
			[]string{"wasi.thread-spawn", "wasi-threads", "without threads"}},
		// an empty component
		{"component", []byte{0, 'a', 's', 'm', 0x0d, 0, 1, 0}, []string{"component", "core module", "wasm32-wasip1"}},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.name+".wasm")
		if err := os.WriteFile(path, c.module, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range [][]string{{"profile", "-q", "-o", filepath.Join(dir, "p.json")}, {"osp", "-q", "-o", filepath.Join(dir, "o.json")}} {
			code, _, stderr := runCmd(append(cmd, path)...)
			ok := code == 1 && strings.Count(stderr, "\n") == 1
			for _, w := range c.want {
				ok = ok && strings.Contains(stderr, w)
			}
			if !ok {
				t.Errorf("%s %s: exit %d, want 1 and one line saying %q:\n%s", cmd[0], c.name, code, c.want, stderr)
			}
		}
	}
}

// TestRegionInterrupted stops a run inside a region of interest at
// --timeout: the profile written counts only the region's paths up to
// then, and says how often the region opened.
func TestRegionInterrupted(t *testing.T) {
	wasm := filepath.Join(testprogs.ModuleRoot(t), "testdata", "spin", "spin.wasm")
	out := filepath.Join(t.TempDir(), "p.json")
	code, _, stderr := runCmd("profile", "-q", "--timeout", "1s", "--region-func", "step", "-o", out, wasm, spinRounds)
	if code != 124 {
		t.Fatalf("exit %d, want 124\n%s", code, stderr)
	}
	p := readProfile(t, out)
	if p.Interrupted == nil || p.Region == nil || p.Region.Opened == 0 {
		t.Fatalf("interrupted %+v, region %+v", p.Interrupted, p.Region)
	}
	for _, f := range p.Functions {
		if len(f.Paths) > 0 && f.Name != "step" {
			t.Errorf("%s, outside the region, has %d paths", f.Name, len(f.Paths))
		}
	}
}
