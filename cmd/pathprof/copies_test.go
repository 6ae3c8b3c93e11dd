package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
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
	for _, counterModule := range []bool{false, true} {
		dir := filepath.Join(tmp, fmt.Sprintf("copies-%v", counterModule))
		copiesAnywhere(t, node, p, tmp, sbl, dir, counterModule)
	}
	dir := filepath.Join(tmp, "copies-false")
	merged := filepath.Join(tmp, "merged.json")
	// A part merged twice, or alone, is refused or marked incomplete.
	if code, _, stderr := runCmd("merge", "-o", merged, filepath.Join(dir, "part-0.json"), filepath.Join(dir, "part-0.json")); code != 1 || !strings.Contains(stderr, "two parts") {
		t.Errorf("duplicate part: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCmd("merge", "-o", merged, filepath.Join(dir, "part-0.json")); code != 1 || !strings.Contains(stderr, "incomplete") {
		t.Errorf("missing copy: exit %d, %s", code, stderr)
	}
}

// copiesAnywhere writes the copies into dir, runs copy 0 with pathprof
// exec and copy 1 under node, merges their parts and compares the result
// with the SBL profile sbl.
func copiesAnywhere(t *testing.T, node string, p testprogs.CProgram, tmp, sbl, dir string, counterModule bool) {
	t.Helper()
	flags := []string{"instrument", "--strategy", "p3", "--copies", "2", "--weights", sbl, "-o", dir}
	if counterModule {
		flags = append(flags, "--counter-module")
	}
	if code, _, stderr := runCmd(append(flags, p.Wasm)...); code != 0 {
		t.Fatalf("instrument: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCmd("exec", dir, "0")
	if code != 0 || stdout != p.WantStdout {
		t.Fatalf("exec copy 0: exit %d, output differs %v: %s", code, stdout != p.WantStdout, stderr)
	}
	counts := filepath.Join(tmp, "counts-1.out")
	countersArg := "-"
	if counterModule {
		countersArg = filepath.Join(dir, "counters-1.wasm")
	}
	cmd := exec.Command(node, "--no-warnings", filepath.Join(dir, "run.cjs"), filepath.Join(dir, "copy-1.wasm"), countersArg, counts)
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
	a := readProfile(t, sbl)
	b := readProfile(t, merged)
	if ok, diff := a.Equal(b); !ok {
		t.Fatalf("counter module %v: merged copies differ from SBL: %s", counterModule, diff)
	}
}
