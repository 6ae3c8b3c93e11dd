package main

import (
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
	if p.Region == nil || p.Region.Start != "bench.start" || p.Region.Opened != 2 || p.Region.Closed != 2 {
		t.Errorf("region: %+v", p.Region)
	}
	for _, want := range []string{"bench.rounds", "returns 3", "region", "bench.start"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the report does not say %q:\n%s", want, stderr)
		}
	}
	code, _, stderr = runCmd("report", out)
	if code != 0 || !strings.Contains(stderr+"", "") {
		t.Errorf("report: exit %d", code)
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
