package srcmap

// This file tests Roots: which source files a report may read.

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRootsFind(t *testing.T) {
	base := t.TempDir()
	root, out := filepath.Join(base, "root"), filepath.Join(base, "out")
	for _, d := range []string{root, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(root, "a.c"), filepath.Join(out, "s.c")} {
		if err := os.WriteFile(f, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{
		filepath.Join(root, "link.c"): filepath.Join(out, "s.c"),
		filepath.Join(root, "sub"):    out,
		filepath.Join(base, "alias"):  root,
	} {
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	r := NewRoots(filepath.Join(root, "m.wasm"), nil)
	for _, c := range []struct {
		name           string
		found, leftOut bool
	}{
		{"a.c", true, false},
		{filepath.Join(root, "a.c"), true, false},
		{filepath.Join(base, "alias", "a.c"), true, false}, // a link into the root
		{"/elsewhere/build/a.c", true, false},              // a moved build tree: the tail
		{"missing.c", false, false},
		{filepath.Join(root, "missing.c"), false, false},
		{filepath.Join(out, "s.c"), false, true},
		{filepath.Join(out, "missing.c"), false, true}, // whether it exists is not said
		{"link.c", false, true},
		{"sub/s.c", false, true},
		{"../out/s.c", false, true},
		{"../out/missing.c", false, true},
	} {
		shown, read, leftOut := r.Find(c.name)
		if (read != "") != c.found || leftOut != c.leftOut || (shown == "") != (read == "") {
			t.Errorf("Find(%q) = %q, %q, left out %v; want found %v, left out %v", c.name, shown, read, leftOut, c.found, c.leftOut)
		}
		if r.LeftOut(c.name) != c.leftOut {
			t.Errorf("LeftOut(%q) = %v", c.name, !c.leftOut)
		}
	}
	// A directory given allows its files, also through a link to it.
	for _, d := range []string{out, filepath.Join(root, "sub")} {
		if _, read, leftOut := NewRoots(filepath.Join(root, "m.wasm"), []string{d}).Find(filepath.Join(out, "s.c")); read == "" || leftOut {
			t.Errorf("with %s: %s not found (left out %v)", d, filepath.Join(out, "s.c"), leftOut)
		}
	}
}
