package testprogs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestSpecModules(t *testing.T) {
	mods := SpecModules(t)
	byFeature := map[string]map[string]int{}
	for _, m := range mods {
		if filepath.Ext(m.Path) != ".wasm" {
			t.Errorf("%s:%d: %s is not a binary module", m.Source, m.Line, m.Path)
		}
		if byFeature[m.Feature] == nil {
			byFeature[m.Feature] = map[string]int{}
		}
		byFeature[m.Feature][m.Kind]++
	}
	t.Logf("%d modules: %v", len(mods), byFeature)
	for _, f := range []string{"v1", "v2", "threads", "tail-call", "extended-const", "exception-handling", "typed-function-references"} {
		if byFeature[f][SpecKindModule] == 0 {
			t.Errorf("no valid modules for feature %s", f)
		}
	}
	for _, k := range []string{SpecKindInvalid, SpecKindMalformed, SpecKindUnlinkable, SpecKindUninstantiable} {
		if byFeature["v2"][k] == 0 {
			t.Errorf("no %s modules in v2", k)
		}
	}
	// Every module starts with the wasm magic number; a text module that
	// slipped through would not.
	for _, m := range mods[:50] {
		data, err := os.ReadFile(m.Path)
		if err != nil {
			t.Fatal(err)
		}
		if m.Kind != SpecKindMalformed && !bytes.HasPrefix(data, []byte("\x00asm")) {
			t.Errorf("%s: no wasm magic", m.Path)
		}
	}
}

func TestCPrograms(t *testing.T) {
	progs := CPrograms(t)
	if len(progs) < 5 {
		t.Fatalf("only %d C programs", len(progs))
	}
	sawExit := false
	for _, p := range progs {
		data, err := os.ReadFile(p.Wasm)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte("\x00asm\x01\x00\x00\x00")) {
			t.Errorf("%s: not a wasm module", p.Wasm)
		}
		if p.WantStdout == "" {
			t.Errorf("%s: no expected output", p.Name)
		}
		sawExit = sawExit || p.WantExitCode != 0
	}
	if !sawExit {
		t.Error("no C program exits with a nonzero status")
	}
	if got := CProgramByName(t, "grid").Args; len(got) != 1 {
		t.Errorf("grid args = %q, want one", got)
	}
}

// TestBuildGo checks that each Go program builds, that a second request is
// served from the cache, and reports sizes for the record.
func TestBuildGo(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(testing.TB) string
	}{
		{"hello", GoHello},
		{"gofmt", Gofmt},
		{"regexp.test", func(t testing.TB) string { return GoStdTest(t, "regexp") }},
		{"encoding/json.test", LargestModule},
	} {
		path := c.build(t)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte("\x00asm")) {
			t.Errorf("%s: %s is not a wasm module", c.name, path)
		}
		if again := c.build(t); again != path {
			t.Errorf("%s: second build returned %s, want %s", c.name, again, path)
		}
		t.Logf("%s: %.1f MB at %s", c.name, float64(fi.Size())/1e6, path)
	}
}

// TestBuildGoKeyFollowsSources checks that editing a main-module package
// changes its cache key, so a stale build is never reused.
func TestBuildGoKeyFollowsSources(t *testing.T) {
	e := env(t)
	// go list only accepts directories inside the main module; testdata
	// keeps the throwaway package out of ./... patterns meanwhile.
	testdata := filepath.Join(ModuleRoot(t), "internal", "testprogs", "testdata")
	if err := os.MkdirAll(testdata, 0o755); err != nil {
		t.Fatal(err)
	}
	pkgDir, err := os.MkdirTemp(testdata, "keytest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.RemoveAll(pkgDir)
		os.Remove(testdata) // only if empty
	})
	src := filepath.Join(pkgDir, "main.go")
	write := func(body string) string {
		if err := os.WriteFile(src, []byte("package main\n\nfunc main() {"+body+"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		key, err := cacheKey(e, pkgDir, BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	k1 := write("")
	k2 := write("println(1)")
	if k1 == k2 {
		t.Error("cache key did not change with the source")
	}
	if k3 := write(""); k3 != k1 {
		t.Error("cache key is not a function of the source")
	}
	stdKey, err := cacheKey(e, "regexp", BuildOptions{Test: true})
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := cacheKey(e, "regexp", BuildOptions{}); k == stdKey {
		t.Error("cache key ignores BuildOptions.Test")
	}
}

func TestIsStd(t *testing.T) {
	e := env(t)
	for pkg, want := range map[string]bool{
		"regexp":        true,
		"cmd/gofmt":     true,
		"encoding/json": true,
		"github.com/pathprof/pathprof/testdata/go/hello":        false,
		"github.com/tetratelabs/wazero":                         false,
		filepath.Join(ModuleRoot(t), "testdata", "go", "hello"): false,
	} {
		if got := isStd(e, pkg); got != want {
			t.Errorf("isStd(%q) = %v, want %v", pkg, got, want)
		}
	}
}
