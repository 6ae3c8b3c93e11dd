package main

// This file tests that P3's copies check their outputs as streams, and
// that exec hashes its copy's as it comes: a program writing much output
// runs in about the memory SBL takes.

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pathprof/pathprof/profile"
)

// spewMiB is how much testdata/spew writes in the test, 1 GiB: copies
// holding their output whole would take gigabytes.
const spewMiB = 1024

// spewBlock is block b of what spew writes.
func spewBlock(b int) []byte {
	block := make([]byte, 65536)
	for j := range block {
		block[j] = byte(b*131 + j*7)
	}
	return block
}

// spewSum is the SHA-256 of what spew writes with argument spewMiB.
func spewSum() [sha256.Size]byte {
	h := sha256.New()
	for b := range spewMiB * 16 {
		h.Write(spewBlock(b))
	}
	var s [sha256.Size]byte
	copy(s[:], h.Sum(nil))
	return s
}

// startReading starts pathprof with args, its output a pipe that the
// test reads as the program writes it and its stderr kept: both tests
// watch the output as it comes, not once the run has ended.
func startReading(t *testing.T, bin string, args ...string) (*exec.Cmd, io.Reader, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errs := &strings.Builder{}
	cmd.Stderr = errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdout, errs
}

func TestStreamsUnderCopies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pathprof as a process on 1 GiB of output")
	}
	bin := pathprofBinary(t)
	wasm := filepath.Join(moduleRoot(t), "testdata", "spew", "spew.wasm")
	want := spewSum()
	copies := filepath.Join(t.TempDir(), "copies")
	if code, _, errs := runCmd("instrument", "--strategy", "sbl", "-o", copies, wasm); code != 0 {
		t.Fatalf("instrument: exit %d\n%s", code, errs)
	}
	peak := map[string]int64{}
	for _, st := range []string{"sbl", "p3", "exec"} {
		dir := t.TempDir()
		var args []string
		switch st {
		case "exec": // one copy run on its own, its part hashing the output
			args = []string{"exec", "-q", "-o", filepath.Join(dir, "part.json"), "--cache", dir, copies, "0"}
		case "p3":
			args = []string{"profile", "-q", "--strategy", st, "--copies", "4", "-o", filepath.Join(dir, "p.json"), "--cache", dir, wasm}
		default:
			args = []string{"profile", "-q", "--strategy", st, "-o", filepath.Join(dir, "p.json"), "--cache", dir, wasm}
		}
		cmd, stdout, errs := startReading(t, bin, append(args, "--", fmt.Sprint(spewMiB))...)
		// Hashed as it comes, so that the test's own memory stays small:
		// a child's peak memory counts the test's at the fork.
		h := sha256.New()
		n, err := io.Copy(h, stdout)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%s: %v\n%s", st, err, errs.String())
		}
		if [sha256.Size]byte(h.Sum(nil)) != want || n != spewMiB<<20 {
			t.Fatalf("%s: the program's %d bytes of output are not what it wrote", st, n)
		}
		peak[st] = cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB
		t.Logf("%s: peak resident memory %d MiB", st, peak[st]>>10)
	}
	for _, st := range []string{"p3", "exec"} {
		if peak[st] > peak["sbl"]+100<<10 {
			t.Errorf("%s peaked at %d MiB, sbl at %d MiB: more than 100 MiB apart", st, peak[st]>>10, peak["sbl"]>>10)
		}
	}
}

// TestStreamsFirstBytes checks that P3's copies deliver the program's
// output as it comes: the test reads the first block spew writes under P3
// at k = 4 and only then interrupts pathprof, whose profile must say the
// run was interrupted. Copy 0 cannot finish while the test does not read
// (the pipe fills), so there is no race; copies that held their output
// until all had ended would deliver nothing before the run's end, and the
// profile would be complete.
func TestStreamsFirstBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pathprof as a process")
	}
	bin := pathprofBinary(t)
	wasm := filepath.Join(moduleRoot(t), "testdata", "spew", "spew.wasm")
	dir := t.TempDir()
	out := filepath.Join(dir, "p.json")
	cmd, stdout, errs := startReading(t, bin, "profile", "-q", "--strategy", "p3", "--copies", "4", "-o", out, "--cache", dir, wasm, "--", "16")
	defer cmd.Process.Kill()
	first := make([]byte, 65536)
	if _, err := io.ReadFull(stdout, first); err != nil {
		t.Fatalf("reading the first block: %v", err)
	}
	if !bytes.Equal(first, spewBlock(0)) {
		t.Fatal("the first block is not what spew wrote")
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, stdout); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	p, err := profile.ReadFile(out)
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, errs.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 || p.Interrupted == nil {
		t.Fatalf("exit %d, profile interrupted %v: want 130 and an interrupted profile, the run not ended when the first block came; stderr:\n%s", code, p.Interrupted, errs.String())
	}
}
