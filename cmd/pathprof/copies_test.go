package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"pathprof/internal/testprogs"
	"pathprof/profile"
)

// TestCopiesAnywhere writes the P3 copies of a C program, runs copy 0 with
// pathprof exec and copy 1 under node's WASI with the emitted runner, turns
// node's counter memory into a part, merges, and gets the SBL profile.
func TestCopiesAnywhere(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	p := testprogs.CProgramByName(t, "wordfreq")
	tmp := t.TempDir()
	sbl := filepath.Join(tmp, "sbl.json")
	if code, _, stderr := runCmd("profile", "-q", "-o", sbl, p.Wasm); code != 0 {
		t.Fatalf("profile: exit %d: %s", code, stderr)
	}
	dir := filepath.Join(tmp, "copies")
	if code, _, stderr := runCmd("instrument", "--strategy", "p3", "--copies", "2", "--weights", sbl, "-o", dir, p.Wasm); code != 0 {
		t.Fatalf("instrument: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCmd("exec", dir, "0")
	if code != 0 || stdout != p.WantStdout {
		t.Fatalf("exec copy 0: exit %d, output differs %v: %s", code, stdout != p.WantStdout, stderr)
	}
	counts := filepath.Join(tmp, "counts-1.out")
	cmd := exec.Command(node, "--no-warnings", filepath.Join(dir, "run.cjs"), filepath.Join(dir, "copy-1.wasm"), filepath.Join(dir, "counters-1.wasm"), counts)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("node: %v\n%s", err, errOut.Bytes())
	}
	if out.String() != p.WantStdout {
		t.Fatal("copy 1 under node printed something else")
	}
	output := filepath.Join(tmp, "output-1")
	if err := os.WriteFile(output, append(out.Bytes(), errOut.Bytes()...), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd("exec", "--counts", counts, "--output", output, dir, "1"); code != 0 {
		t.Fatalf("exec --counts: exit %d: %s", code, stderr)
	}
	merged := filepath.Join(tmp, "merged.json")
	if code, _, stderr := runCmd("merge", "-o", merged, filepath.Join(dir, "part-0.json"), filepath.Join(dir, "part-1.json")); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	a, err := profile.ReadFile(sbl)
	if err != nil {
		t.Fatal(err)
	}
	b, err := profile.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	if ok, diff := a.Equal(b); !ok {
		t.Fatalf("merged copies differ from SBL: %s", diff)
	}
	// A part merged twice, or alone, is refused or marked incomplete.
	if code, _, stderr := runCmd("merge", "-o", merged, filepath.Join(dir, "part-0.json"), filepath.Join(dir, "part-0.json")); code != 1 || !strings.Contains(stderr, "two parts") {
		t.Errorf("duplicate part: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCmd("merge", "-o", merged, filepath.Join(dir, "part-0.json")); code != 1 || !strings.Contains(stderr, "incomplete") {
		t.Errorf("missing copy: exit %d, %s", code, stderr)
	}
}
