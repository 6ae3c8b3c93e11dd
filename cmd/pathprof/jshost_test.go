package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pathprof/pathprof/internal/chromium"
	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/tracer"
	"github.com/pathprof/pathprof/profile"
)

// growDiffers names the functions of grow's two emscripten builds that
// differ, with the reason; every other function both have must count the
// same paths the same number of times.
var growDiffers = map[string]string{
	"__memcpy":   "calls the glue's emscripten_memcpy_big for large copies",
	"sbrk":       "grows the memory itself in the standalone build",
	"stackAlloc": "the glue allocates argv with it",
}

// findNode returns node, or skips the test where there is none.
func findNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipped: node is not installed (apt-get install nodejs, as .ci/run does)")
	}
	return node
}

// jshostData is testdata/jshost: grow built with emscripten's glue and as
// a standalone WASI command (build.sh), and the hosts that run copies.
func jshostData(t *testing.T) string {
	return filepath.Join(testprogs.ModuleRoot(t), "testdata", "jshost")
}

// standaloneGrow profiles the standalone build under wazero, checks the
// profile against the tracer and returns it with the program's output.
func standaloneGrow(t *testing.T, tmp string) (*profile.Profile, string) {
	t.Helper()
	wasm := filepath.Join(jshostData(t), "grow-standalone.wasm")
	out := filepath.Join(tmp, "standalone.json")
	// Its sbrk tells JavaScript that the memory grew; nobody needs telling.
	notify := runner.Stub{Module: "env", Name: "emscripten_notify_memory_growth"}
	code, stdout, stderr := runCmd("profile", "-q", "--stub", notify.String(), "-o", out, wasm)
	// grow says whether its memory grew past the size it started with.
	if code != 0 || !strings.HasPrefix(stdout, "n=") || !strings.Contains(stdout, " grew=1") {
		t.Fatalf("profile grow-standalone.wasm: exit %d, stdout %q: %s", code, stdout, stderr)
	}
	prof := readProfile(t, out)
	orig, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	tr, _, err := tracer.Run(context.Background(), orig, runner.Config{Stubs: []runner.Stub{notify}})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(tracer.Counts(prof), tr.Paths) {
		t.Fatal("the standalone build's profile differs from the tracer's")
	}
	return prof, stdout
}

// instrumentGrow writes the copies of the glue's build for a JavaScript
// host into dir.
func instrumentGrow(t *testing.T, dir string, flags ...string) {
	t.Helper()
	args := append(append([]string{"instrument", "--host", "js", "-o", dir}, flags...), filepath.Join(jshostData(t), "grow.wasm"))
	if code, stdout, stderr := runCmd(args...); code != 0 || !strings.Contains(stdout, "pathprof.mjs") {
		t.Fatalf("instrument: exit %d: %s%s", code, stdout, stderr)
	}
	for _, f := range []string{"pathprof.mjs", "counters-0.wasm"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
}

// mergeParts merges the parts of dir's copies and returns the profile.
func mergeParts(t *testing.T, dir string, copies int) *profile.Profile {
	t.Helper()
	out := filepath.Join(dir, "merged.json")
	args := []string{"merge", "-o", out}
	for c := range copies {
		args = append(args, filepath.Join(dir, fmt.Sprintf("part-%d.json", c)))
	}
	if code, _, stderr := runCmd(args...); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	return readProfile(t, out)
}

// sameGrowFuncs fails unless got counts the paths of every function
// that the standalone profile want has too, but for growDiffers, as want
// does; grow.c's own run and depth must be among them.
func sameGrowFuncs(t *testing.T, what string, want, got *profile.Profile) {
	t.Helper()
	byName := func(p *profile.Profile) map[string]map[uint64]uint64 {
		m := map[string]map[uint64]uint64{}
		for _, f := range p.Functions {
			paths := map[uint64]uint64{}
			for _, path := range f.Paths {
				paths[path.ID] += path.Count
			}
			m[f.Name] = paths
		}
		return m
	}
	w, g := byName(want), byName(got)
	compared := map[string]bool{}
	for name, paths := range w {
		if _, ok := g[name]; !ok || growDiffers[name] != "" {
			continue
		}
		compared[name] = true
		if !maps.Equal(paths, g[name]) {
			t.Errorf("%s: the paths of %s differ from the standalone build's under wazero:\n%v\n%v", what, name, paths, g[name])
		}
	}
	for _, name := range []string{"run", "depth", "dlmalloc", "printf_core"} {
		if !compared[name] || len(w[name]) == 0 {
			t.Errorf("%s: %s not compared, or it ran no paths", what, name)
		}
	}
}

// runGrowCopies runs dir's copies of grow in node through the glue
// (run-node.mjs), checks that each prints want, and merges their parts.
func runGrowCopies(t *testing.T, node, dir string, copies int, want string) *profile.Profile {
	t.Helper()
	for c := range copies {
		cmd := exec.Command(node, filepath.Join(jshostData(t), "run-node.mjs"), dir, fmt.Sprint(c), filepath.Join(dir, fmt.Sprintf("part-%d.json", c)))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("copy %d under node: %v\n%s", c, err, stderr.Bytes())
		}
		if stdout.String() != want {
			t.Fatalf("copy %d under node printed %q, the standalone build %q", c, stdout.String(), want)
		}
	}
	return mergeParts(t, dir, copies)
}

// TestEmscriptenNode profiles grow, built with emscripten's glue, in node
// through the glue (run-node.mjs), with SBL and with P3's copies, which
// share out loop iterations: both merge into the same profile, which
// counts the functions that both builds share as the standalone build's
// profile under wazero does. The glue grows the memory from JavaScript,
// past the 16 MiB it starts with, while the counters count.
func TestEmscriptenNode(t *testing.T) {
	node := findNode(t)
	tmp := t.TempDir()
	standalone, want := standaloneGrow(t, tmp)
	// profile cannot run the glue's build, and says what can.
	if code, _, stderr := runCmd("profile", "-q", "-o", filepath.Join(tmp, "glue.json"), filepath.Join(jshostData(t), "grow.wasm")); code != 1 || !strings.Contains(stderr, "instrument --host js") {
		t.Errorf("profile of the glue's build: exit %d: %s", code, stderr)
	}
	sblDir := filepath.Join(tmp, "sbl")
	instrumentGrow(t, sblDir, "--strategy", "sbl")
	// pathprof cannot run them itself, and says where they run.
	if code, _, stderr := runCmd("exec", sblDir, "0"); code != 1 || !strings.Contains(stderr, "env.emscripten_resize_heap") || !strings.Contains(stderr, "pathprof.mjs") {
		t.Errorf("exec of a copy for a JavaScript host: exit %d: %s", code, stderr)
	}
	sbl := runGrowCopies(t, node, sblDir, 1, want)
	sameGrowFuncs(t, "node, sbl", standalone, sbl)

	// With no numbers grow reads past its vector and traps: the part says
	// so, and merge writes the profile marked incomplete.
	cmd := exec.Command(node, filepath.Join(jshostData(t), "run-node.mjs"), sblDir, "0", filepath.Join(sblDir, "part-0.json"), "0")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "memory access out of bounds") {
		t.Fatalf("grow 0 under node: %v: %s", err, out)
	}
	if code, _, stderr := runCmd("merge", "-o", filepath.Join(tmp, "trap.json"), filepath.Join(sblDir, "part-0.json")); code != 1 || !strings.Contains(stderr, "incomplete") || !strings.Contains(stderr, "memory access out of bounds") {
		t.Errorf("merge of a trapped copy: exit %d: %s", code, stderr)
	}

	p3Dir := filepath.Join(tmp, "p3")
	instrumentGrow(t, p3Dir, "--strategy", "p3", "--copies", "2", "--weights", filepath.Join(sblDir, "merged.json"))
	p3 := runGrowCopies(t, node, p3Dir, 2, want)
	if ok, diff := sbl.Equal(p3); !ok {
		t.Fatalf("node: p3's merged copies differ from sbl: %s", diff)
	}
}

// TestEmscriptenChromium runs the P3 copies of grow, built with
// emscripten's glue, in headless Chromium, in a page served on 127.0.0.1
// that POSTs their parts (page.html): the merged profile equals the
// profile of the same copies under node, and counts the functions that
// both builds share as the standalone build's profile under wazero does.
func TestEmscriptenChromium(t *testing.T) {
	chromium.Find(t)
	node := findNode(t)
	tmp := t.TempDir()
	standalone, want := standaloneGrow(t, tmp)
	dir := filepath.Join(tmp, "p3")
	instrumentGrow(t, dir, "--strategy", "p3", "--copies", "2")

	type post struct {
		path string
		body []byte
	}
	posts := make(chan post, 16)
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServer(http.Dir(jshostData(t))))
	mux.Handle("GET /copies/", http.StripPrefix("/copies/", http.FileServer(http.Dir(dir))))
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err == nil {
			posts <- post{r.URL.Path, b}
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("served at %s, not on 127.0.0.1", srv.URL)
	}
	chromium.Start(t, srv.URL+"/page.html?dir=copies")

	parts := 0
	deadline := time.After(2 * time.Minute)
	for parts < 2 {
		select {
		case p := <-posts:
			switch {
			case p.path == "/error":
				t.Fatalf("the page failed: %s", p.body)
			case strings.HasPrefix(p.path, "/stdout/"):
				if string(p.body) != want {
					t.Fatalf("%s: the page printed %q, the standalone build %q", p.path, p.body, want)
				}
			case strings.HasPrefix(p.path, "/part/"):
				file := filepath.Join(dir, "part-"+strings.TrimPrefix(p.path, "/part/")+".json")
				if err := os.WriteFile(file, p.body, 0o644); err != nil {
					t.Fatal(err)
				}
				parts++
			}
		case <-deadline:
			t.Fatalf("the page posted %d of 2 parts in 2 minutes", parts)
		}
	}
	page := mergeParts(t, dir, 2)
	sameGrowFuncs(t, "chromium", standalone, page)

	// The same copies under node.
	if ok, diff := page.Equal(runGrowCopies(t, node, dir, 2, want)); !ok {
		t.Fatalf("chromium's profile differs from node's: %s", diff)
	}
}

// TestJSHostWASI runs P3's copies of a WASI program, one under pathprof
// exec and the others under node's WASI, loaded as any JavaScript host
// loads a module, with pathprof.mjs adding the counter module to the
// import object and reading the program's call counters from its
// instance (the plan shares out calls): the merged profile equals the
// SBL profile under wazero.
func TestJSHostWASI(t *testing.T) {
	node := findNode(t)
	p := testprogs.CProgramByName(t, "wordfreq")
	tmp := t.TempDir()
	if code, _, stderr := runCmd("instrument", "--host", "jvm", "-o", filepath.Join(tmp, "jvm"), p.Wasm); code != 2 || !strings.Contains(stderr, "want wasi or js") {
		t.Errorf("--host jvm: exit %d: %s", code, stderr)
	}
	sblFile := filepath.Join(tmp, "sbl.json")
	if code, _, stderr := runCmd("profile", "-q", "-o", sblFile, p.Wasm); code != 0 {
		t.Fatalf("profile: exit %d: %s", code, stderr)
	}
	// At k = 8 the plan by the profile shares out the calls of one of
	// wordfreq's functions and the loop iterations of two (vm's plans,
	// whose loop is priced for its compilation at k = 8, share out loop
	// iterations only).
	const k = 8
	dir := filepath.Join(tmp, "p3")
	code, stdout, stderr := runCmd("instrument", "--host", "js", "--strategy", "p3", "--copies", fmt.Sprint(k), "--weights", sblFile, "-o", dir, p.Wasm)
	if code != 0 || !strings.Contains(stdout, "the calls of") {
		t.Fatalf("instrument: exit %d, no calls shared out: %s%s", code, stdout, stderr)
	}
	// Copy 0 runs under pathprof, the others in node: parts from
	// different hosts merge alike.
	if code, stdout, stderr := runCmd("exec", dir, "0"); code != 0 || stdout != p.WantStdout {
		t.Fatalf("exec copy 0: exit %d, output differs %v: %s", code, stdout != p.WantStdout, stderr)
	}
	for c := 1; c < k; c++ {
		part := filepath.Join(dir, fmt.Sprintf("part-%d.json", c))
		cmd := exec.Command(node, "--no-warnings", filepath.Join(jshostData(t), "wasi-host.mjs"), dir, fmt.Sprint(c), part)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil || out.String() != p.WantStdout {
			t.Fatalf("copy %d under node: %v, output differs %v\n%s", c, err, out.String() != p.WantStdout, errOut.Bytes())
		}
	}
	calls := 0
	for c := 1; c < k; c++ {
		part, err := profiler.ReadPart(filepath.Join(dir, fmt.Sprintf("part-%d.json", c)))
		if err != nil {
			t.Fatal(err)
		}
		calls += len(part.Calls)
	}
	if calls == 0 {
		t.Fatal("no part from node holds call counters")
	}
	if ok, diff := readProfile(t, sblFile).Equal(mergeParts(t, dir, k)); !ok {
		t.Fatalf("merged copies differ from sbl: %s", diff)
	}
}

// TestJSHostLegacyExceptions instruments for a JavaScript host a module
// that wazero cannot run, one that imports env.print and catches with the
// legacy try and catch (testdata/jshost/eh.wat), and runs it in node with
// a loader of its own: the catching function is left out, named with the
// reason, and the others count what the program's definition says.
func TestJSHostLegacyExceptions(t *testing.T) {
	node := findNode(t)
	const n = 100
	dir := filepath.Join(t.TempDir(), "eh")
	if code, stdout, stderr := runCmd("instrument", "--host", "js", "--strategy", "sbl", "-o", dir, filepath.Join(jshostData(t), "eh.wasm")); code != 0 {
		t.Fatalf("instrument: exit %d: %s%s", code, stdout, stderr)
	}
	out, err := exec.Command(node, filepath.Join(jshostData(t), "eh-host.mjs"), dir, fmt.Sprint(n)).CombinedOutput()
	// thrower throws i for the i below n that 3 does not divide, and
	// catcher returns it.
	sum, throws := 0, 0
	for i := range n {
		if i%3 != 0 {
			sum += i
			throws++
		}
	}
	if err != nil || string(out) != fmt.Sprintln(sum) {
		t.Fatalf("node: %v: %s", err, out)
	}
	prof := mergeParts(t, dir, 1)
	counts := map[string][]uint64{}
	for _, f := range prof.Functions {
		if f.Name == "catcher" && f.Status != profile.Skipped("exception handling") {
			t.Errorf("catcher is not skipped for its exception handling: %+v", f)
		}
		for _, p := range f.Paths {
			counts[f.Name] = append(counts[f.Name], p.Count)
		}
	}
	slices.Sort(counts["thrower"])
	if want := []uint64{uint64(n - throws), uint64(throws)}; !slices.Equal(counts["thrower"], want) {
		t.Errorf("thrower's paths ran %v times, want %v", counts["thrower"], want)
	}
	var iterations uint64
	for _, c := range counts["run"] {
		iterations += c
	}
	if iterations != n {
		t.Errorf("run's paths ran %d times, want %d", iterations, n)
	}
}
