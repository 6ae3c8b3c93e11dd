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
