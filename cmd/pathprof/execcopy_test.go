package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/testprogs"
)

// TestExecBuildsItsCopy checks that exec, exec --unit and submit build
// no copy they do not run: with copy 1's digest in the manifest wrong,
// copy 0 still runs, copy 1 is refused, and submit hands the units to
// the engine (kubernetes without kubectl, which prints the Job).
func TestExecBuildsItsCopy(t *testing.T) {
	g := testprogs.CProgramByName(t, "grid")
	dir := t.TempDir()
	runsFile, _ := gridRuns(t, dir)
	work, plain := filepath.Join(dir, "work"), filepath.Join(dir, "plain")
	if code, out, errs := runCmd("instrument", "--strategy", "p3", "--copies", "3", "--runs", runsFile, "-o", work, g.Wasm); code != 0 {
		t.Fatalf("instrument --runs: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCmd("instrument", "--strategy", "p3", "--copies", "3", "-o", plain, g.Wasm); code != 0 {
		t.Fatalf("instrument: exit %d\n%s%s", code, out, errs)
	}
	for _, d := range []string{work, plain} {
		man, _, err := profiler.ReadManifest(d)
		if err != nil {
			t.Fatal(err)
		}
		man.CopySHA256[1] = strings.Repeat("0", 64)
		if err := profiler.WriteManifest(d, man); err != nil {
			t.Fatal(err)
		}
	}
	const refused = "copy 1 rebuilt from the plan differs from the one written"
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"exec", "-q", work, "--unit", "0"}, 0, ""},
		{[]string{"exec", "-q", work, "--unit", "2"}, 0, ""},
		{[]string{"exec", "-q", work, "--unit", "1"}, 1, refused},
		{[]string{"exec", "-q", plain, "0", "5"}, 0, ""},
		{[]string{"exec", "-q", plain, "1", "5"}, 1, refused},
		{[]string{"collect", work}, 1, "units done"},
	} {
		code, _, errs := runCmd(c.args...)
		if code != c.code || !strings.Contains(errs, c.says) {
			t.Errorf("%v: exit %d, want %d saying %q\n%s", c.args, code, c.code, c.says, errs)
		}
	}
	t.Setenv("PATH", t.TempDir())
	code, out, errs := runCmd("submit", "--engine", "kubernetes", "--image", "pathprof:test", "--pvc", "work", work)
	if code != 0 || !strings.Contains(out, `"completions": 12`) {
		t.Fatalf("submit: exit %d\n%s%s", code, out, errs)
	}
}
