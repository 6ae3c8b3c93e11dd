package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/profile"
)

// startModule is a command module whose _start runs body (instructions,
// without the final end).
func startModule(imports []byte, body ...byte) []byte {
	m := []byte{0, 'a', 's', 'm', 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0}
	if imports != nil {
		m = append(m, imports...)
	}
	m = append(m, 3, 2, 1, 0)                                   // function section
	m = append(m, 7, 10, 1, 6, '_', 's', 't', 'a', 'r', 't', 0) // export section
	if imports != nil {
		m = append(m, 1)
	} else {
		m = append(m, 0)
	}
	code := append([]byte{0}, body...)
	code = append(code, 0x0b)
	m = append(m, 10, byte(len(code)+2), 1, byte(len(code)))
	return append(m, code...)
}

func TestProfileCommand(t *testing.T) {
	p := testprogs.CProgramByName(t, "calc")
	out := filepath.Join(t.TempDir(), "calc.json")
	code, stdout, stderr := runCmd("profile", "-q", "-o", out, "--stdin", p.Stdin, p.Wasm)
	if code != int(p.WantExitCode) || stdout != p.WantStdout {
		t.Fatalf("exit %d, stdout differs: %v\n%s", code, stdout != p.WantStdout, stderr)
	}
	prof := readProfile(t, out)
	if !prof.Complete || prof.Strategy != "sbl" || len(prof.Runs) != 1 || prof.Runs[0].ProbeHits == 0 {
		t.Fatalf("unexpected profile facts: %+v", prof.Runs)
	}
	// With the counters in a counter module: the same paths and counts.
	outM := filepath.Join(t.TempDir(), "calc-module.json")
	if code, _, stderr := runCmd("profile", "-q", "--counter-module", "-o", outM, "--stdin", p.Stdin, p.Wasm); code != int(p.WantExitCode) {
		t.Fatalf("--counter-module: exit %d\n%s", code, stderr)
	}
	profM := readProfile(t, outM)
	if ok, diff := prof.Equal(profM); !ok {
		t.Fatalf("--counter-module gives another profile: %s", diff)
	}
	// The program's exit code passes through, and the profile is written.
	r := testprogs.CProgramByName(t, "records")
	out2 := filepath.Join(t.TempDir(), "records.json")
	code, _, _ = runCmd("profile", "-q", "-o", out2, r.Wasm)
	if code != int(r.WantExitCode) || r.WantExitCode == 0 {
		t.Fatalf("exit %d, want %d", code, r.WantExitCode)
	}
	if _, err := profile.ReadFile(out2); err != nil {
		t.Fatal(err)
	}
}

func TestProfileTrap(t *testing.T) {
	dir := t.TempDir()
	mod := filepath.Join(dir, "trap.wasm")
	if err := os.WriteFile(mod, startModule(nil, 0x00), 0o644); err != nil { // unreachable
		t.Fatal(err)
	}
	out := filepath.Join(dir, "trap.json")
	code, _, stderr := runCmd("profile", "-q", "-o", out, mod)
	if code != 1 || !strings.Contains(stderr, "trap") || !strings.Contains(stderr, "incomplete") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	p := readProfile(t, out)
	if p.Complete || p.Incomplete == "" {
		t.Fatalf("trapped run not marked incomplete: %+v", p)
	}
}

func TestProfileMissingImport(t *testing.T) {
	dir := t.TempDir()
	// (import "env" "missing" (func)) called from _start.
	imp := []byte{2, 15, 1, 3, 'e', 'n', 'v', 7, 'm', 'i', 's', 's', 'i', 'n', 'g', 0, 0}
	mod := filepath.Join(dir, "imp.wasm")
	if err := os.WriteFile(mod, startModule(imp, 0x10, 0x00), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "imp.json")
	code, _, stderr := runCmd("profile", "-q", "-o", out, mod)
	if code != 1 || !strings.Contains(stderr, "env.missing") || !strings.Contains(stderr, "--stub-missing") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a profile was written of a run that could not start")
	}
	if code, _, stderr := runCmd("profile", "-q", "-o", out, "--stub", "env.missing", mod); code != 0 {
		t.Fatalf("--stub: exit %d, stderr %q", code, stderr)
	}
	p := readProfile(t, out)
	if len(p.Stubs) != 1 || p.Stubs[0] != (profile.Stub{Import: "env.missing", Calls: 1}) {
		t.Errorf("stubs recorded: %+v", p.Stubs)
	}
	if code, _, stderr := runCmd("profile", filepath.Join(dir, "nope.wasm")); code != 1 || !strings.Contains(stderr, "no such file") {
		t.Errorf("missing module: exit %d, %s", code, stderr)
	}
	if code, _, _ := runCmd("profile", "--dir", filepath.Join(dir, "nodir"), mod); code != 2 {
		t.Errorf("bad --dir: exit %d, want 2", code)
	}
}

// readProfile reads the profile file at path.
func readProfile(t *testing.T, path string) *profile.Profile {
	t.Helper()
	p, err := profile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProgramArgs checks that everything after MODULE is the program's,
// flags included, as valgrind takes them, and that "--" still works.
func TestProgramArgs(t *testing.T) {
	g := testprogs.CProgramByName(t, "grid")
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-q", "-o", filepath.Join(dir, "a.json"), g.Wasm, "9"},
		{"-q", "-o", filepath.Join(dir, "b.json"), g.Wasm, "--", "9"},
		{"-o", filepath.Join(dir, "c.json"), "-q", g.Wasm, "9", "-o", "-q"},
	} {
		code, stdout, stderr := runCmd(append([]string{"profile"}, args...)...)
		if code != int(g.WantExitCode) || stdout != g.WantStdout {
			t.Errorf("profile %q: exit %d, stdout differs: %v\n%s", args, code, stdout != g.WantStdout, stderr)
		}
	}
	if _, err := os.Stat("-q"); err == nil {
		t.Error("a program's -o was taken as pathprof's")
	}
	for _, cmd := range []string{"profile", "osp", "osp-score", "exec"} {
		code, _, stderr := runCmd(cmd, "-q")
		if cmd != "profile" && cmd != "osp" {
			code, _, stderr = runCmd(cmd)
		}
		if code != 2 || !strings.Contains(stderr, "missing") || strings.Contains(stderr, "\n  -") {
			t.Errorf("%s without operands: exit %d, stderr:\n%s", cmd, code, stderr)
		}
	}
}
