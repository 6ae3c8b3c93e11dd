package main

// This file tests stopping pathprof before any program runs: a signal or
// --timeout while it reads, plans, instruments or compiles ends it at
// once, writing nothing and leaving nothing half-written.

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/wasm"
)

// bigModule is a WASI command of n functions, each a chain of d
// diamonds with a loop every tenth: planning P3 over it takes seconds.
func bigModule(n, d int) []byte {
	uleb := func(v uint64) []byte { return wasm.AppendULEB128(nil, v) }
	sleb := func(v int64) []byte { return wasm.AppendSLEB128(nil, v) }
	section := func(id byte, items ...[]byte) []byte {
		payload := uleb(uint64(len(items)))
		for _, it := range items {
			payload = append(payload, it...)
		}
		return append(append([]byte{id}, uleb(uint64(len(payload)))...), payload...)
	}
	funcs := [][]byte{{1}} // _start: () -> ()
	bodies := [][]byte{{2, 0, 0x0b}}
	for i := range n {
		funcs = append(funcs, []byte{0}) // (i32) -> i32
		c := []byte{0}                   // no locals
		for j := range d {
			if j%10 == 5 {
				// loop: if x & k { x = x - 1; continue }
				c = append(append(append(c, 0x03, 0x40, 0x20, 0, 0x41), sleb(int64(i+j))...),
					0x71, 0x04, 0x40, 0x20, 0, 0x41, 1, 0x6b, 0x21, 0, 0x0c, 1, 0x0b, 0x0b)
				continue
			}
			// if x & k { x = x * 3 } else { x = x + 5 }
			c = append(append(append(c, 0x20, 0, 0x41), sleb(int64(1)<<(j%30))...),
				0x71, 0x04, 0x40, 0x20, 0, 0x41, 3, 0x6c, 0x21, 0, 0x05, 0x20, 0, 0x41, 5, 0x6a, 0x21, 0, 0x0b)
		}
		c = append(c, 0x20, 0, 0x0b)
		bodies = append(bodies, append(uleb(uint64(len(c))), c...))
	}
	name := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	out := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	out = append(out, section(1, []byte{0x60, 0, 0}, []byte{0x60, 1, 0x7f, 1, 0x7f})...)
	out = append(out, section(3, funcs...)...)
	out = append(out, section(5, []byte{0, 1})...)
	out = append(out, section(7, append(name("_start"), 0, 0), append(name("memory"), 2, 0))...)
	return append(out, section(10, bodies...)...)
}

// stopRun runs pathprof with args and TMPDIR tmp, waits until ready says
// yes to its stderr so far or it has used half a second of CPU, as cpu asks,
// and pause more, sends sig (none for a timeout) and returns the exit code
// and stderr.
func stopRun(t *testing.T, bin, tmp string, args []string, ready string, cpu bool, pause time.Duration, sig os.Signal) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(freshCacheEnv(t), "TMPDIR="+tmp)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var log strings.Builder
	seen := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if ready != "" && strings.Contains(sc.Text(), ready) {
				select {
				case seen <- struct{}{}:
				default:
				}
			}
		}
	}()
	if sig != nil {
		if cpu {
			for cpuTicks(t, cmd.Process.Pid) < 50 {
				select {
				case <-done:
					t.Fatalf("pathprof ended before it had used half a second of CPU; stderr:\n%s", log.String())
				case <-time.After(10 * time.Millisecond):
				}
			}
		} else {
			select {
			case <-seen:
			case <-done:
				t.Fatalf("pathprof ended before saying %q", ready)
			}
		}
		time.Sleep(pause)
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	cmd.Wait()
	return cmd.ProcessState.ExitCode(), log.String()
}

// cpuTicks is the user and system CPU time of process pid, in clock
// ticks (a hundredth of a second on Linux).
func cpuTicks(t *testing.T, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return u + s
}

// entries lists dir's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestStopWhilePreparing(t *testing.T) {
	if testing.Short() {
		t.Skip("plans a big module in pathprof processes")
	}
	bin := pathprofBinary(t)
	dir := t.TempDir()
	big := filepath.Join(dir, "big.wasm")
	if err := os.WriteFile(big, bigModule(5000, 40), 0o644); err != nil {
		t.Fatal(err)
	}
	stopped := func(t *testing.T, code int, errs string, want int, reason string) {
		t.Helper()
		if code != want || !strings.Contains(errs, "pathprof: "+reason+" before the program started: stopped, nothing written") {
			t.Fatalf("exit %d, want %d saying %s stopped it; stderr:\n%s", code, want, reason, errs)
		}
	}
	empty := func(t *testing.T, dir string, keep ...string) {
		t.Helper()
		if got := strings.Join(entries(t, dir), " "); got != strings.Join(keep, " ") {
			t.Fatalf("%s holds %q, want %q", dir, got, strings.Join(keep, " "))
		}
	}
	for _, tc := range []struct {
		name   string
		flags  []string
		sig    os.Signal
		code   int
		reason string
	}{
		{"sigterm", nil, syscall.SIGTERM, 130, "SIGTERM"},
		{"sigint", nil, os.Interrupt, 130, "SIGINT"},
		{"timeout", []string{"--timeout", "10ms"}, nil, 124, "timeout"},
	} {
		t.Run("profile "+tc.name, func(t *testing.T) {
			out, tmp := t.TempDir(), t.TempDir()
			args := append([]string{"profile", "--no-history", "--strategy", "p3", "--copies", "4", "--cache", t.TempDir(),
				"-o", filepath.Join(out, "p.json")}, tc.flags...)
			code, errs := stopRun(t, bin, tmp, append(args, big), "planning p3 over 4 copies", false, 0, tc.sig)
			stopped(t, code, errs, tc.code, tc.reason)
			if strings.Contains(errs, "built 4 copies") {
				t.Errorf("stopped only once the copies were built:\n%s", errs)
			}
			empty(t, out)
			empty(t, tmp)
		})
	}
	t.Run("instrument", func(t *testing.T) {
		// A directory written before stays whole: the stop comes while
		// the new copies are planned.
		work, tmp := filepath.Join(t.TempDir(), "work"), t.TempDir()
		if code, _, errs := runCmd("instrument", "--strategy", "pbl", "--copies", "2", "-o", work, big); code != 0 {
			t.Fatalf("instrument: exit %d\n%s", code, errs)
		}
		before := entries(t, work)
		code, errs := stopRun(t, bin, tmp, []string{"instrument", "--strategy", "p3", "--copies", "4", "-o", work, big}, "", true, 0, syscall.SIGTERM)
		stopped(t, code, errs, 130, "SIGTERM")
		empty(t, work, before...)
		empty(t, tmp)
		man, _, err := profiler.ReadManifest(work)
		if err != nil || man.Copies != 2 {
			t.Fatalf("the earlier directory: %v", err)
		}
		for c, want := range man.CopySHA256 {
			b, err := os.ReadFile(filepath.Join(work, fmt.Sprintf("copy-%d.wasm", c)))
			if sum := sha256.Sum256(b); err != nil || hex.EncodeToString(sum[:]) != want {
				t.Fatalf("copy %d no longer the manifest's: %v", c, err)
			}
		}
		// exec builds its copy, then runs it: stopped while building,
		// it writes no part.
		code, errs = stopRun(t, bin, tmp, []string{"exec", "--cache", t.TempDir(), work, "1", "5"}, "", true, 0, os.Interrupt)
		stopped(t, code, errs, 130, "SIGINT")
		empty(t, work, before...)
		empty(t, tmp)
	})
}

// TestTestStopWhileBuilding stops pathprof test while the go command
// builds a package's test binary (from an empty build cache, so that it
// takes a while): pathprof exits 130, writing nothing, and the go command
// is stopped before pathprof removes what it was writing, so no binary,
// private file or work directory is left.
func TestTestStopWhileBuilding(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pathprof and the go command as processes")
	}
	bin := pathprofBinary(t)
	dir, tmp := t.TempDir(), t.TempDir()
	t.Setenv("GOCACHE", t.TempDir())
	args := []string{"test", "-o", filepath.Join(dir, "p.json"), "--binary", filepath.Join(dir, "strconv.test.wasm"), "strconv"}
	code, errs := stopRun(t, bin, tmp, args, "building the tests of", false, time.Second, syscall.SIGTERM)
	if code != 130 || !strings.Contains(errs, "nothing written") {
		t.Fatalf("exit %d, want 130 saying nothing was written; stderr:\n%s", code, errs)
	}
	time.Sleep(time.Second) // a go command still running would write on
	for _, d := range []string{dir, tmp} {
		if left := entries(t, d); len(left) > 0 {
			t.Errorf("left %v in %s", left, d)
		}
	}
}
