package bench

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// fakeDebianSource makes a source tree whose bench/debian/build.sh writes
// one program and counts its runs in runs.txt beside the tree.
func fakeDebianSource(t *testing.T, script string) string {
	t.Helper()
	src := t.TempDir()
	dir := filepath.Join(src, "bench", "debian")
	if err := os.MkdirAll(filepath.Join(dir, "lua"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "build.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lua", "a.lua"), []byte("print(1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

const fakeBuild = `set -e
echo run >>"$(dirname "$0")/../../runs.txt"
mkdir -p "$1/bin" "$1/lua"
printf 'wasm' >"$1/bin/lua.wasm"
cp "$(dirname "$0")/lua/a.lua" "$1/lua/a.lua"
echo 1 >"$1/lua/a.expected"
echo "built" >&2
printf '# NAME WASM STDIN EXPECT EXIT ARGS\nlua-a bin/lua.wasm lua/a.lua lua/a.expected 0 -\nnoin bin/lua.wasm - lua/a.expected 3 -e x=1\n' >"$1/programs.txt"
`

func TestPrepareDebian(t *testing.T) {
	src := fakeDebianSource(t, fakeBuild)
	dir := t.TempDir()
	var log strings.Builder
	opt := PrepareOptions{Source: src, Progress: &log}
	progress := func(format string, args ...any) { log.WriteString(strings.TrimSpace(format) + "\n") }
	progs, err := prepareDebian(dir, opt, progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(progs) != 2 {
		t.Fatalf("%d programs: %+v", len(progs), progs)
	}
	a, b := progs[0], progs[1]
	rel := strings.TrimSuffix(a.Wasm, "/bin/lua.wasm")
	if !strings.HasPrefix(rel, "debian/") || a.Name != "lua-a" || a.Origin != OriginDebian || a.Stdin != rel+"/lua/a.lua" ||
		a.ExpectStdout != rel+"/lua/a.expected" || *a.ExpectExitCode != 0 || strings.Join(a.Args, " ") != "-" {
		t.Errorf("first program: %+v", a)
	}
	if b.Stdin != "" || *b.ExpectExitCode != 3 || strings.Join(b.Args, " ") != "-e x=1" {
		t.Errorf("second program: %+v", b)
	}
	if !strings.Contains(log.String(), "built\n") {
		t.Errorf("the script's output is not passed on:\n%s", log.String())
	}
	s := &Suite{Version: ManifestVersion, Dir: dir, Programs: progs}
	if err := s.checkFiles(); err != nil {
		t.Fatal(err)
	}

	// A second preparation builds nothing.
	if _, err := prepareDebian(dir, opt, progress); err != nil {
		t.Fatal(err)
	}
	runs, err := os.ReadFile(filepath.Join(src, "runs.txt"))
	if err != nil || string(runs) != "run\n" {
		t.Fatalf("the script ran %q times", runs)
	}

	// A changed script (or Lua script) builds afresh and replaces the
	// old build.
	if err := os.WriteFile(filepath.Join(src, "bench", "debian", "lua", "a.lua"), []byte("print(2)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	progs2, err := prepareDebian(dir, opt, progress)
	if err != nil {
		t.Fatal(err)
	}
	if progs2[0].Wasm == a.Wasm {
		t.Errorf("a changed Lua script kept the build directory %s", a.Wasm)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "debian"))
	if len(ents) != 1 {
		t.Errorf("debian/ holds %d entries, want the new build alone", len(ents))
	}
}

func TestPrepareDebianFails(t *testing.T) {
	src := fakeDebianSource(t, "echo 'debian: missing packages: clang-14' >&2\nexit 1\n")
	dir := t.TempDir()
	_, err := prepareDebian(dir, PrepareOptions{Source: src}, func(string, ...any) {})
	if err == nil || !strings.Contains(err.Error(), "missing packages: clang-14") || !strings.Contains(err.Error(), "--no-debian") {
		t.Fatalf("error %v", err)
	}
	// Nothing half-built is left to be taken for a build.
	ents, _ := os.ReadDir(filepath.Join(dir, "debian"))
	if len(ents) != 0 {
		t.Errorf("a failed build left %d entries in debian/", len(ents))
	}
}

func TestParseDebianListErrors(t *testing.T) {
	for _, c := range []struct{ list, want string }{
		{"", "no programs"},
		{"a bin/a.wasm - a.expected\n", "line 1: want NAME"},
		{"a bin/a.wasm - a.expected x\n", "line 1: exit code"},
		{"a|b bin/a.wasm - a.expected 0\n", "line 1: the name may not"},
	} {
		if _, err := parseDebianList([]byte(c.list), "debian/x"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.list, err, c.want)
		}
	}
}

// fakeDebianBigSource makes a source tree whose bench/debian-big/g/build.sh
// writes the files its programs.txt names and counts its runs, and whose
// bench/debian-big/f/build.sh, when given, is failing.
func fakeDebianBigSource(t *testing.T, failing string) string {
	t.Helper()
	src := t.TempDir()
	script := `set -e
echo run >>"$(dirname "$0")/../../../runs.txt"
mkdir -p "$1/bin" "$1/shaders"
printf 'wasm' >"$1/bin/g.wasm"
echo x >"$1/shaders/a.comp"
echo out >"$1/g.expected"
cp "$(dirname "$0")/programs.txt" "$1/programs.txt"
`
	list := "# NAME WASM STDIN EXPECT EXIT MOUNTS ARGS\n" +
		"g bin/g.wasm - g.expected 0 shaders:/in:ro,@tmp:/ -V in/a.comp\n" +
		"h bin/g.wasm shaders/a.comp - 2 - --stdin\n"
	files := map[string]string{"g/build.sh": script, "g/programs.txt": list, "README.md": "not a build\n"}
	if failing != "" {
		files["f/build.sh"] = failing
	}
	for name, data := range files {
		p := filepath.Join(src, filepath.FromSlash(DebianBigDir), filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// TestPrepareDebianBig builds the big Debian programs with a stand-in
// script: the entries are big, in the validation set, with their mounts
// under the build's directory, and a second preparation builds nothing.
func TestPrepareDebianBig(t *testing.T) {
	src := fakeDebianBigSource(t, "")
	dir := t.TempDir()
	opt := PrepareOptions{Source: src}
	quiet := func(string, ...any) {}
	progs, err := prepareDebianBig(dir, opt, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if len(progs) != 2 {
		t.Fatalf("%d programs: %+v", len(progs), progs)
	}
	g, h := progs[0], progs[1]
	rel := strings.TrimSuffix(g.Wasm, "/bin/g.wasm")
	if !strings.HasPrefix(rel, "debian-big/g/") || g.Origin != OriginDebianBig || !g.Big || !g.Validation ||
		g.Stdin != "" || g.ExpectStdout != rel+"/g.expected" || *g.ExpectExitCode != 0 ||
		strings.Join(g.Mounts, " ") != rel+"/shaders:/in:ro @tmp:/" || strings.Join(g.Args, " ") != "-V in/a.comp" {
		t.Errorf("first program: %+v", g)
	}
	if h.Stdin != rel+"/shaders/a.comp" || h.ExpectStdout != "" || *h.ExpectExitCode != 2 || len(h.Mounts) != 0 {
		t.Errorf("second program: %+v", h)
	}
	s := &Suite{Version: ManifestVersion, Dir: dir, Programs: progs}
	if err := s.checkFiles(); err != nil {
		t.Fatal(err)
	}
	if _, err := prepareDebianBig(dir, opt, quiet); err != nil {
		t.Fatal(err)
	}
	runs, err := os.ReadFile(filepath.Join(src, "runs.txt"))
	if err != nil || string(runs) != "run\n" {
		t.Fatalf("the script ran %q times", runs)
	}
}

// TestPrepareDebianBigFailed: a big Debian build that fails (f, before g
// in name order) is reported with its output, leaves nothing behind, and
// does not stop the other (g), whose programs come back with the error; a
// second preparation tries f again and takes g from its cache.
func TestPrepareDebianBigFailed(t *testing.T) {
	src := fakeDebianBigSource(t, "echo 'no deb-src entry' >&2\nmkdir -p \"$1/bin\"\nexit 3\n")
	dir := t.TempDir()
	opt := PrepareOptions{Source: src}
	var log strings.Builder
	progress := func(format string, args ...any) { fmt.Fprintf(&log, format+"\n", args...) }
	for i := range 2 {
		progs, err := prepareDebianBig(dir, opt, progress)
		if err == nil || !strings.Contains(err.Error(), "bench/debian-big/f/build.sh") || !strings.Contains(err.Error(), "no deb-src entry") {
			t.Fatalf("preparation %d: error %v", i, err)
		}
		if len(progs) != 2 || progs[0].Name != "g" || progs[1].Name != "h" {
			t.Fatalf("preparation %d: programs %+v", i, progs)
		}
		if !strings.Contains(log.String(), "bench/debian-big/f/build.sh failed; the suite goes on without it") {
			t.Errorf("preparation %d: the failure was not reported:\n%s", i, log.String())
		}
		if ents, err := os.ReadDir(filepath.Join(dir, "debian-big", "f")); err != nil || len(ents) != 0 {
			t.Errorf("preparation %d: the failed build left %v (%v)", i, ents, err)
		}
	}
	runs, err := os.ReadFile(filepath.Join(src, "runs.txt"))
	if err != nil || string(runs) != "run\n" {
		t.Fatalf("the good script ran %q times", runs)
	}
}

func TestParseDebianBigListErrors(t *testing.T) {
	for _, c := range []struct{ list, want string }{
		{"", "no programs"},
		{"g bin/g.wasm - g.expected 0\n", "line 1: want NAME"},
		{"g bin/g.wasm - g.expected x -\n", "line 1: exit code"},
		{"g bin/g.wasm - - 0 shaders:in\n", "not absolute"},
		{"g bin/g.wasm - - 0 ../../etc:/etc:ro\n", "leaves its directory"},
		{"g bin/g.wasm - - 0 /etc:/etc:ro\n", "leaves its directory"},
		{"g bin/g.wasm - - 0 a:/in,b:/in\n", "mounted twice"},
	} {
		if _, err := parseDebianBigList([]byte(c.list), "debian-big/x"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.list, err, c.want)
		}
	}
}

// TestDebianBigList reads the committed list of the big Debian programs:
// it must parse, and every program must be big and in the validation set.
func TestDebianBigList(t *testing.T) {
	src, err := FindSource(".")
	if err != nil {
		t.Fatal(err)
	}
	progs := debianBigLists(t, src)
	for _, p := range progs {
		if !p.Big || !p.Validation || p.ExpectExitCode == nil {
			t.Errorf("%+v", p)
		}
	}
}

// debianBigLists reads the programs.txt of every build of DebianBigDir in
// the source tree src.
func debianBigLists(t *testing.T, src string) []Program {
	t.Helper()
	builds, err := debianBigBuilds(src)
	if err != nil {
		t.Fatal(err)
	}
	var progs []Program
	for _, b := range builds {
		data, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(path.Dir(b.script)), "programs.txt"))
		if err != nil {
			t.Fatal(err)
		}
		ps, err := parseDebianBigList(data, b.sub+"/x")
		if err != nil {
			t.Fatalf("%s: %v", b.script, err)
		}
		progs = append(progs, ps...)
	}
	return progs
}
