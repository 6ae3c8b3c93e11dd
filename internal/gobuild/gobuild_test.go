// This file tests Build on the module's own Go test program.
package gobuild

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuild builds testdata/go/hello into a fresh directory: the module
// lands at out and nothing else is left beside it; a package without tests
// built with test is an error, and leaves nothing either.
func TestBuild(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	hello := filepath.Join(root, "testdata", "go", "hello")
	dir := t.TempDir()
	out := filepath.Join(dir, "sub", "hello.wasm")
	if err := Build("go", root, out, hello, false); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("\x00asm")) {
		t.Errorf("%s is not a wasm module", out)
	}
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 1 {
		t.Errorf("%d files beside the module, want none", len(ents)-1)
	}

	noTests := filepath.Join(dir, "sub", "hello.test.wasm")
	err = Build("go", root, noTests, hello, true)
	if err == nil || !strings.Contains(err.Error(), "produced no binary") {
		t.Errorf("test binary of a package without tests: %v, want no binary", err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 1 {
		t.Errorf("a failed build left %d files", len(ents)-1)
	}
}
