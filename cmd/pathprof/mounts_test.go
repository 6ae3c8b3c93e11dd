package main

// This file tests P3's copies of a writable mount: they see its symbolic
// links, and a large sparse file costs them no memory.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestMountCopies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pathprof as a process")
	}
	bin := pathprofBinary(t)
	mount := t.TempDir()
	if err := os.WriteFile(filepath.Join(mount, "big"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(mount, "big"), 1<<30); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("big", filepath.Join(mount, "link")); err != nil {
		t.Fatal(err)
	}
	wasm := filepath.Join(moduleRoot(t), "testdata", "lsdir", "lsdir.wasm")
	want := "big file 1073741824 bytes\nlink link -> big\n"
	peak := map[string]int64{}
	for _, st := range []string{"sbl", "p3"} {
		dir := t.TempDir()
		args := []string{"profile", "-q", "--strategy", st, "-o", filepath.Join(dir, "p.json"), "--cache", dir, "--dir", mount + ":/data"}
		if st == "p3" {
			args = append(args, "--copies", "4")
		}
		cmd := exec.Command(bin, append(args, wasm, "--", "/data")...)
		var out, errs strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errs
		// Every copy must print what copy 0 prints, which lists the link.
		if err := cmd.Run(); err != nil || out.String() != want {
			t.Fatalf("%s: %v, printed\n%s\nwant\n%s\nstderr:\n%s", st, err, out.String(), want, errs.String())
		}
		peak[st] = cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB
		t.Logf("%s: peak resident memory %d MiB", st, peak[st]>>10)
	}
	if peak["p3"] > peak["sbl"]+100<<10 {
		t.Fatalf("p3 over 4 copies peaked at %d MiB, sbl at %d MiB: more than 100 MiB apart", peak["p3"]>>10, peak["sbl"]>>10)
	}
}
