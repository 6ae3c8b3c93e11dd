package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/profile"
)

// sameAsLocal fails unless the profile in file is the one in local, run
// times apart: the same paths and counts, each attributed to the same
// runs, and the same runs, inputs and exit codes.
func sameAsLocal(t *testing.T, file, local string) {
	t.Helper()
	a, b := readProfile(t, file), readProfile(t, local)
	if ok, diff := a.Equal(b); !ok {
		t.Fatalf("%s differs from %s: %s", file, local, diff)
	}
	if a.Weights == nil {
		t.Fatalf("%s does not say what its plan was weighted by", file)
	}
	norm := func(p *profile.Profile) string {
		for i := range p.Runs {
			p.Runs[i].Seconds = 0
		}
		for i := range p.Inputs {
			p.Inputs[i].Seconds = 0
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if na, nb := norm(a), norm(b); na != nb {
		t.Fatalf("%s differs from %s beyond run times:\n%s\n%s", file, local, na, nb)
	}
}

// TestUnits runs a work directory's units one by one, as an engine's
// tasks would: collect lists the units not run yet, a unit run twice
// writes the same part, and the collected profile is profile --runs'
// (P3, k = 4, grid on four inputs, one of which it refuses).
func TestUnits(t *testing.T) {
	g := testprogs.CProgramByName(t, "grid")
	dir := t.TempDir()
	runsFile, _ := gridRuns(t, dir)
	work := filepath.Join(dir, "work")
	code, out, errs := runCmd("instrument", "--strategy", "p3", "--copies", "4", "--runs", runsFile, "-o", work, g.Wasm)
	if code != 0 || !strings.Contains(out, "16 work units (4 copies × 4 runs)") {
		t.Fatalf("instrument --runs: exit %d\n%s%s", code, out, errs)
	}
	man, _, _, err := profiler.ReadDir(work)
	if err != nil || len(man.Units) != 16 || man.Units[5] != (profiler.Unit{Copy: 1, Run: 1}) {
		t.Fatalf("units %v: %v", man.Units, err)
	}
	for u := range 12 {
		if code, _, errs := runCmd("exec", "-q", work, "--unit", strconv.Itoa(u)); code != 0 {
			t.Fatalf("unit %d: exit %d\n%s", u, code, errs)
		}
	}
	collected := filepath.Join(dir, "collected.json")
	code, _, errs = runCmd("collect", "-o", collected, work)
	if code != 1 || !strings.Contains(errs, "12 of 16 units done") ||
		!strings.Contains(errs, `unit 15 (copy 3 of run "too small"): lost: no part written`) {
		t.Fatalf("collect with 4 units not run: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(collected); err == nil {
		t.Fatal("collect wrote a profile with units missing")
	}
	first, _ := os.ReadFile(profiler.UnitPart(work, 5))
	// The last unit picked from a list, as a resubmitted Kubernetes pod does.
	for _, c := range []struct {
		args []string
		code int // grid refuses "too small" (units 12 to 15) with exit code 2
	}{{[]string{"--unit", "12"}, 2}, {[]string{"--unit", "13"}, 2}, {[]string{"--unit", "14"}, 2},
		{[]string{"--unit", "2", "--units", "7,9,15"}, 2}, {[]string{"--unit", "5"}, 0}} {
		if code, _, errs := runCmd(append([]string{"exec", "-q", work}, c.args...)...); code != c.code {
			t.Fatalf("exec %v: exit %d, want %d\n%s", c.args, code, c.code, errs)
		}
	}
	if again, _ := os.ReadFile(profiler.UnitPart(work, 5)); !bytes.Equal(again, first) || len(first) == 0 {
		t.Fatal("unit 5 run again wrote another part")
	}
	code, out, errs = runCmd("collect", "-o", collected, work)
	if code != 1 || !strings.Contains(out, "16 units of 4 runs merged, 4 failed") ||
		!strings.Contains(errs, `unit 15 (copy 3 of run "too small") failed: exit code 2`) {
		t.Fatalf("collect: exit %d, want 1 for the failed run\n%s%s", code, out, errs)
	}
	local := filepath.Join(dir, "local.json")
	// Without the history a profile of grid kept by another test would
	// plan the copies otherwise than instrument's estimate.
	if code, _, errs := runCmd("profile", "-q", "--no-history", "--runs", runsFile, "--strategy", "p3", "--copies", "4", "-o", local, g.Wasm); code != 1 {
		t.Fatalf("profile --runs: exit %d\n%s", code, errs)
	}
	sameAsLocal(t, collected, local)
	checkRunsReport(t, collected, readProfile(t, collected))
}

// TestUnitErrors checks exec --unit's and collect's refusals.
func TestUnitErrors(t *testing.T) {
	g := testprogs.CProgramByName(t, "grid")
	dir := t.TempDir()
	runsFile, _ := gridRuns(t, dir)
	work, plain := filepath.Join(dir, "work"), filepath.Join(dir, "plain")
	if code, out, errs := runCmd("instrument", "--strategy", "pbl", "--copies", "2", "--runs", runsFile, "-o", work, g.Wasm); code != 0 {
		t.Fatalf("instrument: %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCmd("instrument", "--strategy", "pbl", "--copies", "2", "-o", plain, g.Wasm); code != 0 {
		t.Fatalf("instrument: %d\n%s%s", code, out, errs)
	}
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"exec", work, "--unit", "8"}, 2, "unit 8: " + work + " has units 0 to 7"},
		{[]string{"exec", work, "--unit", "x"}, 2, `--unit "x" is not a number`},
		{[]string{"exec", work, "--unit", "3", "--units", "1,2"}, 2, "--unit 3: --units lists 2 units"},
		{[]string{"exec", "--stdin", runsFile, work, "--unit", "1"}, 2, "--env, --dir and --stdin do not go with --unit"},
		{[]string{"exec", plain, "--unit", "0"}, 1, "has no work units: write it with instrument --runs FILE"},
		{[]string{"collect", plain}, 1, "has no work units"},
		{[]string{"collect", "--resubmit", work}, 1, "was never submitted"},
		{[]string{"submit", "--engine", "nomad", work}, 2, `--engine "nomad": want slurm or kubernetes`},
		{[]string{"submit", "--engine", "kubernetes", work}, 2, "needs --image IMAGE and --pvc CLAIM"},
		{[]string{"instrument", "--host", "js", "--runs", runsFile, "-o", filepath.Join(dir, "js"), g.Wasm}, 2, "not with --host js"},
	} {
		code, _, errs := runCmd(c.args...)
		if code != c.code || !strings.Contains(errs, c.says) {
			t.Errorf("%v: exit %d, want %d saying %q\n%s", c.args, code, c.code, c.says, errs)
		}
	}
}

// TestKubernetesSubmit submits a work directory where there is no
// kubectl: the Indexed Job is printed (internal/cluster checks its
// fields) and recorded, and collect --resubmit prints one for the units
// that are lost, each pod picking its unit from the list.
func TestKubernetesSubmit(t *testing.T) {
	g := testprogs.CProgramByName(t, "grid")
	dir := t.TempDir()
	runsFile, _ := gridRuns(t, dir)
	work := filepath.Join(dir, "work")
	if code, out, errs := runCmd("instrument", "--strategy", "pbl", "--copies", "2", "--runs", runsFile, "-o", work, g.Wasm); code != 0 {
		t.Fatalf("instrument: %d\n%s%s", code, out, errs)
	}
	t.Setenv("PATH", t.TempDir())
	code, out, errs := runCmd("submit", "--engine", "kubernetes", "--image", "pathprof:test", "--pvc", "work", "--throttle", "3", work)
	var job map[string]any
	if err := json.Unmarshal([]byte(out), &job); code != 0 || err != nil || !strings.Contains(errs, "no kubectl here") {
		t.Fatalf("submit: exit %d (%v)\n%s%s", code, err, out, errs)
	}
	spec := job["spec"].(map[string]any)
	if spec["completionMode"] != "Indexed" || spec["completions"] != 8.0 || spec["parallelism"] != 3.0 {
		t.Fatalf("spec %v", spec)
	}
	for _, u := range []string{"0", "1", "2", "3", "4", "6", "7"} {
		if code, _, errs := runCmd("exec", "-q", work, "--unit", u); code != 0 && u != "6" && u != "7" {
			t.Fatalf("unit %s: exit %d\n%s", u, code, errs)
		}
	}
	code, out, errs = runCmd("collect", "--resubmit", work)
	if code != 0 || !strings.Contains(errs, "resubmitting 1 units: 5") || !strings.Contains(out, `"--units",`) || !strings.Contains(out, `"5"`) ||
		!strings.Contains(out, `"completions": 1,`) {
		t.Fatalf("collect --resubmit: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = runCmd("collect", work)
	if code != 1 || !strings.Contains(errs, "unit 5 (copy 1 of run \"seven\"): lost: no part written; log kubectl logs -l job-name=") ||
		!strings.Contains(errs, "-2,batch.kubernetes.io/job-completion-index=0") {
		t.Fatalf("collect: exit %d\n%s", code, errs)
	}
}

func TestHasUnit(t *testing.T) {
	for _, c := range []struct {
		args string
		want bool
	}{
		{"DIR --unit 3", true},
		{"--timeout 5s -q DIR --units=1,2 --unit 0", true},
		{"DIR 0 --unit 3", false}, // the program's arguments
		{"--stub-missing DIR 1 -- --unit", false},
		{"--env K=V DIR 0", false},
	} {
		if got := hasUnit(strings.Fields(c.args)); got != c.want {
			t.Errorf("hasUnit(%s) = %v", c.args, got)
		}
	}
}
