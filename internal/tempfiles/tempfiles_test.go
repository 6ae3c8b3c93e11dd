package tempfiles

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
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

// TestExitStopsChildren runs a process whose child command keeps writing
// into a temporary directory made here until SIGINT, and exits with Exit
// while the child runs: the child is stopped (it says so) before the
// directory is removed, so nothing is written there again.
func TestExitStopsChildren(t *testing.T) {
	if dir := os.Getenv("TEMPFILES_CHILD_DIR"); dir != "" {
		work, err := MkdirTemp(dir, "work-*")
		if err != nil {
			os.Exit(1)
		}
		go func() {
			time.Sleep(300 * time.Millisecond)
			Exit(5)
		}()
		script := `trap 'echo stopped > "$0"; exit 3' INT; while :; do mkdir -p "$1" && echo x > "$1/f"; sleep 0.02; done`
		Run(exec.Command("sh", "-c", script, filepath.Join(dir, "stopped"), work))
		os.Exit(1) // the child ended before Exit stopped it
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestExitStopsChildren$")
	cmd.Env = append(os.Environ(), "TEMPFILES_CHILD_DIR="+dir)
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 5 {
		t.Fatalf("exit %d (%v), want 5", code, err)
	}
	time.Sleep(200 * time.Millisecond) // a child still running writes again
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Name() != "stopped" {
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		t.Fatalf("left %v, want only the child's stopped", names)
	}
}
