package main

// This file tests interrupting a profile: a signal or --timeout stops a
// loop-bound program's run, and the profile is written as it stands.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pathprof/pathprof/internal/osp"
	"github.com/pathprof/pathprof/profile"
)

// pathprofBinary builds the command, so that a test can run it as a
// process of its own: signal it, or measure its memory.
func pathprofBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pathprof")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// spinRounds makes testdata/spin run for many minutes, instrumented or not
// (1.2·10^11 rounds).
const spinRounds = "100000"

// spinBound returns, for every path of spin's full run with spinRounds
// that the run takes before it prints, its count, computed from two short
// full runs: each such path's count is a·M + b (spin.c) for arguments M
// written with as many digits. The paths that print the checksum, whose
// digits differ, are left out: an interrupted run does not reach them.
func spinBound(t *testing.T, wasm string) map[[2]uint64]uint64 {
	t.Helper()
	const n1, n2 = 1, 2
	read := func(n int) *profile.Profile {
		out := filepath.Join(t.TempDir(), "p.json")
		arg := fmt.Sprintf("%0*d", len(spinRounds), n)
		if code, _, errs := runCmd("profile", "-q", "-o", out, wasm, "--", arg); code != 0 {
			t.Fatalf("spin %d: exit %d\n%s", n, code, errs)
		}
		p, err := profile.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	c1, c2 := pathCounts(read(n1)), pathCounts(read(n2))
	var rounds uint64
	fmt.Sscan(spinRounds, &rounds)
	bound := map[[2]uint64]uint64{}
	for k, v2 := range c2 {
		v1, ok := c1[k]
		if !ok || v2 < v1 {
			continue // a path of printf's
		}
		bound[k] = v1 + (v2-v1)*(rounds-n1)
	}
	if len(bound) < len(c2)/2 {
		t.Fatalf("only %d of the %d paths of spin count a·rounds + b", len(bound), len(c2))
	}
	return bound
}

// started reports whether pathprof's stderr so far says the copies run:
// SBL's progress says it instrumented; P3's, the last copy started.
func started(log string) bool {
	return strings.Contains(log, "instrumented") || strings.Contains(log, "running copy 4 of 4")
}

// profileSpin is the command line of pathprof profile of spin with
// flags, writing the profile to out.
func profileSpin(t *testing.T, out string, flags ...string) []string {
	wasm := filepath.Join(moduleRoot(t), "testdata", "spin", "spin.wasm")
	args := append([]string{"profile", "-o", out, "--cache", t.TempDir()}, flags...)
	return append(args, wasm, "--", spinRounds)
}

// spinTest skips the test in short mode, else returns pathprof built as
// a command, spin's module and the bound of spin's full run (spinBound).
func spinTest(t *testing.T) (bin, wasm string, bound map[[2]uint64]uint64) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs pathprof as a process")
	}
	wasm = filepath.Join(moduleRoot(t), "testdata", "spin", "spin.wasm")
	return pathprofBinary(t), wasm, spinBound(t, wasm)
}

// interruptRun starts pathprof with args, waits until ready says yes to
// its stderr so far and pause more, then sends the signals (none for a
// timeout) one after the other. It returns the exit code, how long
// pathprof took to exit after the first signal (or after it started, for
// none) and its stderr.
func interruptRun(t *testing.T, bin string, args []string, ready func(string) bool, pause time.Duration, sigs ...os.Signal) (int, time.Duration, string) {
	t.Helper()
	warmCache(t, bin, args)
	cmd := exec.Command(bin, args...)
	cmd.Env = freshCacheEnv(t)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var log strings.Builder // read by this goroutine only once done is closed
	running := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if ready(log.String()) {
				once.Do(func() { close(running) })
			}
		}
	}()
	if len(sigs) > 0 {
		select {
		case <-running:
		case <-time.After(2 * time.Minute):
			t.Fatal("pathprof was not ready within 2 minutes")
		}
		time.Sleep(pause)
		start = time.Now()
		for _, s := range sigs {
			if err := cmd.Process.Signal(s); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	exited := make(chan error, 1)
	go func() { <-done; exited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-exited:
	case <-time.After(3 * time.Minute):
		t.Fatalf("pathprof still running 3 minutes on; stderr:\n%s", log.String())
	}
	took := time.Since(start)
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		t.Fatal(werr)
	}
	return cmd.ProcessState.ExitCode(), took, log.String()
}

// warmCache runs args once with spin's short run in place of spinRounds,
// its output elsewhere and no deadline or snapshots, so that the copies
// are already compiled in args' --cache when the run the test signals
// starts: the pause before the signal is then spent running the program,
// not compiling it, however loaded the machine. Both runs plan alike:
// neither has a previous profile to plan by (freshCacheEnv).
func warmCache(t *testing.T, bin string, args []string) {
	t.Helper()
	var short []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case spinRounds:
			short = append(short, "1")
		case "-o":
			short = append(short, a, filepath.Join(t.TempDir(), filepath.Base(args[i+1])))
			i++
		case "--timeout", "--snapshot-every":
			i++ // a short run needs neither, and a deadline could stop it
		default:
			short = append(short, a)
		}
	}
	cmd := exec.Command(bin, short...)
	cmd.Env = freshCacheEnv(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pathprof %s: %v\n%s", strings.Join(short, " "), err, out)
	}
}

// freshCacheEnv is the test's environment with an empty user cache
// directory, where pathprof keeps the profiles it plans by.
func freshCacheEnv(t *testing.T) []string {
	return append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
}

// checkInterrupted checks the profile at out: interrupted for reason, its
// paths among the full run's (bound), with counts no larger, and at least
// one path of step counted beyond what a short run counts.
func checkInterrupted(t *testing.T, out, reason string, copies int, bound map[[2]uint64]uint64) {
	t.Helper()
	p, err := profile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	in := p.Interrupted
	if in == nil || p.Complete || in.Reason != reason || in.Approximate != (copies > 1) || p.Copies != copies {
		t.Fatalf("profile: complete %v, %d copies, interrupted %+v; want %s over %d copies", p.Complete, p.Copies, in, reason, copies)
	}
	far := false
	for _, f := range p.Functions {
		for _, q := range f.Paths {
			b, ok := bound[[2]uint64{uint64(f.Index), q.ID}]
			if !ok {
				t.Errorf("function %d path %d: not a path of the full run before it prints", f.Index, q.ID)
			}
			if q.Count > b {
				t.Errorf("function %d path %d: counted %d, the full run %d", f.Index, q.ID, q.Count, b)
			}
			if f.Name == "step" && q.Count > 10000 {
				far = true
			}
		}
	}
	if !far {
		t.Errorf("no path of step counted more than 10000 times: the counts were not read as the program ran")
	}
}

func TestInterrupt(t *testing.T) {
	bin, _, bound := spinTest(t)
	// The program runs for many minutes: pathprof exits long before, on a
	// loaded machine too, and tells how long it took.
	const limit = 20 * time.Second
	for _, tc := range []struct {
		name    string
		flags   []string
		sigs    []os.Signal
		code    int
		reason  string
		copies  int
		maxTime time.Duration
	}{
		{"sigint", nil, []os.Signal{os.Interrupt}, 130, "SIGINT", 1, limit},
		{"sigterm", nil, []os.Signal{syscall.SIGTERM}, 130, "SIGTERM", 1, limit},
		{"timeout", []string{"--timeout", "2s"}, nil, 124, "timeout", 1, 2*time.Minute + limit},
		{"p3", []string{"--strategy", "p3", "--copies", "4", "--jobs", "4"}, []os.Signal{os.Interrupt}, 130, "SIGINT", 4, limit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "p.json")
			code, took, errs := interruptRun(t, bin, profileSpin(t, out, tc.flags...), started, time.Second, tc.sigs...)
			t.Logf("exited %d after %v", code, took)
			if code != tc.code || took > tc.maxTime {
				t.Fatalf("exit %d after %v, want %d within %v; stderr:\n%s", code, took, tc.code, tc.maxTime, errs)
			}
			if !strings.Contains(errs, "marked interrupted") {
				t.Errorf("stderr does not say the profile is marked interrupted:\n%s", errs)
			}
			checkInterrupted(t, out, tc.reason, tc.copies, bound)
		})
	}
	t.Run("p3 waves", func(t *testing.T) {
		// One copy at a time: the first runs on when the signal comes,
		// the others wait for their wave and are not waited for.
		out := filepath.Join(t.TempDir(), "p.json")
		first := func(log string) bool { return strings.Contains(log, "running copy 1 of 4") }
		code, took, errs := interruptRun(t, bin, profileSpin(t, out, "--strategy", "p3", "--copies", "4", "--jobs", "1"), first, time.Second, os.Interrupt)
		t.Logf("exited %d after %v", code, took)
		if code != 130 || took > limit {
			t.Fatalf("exit %d after %v, want 130 within %v; stderr:\n%s", code, took, limit, errs)
		}
		p := readProfile(t, out)
		if p.Interrupted == nil || p.Complete || len(p.Runs) != 4 || strings.Count(p.Incomplete, "not started") != 3 {
			t.Fatalf("profile: complete %v, %d runs, interrupted %+v, incomplete %q; want copies 1 to 3 not started", p.Complete, len(p.Runs), p.Interrupted, p.Incomplete)
		}
		for _, f := range p.Functions {
			for _, q := range f.Paths {
				if b, ok := bound[[2]uint64{uint64(f.Index), q.ID}]; !ok || q.Count > b {
					t.Errorf("function %d path %d: counted %d, not within the full run's", f.Index, q.ID, q.Count)
				}
			}
		}
	})
	t.Run("second signal", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "p.json")
		code, took, errs := interruptRun(t, bin, profileSpin(t, out), started, time.Second, os.Interrupt, os.Interrupt)
		t.Logf("exited %d after %v", code, took)
		if code != 130 || took > limit {
			t.Fatalf("exit %d after %v, want 130 within %v; stderr:\n%s", code, took, limit, errs)
		}
		// The first signal's profile may or may not have been written:
		// if it was, it is whole.
		if _, err := os.Stat(out); err == nil {
			if _, err := profile.ReadFile(out); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestSnapshots checks --snapshot-every: a run of spin killed with SIGKILL
// after a few snapshots leaves on disk a valid profile marked as a
// snapshot, whose paths are among the full run's with counts no larger,
// for SBL and for P3 at k = 4; and a run that ends writes the same
// profile as a run without snapshots.
func TestSnapshots(t *testing.T) {
	bin, wasm, bound := spinTest(t)
	threeSnapshots := func(log string) bool { return strings.Count(log, "snapshot after") >= 3 }
	for _, tc := range []struct {
		name   string
		flags  []string
		copies int
	}{
		{"sbl", nil, 1},
		{"p3", []string{"--strategy", "p3", "--copies", "4", "--jobs", "4"}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "p.json")
			flags := append([]string{"--snapshot-every", "1s"}, tc.flags...)
			code, _, errs := interruptRun(t, bin, profileSpin(t, out, flags...), threeSnapshots, 0, syscall.SIGKILL)
			if code != -1 {
				t.Fatalf("exit %d, want killed; stderr:\n%s", code, errs)
			}
			checkInterrupted(t, out, profile.SnapshotReason, tc.copies, bound)
		})
	}
	t.Run("ends", func(t *testing.T) {
		// Several seconds here: long enough for a snapshot or more.
		const rounds = "800"
		dir := t.TempDir()
		snap, plain := filepath.Join(dir, "snap.json"), filepath.Join(dir, "plain.json")
		code, _, errs := runCmd("profile", "-o", snap, "--snapshot-every", "1s", wasm, "--", rounds)
		if code != 0 || !strings.Contains(errs, "snapshot after") {
			t.Fatalf("with snapshots: exit %d, want 0 after a snapshot; stderr:\n%s", code, errs)
		}
		if code, _, errs := runCmd("profile", "-q", "-o", plain, wasm, "--", rounds); code != 0 {
			t.Fatalf("without snapshots: exit %d\n%s", code, errs)
		}
		a, b := readProfile(t, snap), readProfile(t, plain)
		if !a.Complete || a.Interrupted != nil {
			t.Fatalf("the final profile is not complete: %s", a.Incomplete)
		}
		if ok, diff := a.Equal(b); !ok {
			t.Fatalf("the profiles with and without snapshots differ: %s", diff)
		}
	})
	t.Run("too often", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "p.json")
		code, _, errs := runCmd("profile", "-o", out, "--snapshot-every", "10ms", wasm, "--", "1")
		if code != 2 || !strings.Contains(errs, "at least 1s") {
			t.Fatalf("exit %d, want 2 saying at least 1s; stderr:\n%s", code, errs)
		}
	})
}

// TestExecInterrupt checks that pathprof exec stops a loop-bound copy at
// SIGINT, SIGTERM or --timeout as profile does: it exits at once with 130
// (124), writing the part marked interrupted, and merge makes of such
// parts a profile marked interrupted whose paths are among the full run's
// with counts no larger; for P3's two copies both interrupted, marked
// approximate.
func TestExecInterrupt(t *testing.T) {
	bin, wasm, bound := spinTest(t)
	const limit = 20 * time.Second
	// execCopy runs copy c of dir until stopped as flags and sigs say and
	// returns its part.
	execCopy := func(t *testing.T, dir string, c int, flags []string, code int, sigs ...os.Signal) string {
		t.Helper()
		part := filepath.Join(t.TempDir(), fmt.Sprintf("part-%d.json", c))
		args := append(append([]string{"exec", "-o", part, "--cache", t.TempDir()}, flags...), dir, fmt.Sprint(c), spinRounds)
		ready := func(log string) bool { return strings.Contains(log, "running copy") }
		got, took, errs := interruptRun(t, bin, args, ready, time.Second, sigs...)
		t.Logf("copy %d exited %d after %v", c, got, took)
		maxTime := limit
		if len(sigs) == 0 {
			maxTime += 2 * time.Minute // from the start, compiling included
		}
		if got != code || took > maxTime || !strings.Contains(errs, "marked interrupted") {
			t.Fatalf("copy %d: exit %d after %v, want %d within %v, saying the part is marked interrupted; stderr:\n%s", c, got, took, code, maxTime, errs)
		}
		return part
	}
	// mergeInterrupted merges the parts, which must make a profile marked
	// interrupted, and checks it.
	mergeInterrupted := func(t *testing.T, dir, reason string, copies int, parts ...string) {
		t.Helper()
		merged := filepath.Join(t.TempDir(), "merged.json")
		args := append([]string{"merge", "--dir", dir, "-o", merged}, parts...)
		if code, _, errs := runCmd(args...); code != 1 || !strings.Contains(errs, "interrupted by "+reason) {
			t.Fatalf("merge: exit %d, want 1 saying interrupted by %s; stderr:\n%s", code, reason, errs)
		}
		checkInterrupted(t, merged, reason, copies, bound)
	}
	sbl := filepath.Join(t.TempDir(), "sbl")
	if code, _, errs := runCmd("instrument", "--strategy", "sbl", "-o", sbl, wasm); code != 0 {
		t.Fatalf("instrument: exit %d\n%s", code, errs)
	}
	for _, tc := range []struct {
		name   string
		flags  []string
		sigs   []os.Signal
		code   int
		reason string
	}{
		{"sigint", nil, []os.Signal{os.Interrupt}, 130, "SIGINT"},
		{"sigterm", nil, []os.Signal{syscall.SIGTERM}, 130, "SIGTERM"},
		{"timeout", []string{"--timeout", "2s"}, nil, 124, "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			part := execCopy(t, sbl, 0, tc.flags, tc.code, tc.sigs...)
			mergeInterrupted(t, sbl, tc.reason, 1, part)
		})
	}
	t.Run("p3", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "p3")
		if code, _, errs := runCmd("instrument", "--strategy", "p3", "--copies", "2", "-o", dir, wasm); code != 0 {
			t.Fatalf("instrument: exit %d\n%s", code, errs)
		}
		p0 := execCopy(t, dir, 0, nil, 130, os.Interrupt)
		p1 := execCopy(t, dir, 1, nil, 130, os.Interrupt)
		mergeInterrupted(t, dir, "SIGINT", 2, p0, p1)
	})
}

// TestOSPInterrupt checks that SIGINT or SIGTERM stops osp's sampling of a
// loop-bound run at once, exit 130, writing the samples taken until then
// marked incomplete; and that osp-score, which needs its runs whole, exits
// 130 at once writing nothing.
func TestOSPInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pathprof as a process")
	}
	bin := pathprofBinary(t)
	wasm := filepath.Join(moduleRoot(t), "testdata", "spin", "spin.wasm")
	const limit = 20 * time.Second
	for _, tc := range []struct {
		name   string
		sig    os.Signal
		reason string
	}{
		{"sigint", os.Interrupt, "SIGINT"},
		{"sigterm", syscall.SIGTERM, "SIGTERM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "osp.json")
			args := []string{"osp", "-o", out, "--cache", t.TempDir(), wasm, "--", spinRounds}
			sampling := func(log string) bool { return strings.Contains(log, "sampling a run of") }
			code, took, errs := interruptRun(t, bin, args, sampling, time.Second, tc.sig)
			t.Logf("exited %d after %v", code, took)
			if code != 130 || took > limit {
				t.Fatalf("exit %d after %v, want 130 within %v; stderr:\n%s", code, took, limit, errs)
			}
			if !strings.Contains(errs, "marked incomplete") {
				t.Errorf("stderr does not say the profile is marked incomplete:\n%s", errs)
			}
			p, err := osp.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if p.Run.Complete || !strings.Contains(p.Run.Error, tc.reason) {
				t.Errorf("run: complete %v, error %q; want incomplete, naming %s", p.Run.Complete, p.Run.Error, tc.reason)
			}
			if p.Sampling.Samples == 0 || len(p.Subpaths) == 0 || p.Run.BlockEntries == 0 {
				t.Errorf("%d samples, %d subpaths, %d block entries: the samples taken were not written", p.Sampling.Samples, len(p.Subpaths), p.Run.BlockEntries)
			}
		})
	}
	t.Run("osp-score", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "score.json")
		cmd := exec.Command(bin, "osp-score", "-o", out, wasm, "--", spinRounds)
		cmd.Env = freshCacheEnv(t)
		var errs strings.Builder
		cmd.Stderr = &errs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		time.Sleep(2 * time.Second) // compiling or running: either way it stops
		start := time.Now()
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case <-exited:
		case <-time.After(3 * time.Minute):
			t.Fatal("osp-score still running 3 minutes after SIGTERM")
		}
		took := time.Since(start)
		if code := cmd.ProcessState.ExitCode(); code != 130 || took > limit || !strings.Contains(errs.String(), "nothing written") {
			t.Fatalf("exit %d after %v, want 130 within %v saying nothing was written; stderr:\n%s", code, took, limit, errs.String())
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want no file", out, err)
		}
	})
}
