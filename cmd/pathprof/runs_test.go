package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/profile"
)

// gridRuns writes a runs file of grid on three board sizes and one it
// refuses (exit code 2), and returns its path and the runs' arguments.
func gridRuns(t *testing.T, dir string) (string, map[string]string) {
	t.Helper()
	args := map[string]string{"four": "4", "six": "6", "seven": "7", "too small": "3"}
	var runs []map[string]any
	for _, l := range []string{"four", "six", "seven", "too small"} {
		runs = append(runs, map[string]any{"label": l, "args": []string{args[l]}})
	}
	b, _ := json.Marshal(map[string]any{"runs": runs})
	path := filepath.Join(dir, "runs.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, args
}

// TestRunsAndMerge checks profile --runs against the runs profiled one
// by one and merged: the same counts path for path, each run's counts
// its own profile's; the failed run is reported, marked and kept; and
// merging the runs' profiles in any order and grouping writes the same
// bytes.
func TestRunsAndMerge(t *testing.T) {
	g := testprogs.CProgramByName(t, "grid")
	dir := t.TempDir()
	runsFile, args := gridRuns(t, dir)
	all := filepath.Join(dir, "all.json")
	code, _, errs := runCmd("profile", "--runs", runsFile, "--jobs", "2", "--strategy", "pbl", "--copies", "2", "-o", all, g.Wasm)
	if code != 1 || !strings.Contains(errs, "run 4 of 4 done") || !strings.Contains(errs, "too small, failed: exit code 2") ||
		!strings.Contains(errs, "\n    grid: board size must be 4..10\n") ||
		!strings.Contains(errs, "4 runs, 1 failed") {
		t.Fatalf("profile --runs: exit %d, want 1 for the failed run\n%s", code, errs)
	}
	merged := readProfile(t, all)
	checkRunsReport(t, all, merged)

	var files []string
	for _, l := range []string{"four", "six", "seven", "too small"} {
		f := filepath.Join(dir, strings.ReplaceAll(l, " ", "-")+".json")
		if code, _, errs := runCmd("profile", "-q", "--label", l, "-o", f, g.Wasm, args[l]); code != 0 && l != "too small" {
			t.Fatalf("%s: exit %d\n%s", l, code, errs)
		}
		files = append(files, f)
	}
	m1, m2, m3, m12 := filepath.Join(dir, "m1.json"), filepath.Join(dir, "m2.json"), filepath.Join(dir, "m3.json"), filepath.Join(dir, "m12.json")
	for _, c := range [][]string{
		append([]string{"merge", "-o", m1}, files...),
		{"merge", "-o", m2, files[3], files[1], files[0], files[2]},
		{"merge", "-o", m12, files[2], files[0]},
		{"merge", "-o", m3, files[3], m12, files[1]},
	} {
		// The merge of a failed run is marked incomplete only when the
		// run did not end; grid's refusal ended it with exit code 2.
		if code, out, errs := runCmd(c...); code != 0 || !strings.Contains(out, "profiles merged") {
			t.Fatalf("%v: exit %d\n%s%s", c, code, out, errs)
		}
	}
	b1, _ := os.ReadFile(m1)
	for _, m := range []string{m2, m3} {
		if b, _ := os.ReadFile(m); !bytes.Equal(b, b1) {
			t.Fatalf("%s differs from %s: the order or grouping of merges shows", m, m1)
		}
	}
	sum := readProfile(t, m1)
	if ok, diff := sum.Equal(merged); !ok {
		t.Fatalf("merge of the runs differs from --runs: %s", diff)
	}
	for i, in := range merged.Inputs {
		alone := readProfile(t, files[indexOfLabel(t, in.Label)])
		one, err := merged.OfInput(i)
		if err != nil {
			t.Fatal(err)
		}
		if ok, diff := one.Equal(alone); !ok || in.InputSHA256 != alone.Inputs[0].InputSHA256 {
			t.Fatalf("input %q differs from its run alone: %s", in.Label, diff)
		}
		if (in.Label == "too small") != (in.ExitCode == 2) {
			t.Fatalf("input %+v", in)
		}
	}
}

// checkRunsReport checks the report's runs of the profile in file: each
// run's paths are its own profile's, and the paths only it executed are
// those no other run's profile has.
func checkRunsReport(t *testing.T, file string, p *profile.Profile) {
	t.Helper()
	code, out, errs := runCmd("report", "--json", file)
	var r struct {
		Inputs []struct {
			Label  string
			Paths  int
			Unique int `json:"unique_paths"`
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || len(r.Inputs) != len(p.Inputs) {
		t.Fatalf("report --json: exit %d\n%s", code, errs)
	}
	seen := map[[2]uint64]int{}
	alone := make([]*profile.Profile, len(p.Inputs))
	for i := range p.Inputs {
		alone[i], _ = p.OfInput(i)
		for _, f := range alone[i].Functions {
			for _, q := range f.Paths {
				seen[[2]uint64{uint64(f.Index), q.ID}]++
			}
		}
	}
	for i, in := range r.Inputs {
		paths, unique := 0, 0
		for _, f := range alone[i].Functions {
			for _, q := range f.Paths {
				paths++
				if seen[[2]uint64{uint64(f.Index), q.ID}] == 1 {
					unique++
				}
			}
		}
		if in.Label != p.Inputs[i].Label || in.Paths != paths || in.Unique != unique {
			t.Fatalf("report's run %+v, want %d paths, %d its own", in, paths, unique)
		}
	}
	if code, out, _ := runCmd("report", file); code != 0 || !strings.Contains(out, "runs, most paths of their own first") {
		t.Fatalf("report: exit %d\n%s", code, out)
	}
}

func indexOfLabel(t *testing.T, l string) int {
	for i, s := range []string{"four", "six", "seven", "too small"} {
		if s == l {
			return i
		}
	}
	t.Fatalf("no run %q", l)
	return -1
}

// TestMergeBadInput checks that merge names the file and what is wrong
// with it, exits 1 and writes nothing.
func TestMergeBadInput(t *testing.T) {
	dir := t.TempDir()
	grid, calc := filepath.Join(dir, "grid.json"), filepath.Join(dir, "calc.json")
	if code, _, errs := runCmd("profile", "-q", "-o", grid, testprogs.CProgramByName(t, "grid").Wasm, "4"); code != 0 {
		t.Fatal(errs)
	}
	c := testprogs.CProgramByName(t, "calc")
	if code, _, errs := runCmd("profile", "-q", "--stdin", c.Stdin, "-o", calc, c.Wasm); code != 0 {
		t.Fatal(errs)
	}
	good, _ := os.ReadFile(grid)
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(data), 0o644)
		return p
	}
	edit := func(old, new string) string {
		if !strings.Contains(string(good), old) {
			t.Fatalf("profile lacks %q", old)
		}
		return strings.Replace(string(good), old, new, 1)
	}
	gp, cp := readProfile(t, grid), readProfile(t, calc)
	firstPath := gp.Functions[0]
	for _, f := range gp.Functions {
		if len(f.Paths) > 0 {
			firstPath = f
			break
		}
	}
	idField := `{"id":` + jsonNum(firstPath.Paths[0].ID) + `,"count":`
	for _, tc := range []struct {
		name string
		file string
		want []string
	}{
		{"other module", calc, []string{"calc.json is a profile of another module", gp.Module.SHA256, cp.Module.SHA256}},
		{"truncated", write("trunc.json", string(good[:len(good)/2])), []string{"trunc.json: truncated profile"}},
		{"count not a number", write("count.json", edit(idField, idField+`"x"`+"  ,\"_\":")), []string{"count.json", "functions.paths.count"}},
		{"id out of range", write("id.json", edit(idField, `{"id":99999999999999,"count":`)), []string{"id.json", "not below the"}},
		{"newer version", write("v3.json", edit(`"version": 2`, `"version": 3`)), []string{"v3.json", "version 3 is newer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "-")+".json")
			code, _, errs := runCmd("merge", "-q", "-o", out, grid, tc.file)
			if code != 1 || strings.Count(errs, "\n") != 1 {
				t.Fatalf("exit %d, want 1 and one line:\n%s", code, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs, w) {
					t.Fatalf("error %q lacks %q", errs, w)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatal("an output was written")
			}
		})
	}
	// A version 1 profile (no inputs) is read, and labelled by its file.
	v1 := strings.Replace(string(good), `"version": 2`, `"version": 1`, 1)
	i, j := strings.Index(v1, `  "inputs": [`), strings.Index(v1, `  "runs": [`)
	old := write("old.json", v1[:i]+v1[j:])
	out := filepath.Join(dir, "with-old.json")
	if code, _, errs := runCmd("merge", "-q", "-o", out, grid, old); code != 0 {
		t.Fatalf("merge with a version 1 profile: exit %d\n%s", code, errs)
	}
	p := readProfile(t, out)
	if len(p.Inputs) != 2 || (p.Inputs[0].Label != "old.json" && p.Inputs[1].Label != "old.json") {
		t.Fatalf("inputs %+v", p.Inputs)
	}
}

// pathCounts is p's count of each path, by function index and path id.
func pathCounts(p *profile.Profile) map[[2]uint64]uint64 {
	m := map[[2]uint64]uint64{}
	for _, f := range p.Functions {
		for _, q := range f.Paths {
			m[[2]uint64{uint64(f.Index), q.ID}] = q.Count
		}
	}
	return m
}

func jsonNum(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestRunsFileErrors checks the runs file's errors: one line naming the
// file and the run, exit 1; flags that give the input are refused.
func TestRunsFileErrors(t *testing.T) {
	g := testprogs.CProgramByName(t, "grid").Wasm
	dir := t.TempDir()
	for _, tc := range []struct{ name, data, want string }{
		{"not json", `{"runs": [`, "not a runs file"},
		{"no runs", `{"runs": []}`, "no runs"},
		{"unknown field", `{"runs": [{"argz": ["4"]}]}`, `unknown field "argz"`},
		{"same label", `{"runs": [{"label": "a"}, {"label": "a"}]}`, `runs 1 and 2 are both labelled "a"`},
		{"missing stdin", `{"runs": [{"label": "a", "stdin": "none.txt"}]}`, `run "a": stdin`},
		{"bad env", `{"runs": [{"env": ["X"]}]}`, `run "run 1": env "X": want K=V`},
		{"bad timeout", `{"runs": [{"timeout": "soon"}]}`, `timeout "soon"`},
	} {
		f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
		os.WriteFile(f, []byte(tc.data), 0o644)
		code, _, errs := runCmd("profile", "-q", "--runs", f, "-o", filepath.Join(dir, "p.json"), g)
		if code != 1 || !strings.Contains(errs, tc.want) || !strings.Contains(errs, f) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d, want 1 and one line with %q and the file:\n%s", tc.name, code, tc.want, errs)
		}
	}
	f := filepath.Join(dir, "ok.json")
	os.WriteFile(f, []byte(`{"runs": [{"args": ["4"]}]}`), 0o644)
	if code, _, errs := runCmd("profile", "--runs", f, "--stdin", f, g); code != 2 || !strings.Contains(errs, "--stdin does not go with it") {
		t.Errorf("--runs with --stdin: exit %d\n%s", code, errs)
	}
}

// TestDiff compares profiles of grid on two board sizes: every path of
// each side is gone, new, changed or unchanged, as the profiles' ids say,
// in the text, JSON and HTML; a profile against itself differs nowhere.
func TestDiff(t *testing.T) {
	g := testprogs.CProgramByName(t, "grid").Wasm
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for f, arg := range map[string]string{a: "5", b: "10"} {
		if code, _, errs := runCmd("profile", "-q", "-o", f, g, arg); code != 0 {
			t.Fatal(errs)
		}
	}
	ia, ib := pathCounts(readProfile(t, a)), pathCounts(readProfile(t, b))
	var gone, new, same, changed int
	for k, n := range ia {
		switch m, ok := ib[k]; {
		case !ok:
			gone++
		case m == n:
			same++
		default:
			changed++ // --threshold 0 below
		}
	}
	for k := range ib {
		if _, ok := ia[k]; !ok {
			new++
		}
	}
	if gone == 0 || new == 0 || changed == 0 {
		t.Fatalf("the runs differ too little for a test: %d gone, %d new, %d changed", gone, new, changed)
	}
	code, out, errs := runCmd("diff", "--json", "--threshold", "0", a, b)
	var d struct {
		SameModule bool `json:"same_module"`
		Totals     struct{ Gone, New, Changed, Unchanged int }
		Functions  []struct {
			Paths []struct {
				Status         string
				CountA, CountB uint64 `json:"-"`
			}
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil {
		t.Fatalf("diff --json: exit %d\n%s%s", code, out, errs)
	}
	if !d.SameModule || d.Totals.Gone != gone || d.Totals.New != new || d.Totals.Changed != changed || d.Totals.Unchanged != same {
		t.Fatalf("totals %+v, want %d gone, %d new, %d changed, %d unchanged", d.Totals, gone, new, changed, same)
	}
	listed := 0
	for _, f := range d.Functions {
		listed += len(f.Paths)
	}
	if listed != gone+new+changed {
		t.Fatalf("%d paths listed, want %d", listed, gone+new+changed)
	}
	code, out, errs = runCmd("diff", a, b)
	if code != 0 || !strings.Contains(out, "gone (only in a)") || !strings.Contains(out, "new  ") || !strings.Contains(out, "grid.c:") {
		t.Fatalf("diff: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runCmd("diff", a, a)
	if code != 0 || !strings.Contains(out, "0 gone (only in a), 0 new (only in b), 0 changed") || !strings.Contains(out, "no function differs") {
		t.Fatalf("diff of a profile with itself: exit %d\n%s", code, out)
	}
	page := filepath.Join(dir, "d.html")
	if code, _, errs := runCmd("diff", "--html", page, "--threshold", "0", a, b); code != 0 {
		t.Fatal(errs)
	}
	html, _ := os.ReadFile(page)
	for st, n := range map[string]int{"gone": gone, "new": new, "changed": changed} {
		if got := strings.Count(string(html), `<tr data-status="`+st+`"`); got != n {
			t.Errorf("the page marks %d paths %s, want %d", got, st, n)
		}
	}
	if code, _, errs := runCmd("diff", a, filepath.Join(dir, "none.json")); code != 1 || !strings.Contains(errs, "none.json") {
		t.Errorf("missing B: exit %d\n%s", code, errs)
	}
}

// TestRunsTimeout runs spin three times on one worker, the second run for
// many minutes with a timeout of its own: it is stopped and marked
// interrupted, its counts at most the full run's, and the worker goes on
// to the third run with copies compiled afresh. A process of its own, as
// the stopped program runs on until pathprof exits.
func TestRunsTimeout(t *testing.T) {
	bin := pathprofBinary(t)
	wasm := filepath.Join(moduleRoot(t), "testdata", "spin", "spin.wasm")
	bound := spinBound(t, wasm)
	dir := t.TempDir()
	runsFile := filepath.Join(dir, "runs.json")
	os.WriteFile(runsFile, []byte(`{"runs": [{"label": "short", "args": ["1"]}, {"label": "long", "args": ["`+spinRounds+`"], "timeout": "1s"}, {"label": "after", "args": ["2"]}]}`), 0o644)
	out := filepath.Join(dir, "p.json")
	cmd := exec.Command(bin, "profile", "--runs", runsFile, "--jobs", "1", "--cache", t.TempDir(), "-o", out, wasm)
	// A collection at every turn: one that began while the long run's
	// program computes would wait for it to call out, which it does not
	// do for minutes, so pathprof must start none while a program runs.
	cmd.Env = append(os.Environ(), "GOGC=1")
	timer := time.AfterFunc(5*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	b, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(b), "long, failed: interrupted by timeout") {
		t.Fatalf("exit %d (%v), want 1 and the timeout reported:\n%s", code, err, b)
	}
	p := readProfile(t, out)
	if len(p.Inputs) != 3 {
		t.Fatalf("%d inputs", len(p.Inputs))
	}
	for i, in := range p.Inputs {
		long := in.Label == "long"
		if long != (in.Interrupted != nil && in.Interrupted.Reason == "timeout") || long == in.Complete {
			t.Fatalf("input %+v", in)
		}
		if !long {
			continue
		}
		one, err := p.OfInput(i)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range one.Functions {
			for _, q := range f.Paths {
				if n, ok := bound[[2]uint64{uint64(f.Index), q.ID}]; !ok || q.Count > n {
					t.Fatalf("function %d path %d: count %d, the full run's %d", f.Index, q.ID, q.Count, n)
				}
			}
		}
	}
}
