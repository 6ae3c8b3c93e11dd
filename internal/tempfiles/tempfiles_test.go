package tempfiles

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestExit runs a process that makes files and directories here, renames
// one into place and forgets it, and exits with Exit: only the renamed
// file is left, and the exit code is Exit's.
func TestExit(t *testing.T) {
	if dir := os.Getenv("TEMPFILES_TEST_DIR"); dir != "" {
		f, err := CreateTemp(dir, "half-*")
		if err != nil {
			os.Exit(1)
		}
		f.WriteString("half-written")
		d, err := MkdirTemp(dir, "copies-*")
		if err != nil || os.WriteFile(filepath.Join(d, "x"), []byte("x"), 0o644) != nil {
			os.Exit(1)
		}
		done, err := CreateTemp(dir, "done-*")
		if err != nil || os.Rename(done.Name(), filepath.Join(dir, "result")) != nil {
			os.Exit(1)
		}
		Forget(done.Name())
		gone, err := MkdirTemp(dir, "gone-*")
		if err != nil || RemoveAll(gone) != nil {
			os.Exit(1)
		}
		Exit(7)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestExit$")
	cmd.Env = append(os.Environ(), "TEMPFILES_TEST_DIR="+dir)
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 7 {
		t.Fatalf("exit %d (%v), want 7", code, err)
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Name() != "result" {
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		t.Fatalf("left %v, want only result", names)
	}
}
