package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/profile"
)

// TestMain points the user cache directory at a temporary one, so that
// the profile command's default --history (and compilation cache) is no
// directory of the machine's; the test programs and the go command (which
// builds pathprof for the tests that run it as a process) keep their
// shared caches.
func TestMain(m *testing.M) {
	if base, err := os.UserCacheDir(); err == nil {
		for _, v := range [][2]string{{"PATHPROF_TESTPROGS_CACHE", "pathprof-testprogs"}, {"GOCACHE", "go-build"}} {
			if os.Getenv(v[0]) == "" {
				os.Setenv(v[0], filepath.Join(base, v[1]))
			}
		}
	}
	dir, err := os.MkdirTemp("", "pathprof-cmd-test-cache")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestHistoryFlags: the profile command keeps its profile under the user
// cache directory by default, and a second p3 run is planned by it;
// --history DIR keeps it in DIR instead; --no-history keeps nothing and
// plans by the static estimate; the report says what the plan used.
func TestHistoryFlags(t *testing.T) {
	p := testprogs.CProgramByName(t, "calc")
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	out := filepath.Join(t.TempDir(), "p.json")
	profileWith := func(flags ...string) *profile.Profile {
		t.Helper()
		args := append([]string{"profile", "-q", "-o", out, "--strategy", "p3", "--copies", "2", "--stdin", p.Stdin}, flags...)
		if code, _, stderr := runCmd(append(args, p.Wasm)...); code != int(p.WantExitCode) {
			t.Fatalf("%v: exit %d\n%s", flags, code, stderr)
		}
		return readProfile(t, out)
	}
	entries := func(dir string) int {
		es, _ := os.ReadDir(dir)
		return len(es)
	}
	kept := filepath.Join(cache, "pathprof", "history")
	if w := profileWith("--no-history").Weights; w == nil || w.Source != profile.WeightsEstimate || entries(kept) != 0 {
		t.Fatalf("--no-history: planned by %+v, %d entries in %s", w, entries(kept), kept)
	}
	profileWith()
	if w := profileWith().Weights; w == nil || w.Source != profile.WeightsPrevious {
		t.Fatalf("second run planned by %+v, want the previous profile", w)
	}
	if entries(kept) == 0 {
		t.Fatal("nothing kept under the user cache directory")
	}
	elsewhere := t.TempDir()
	if w := profileWith("--history", elsewhere).Weights; w == nil || w.Source != profile.WeightsEstimate || entries(elsewhere) == 0 {
		t.Fatalf("--history DIR: planned by %+v, %d entries in DIR", w, entries(elsewhere))
	}
	if code, out, _ := runCmd("report", out); code != 0 || !strings.Contains(out, "planned by") || !strings.Contains(out, "a static estimate of the run") {
		t.Fatalf("report says nothing of the plan's weights:\n%s", out)
	}
}

// TestRunsHistory: profile --runs keeps its merged profile in the history
// store, and the next --runs (or single run) of the module is planned by
// it, the profile saying so; --no-history plans by the estimate.
func TestRunsHistory(t *testing.T) {
	g := testprogs.CProgramByName(t, "grid")
	dir := t.TempDir()
	runsFile, _ := gridRuns(t, dir)
	hist := filepath.Join(dir, "history")
	out := filepath.Join(dir, "p.json")
	runs := func(flags ...string) *profile.Profile {
		t.Helper()
		args := append([]string{"profile", "-q", "--runs", runsFile, "--strategy", "p3", "--copies", "2", "-o", out}, flags...)
		if code, _, stderr := runCmd(append(args, g.Wasm)...); code != 1 {
			t.Fatalf("%v: exit %d, want 1 for the run grid refuses\n%s", flags, code, stderr)
		}
		return readProfile(t, out)
	}
	if w := runs("--no-history").Weights; w == nil || w.Source != profile.WeightsEstimate {
		t.Fatalf("--no-history: planned by %+v, want the estimate", w)
	}
	if w := runs("--history", hist).Weights; w == nil || w.Source != profile.WeightsEstimate {
		t.Fatalf("first run with --history: planned by %+v, want the estimate", w)
	}
	if w := runs("--history", hist).Weights; w == nil || w.Source != profile.WeightsPrevious {
		t.Fatalf("second run with --history: planned by %+v, want the previous profile", w)
	}
	if code, _, stderr := runCmd("profile", "-q", "--strategy", "p3", "--copies", "2", "--history", hist, "-o", out, g.Wasm, "6"); code != 0 {
		t.Fatalf("a single run after --runs: exit %d\n%s", code, stderr)
	}
	if w := readProfile(t, out).Weights; w == nil || w.Source != profile.WeightsPrevious {
		t.Fatalf("a single run after --runs: planned by %+v, want the previous profile", w)
	}
}
