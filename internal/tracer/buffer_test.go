package tracer

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pathprof/pathprof/internal/wasm"
)

// TestBufferModule checks that the generated module decodes, names
// itself, and validates when wasm-validate is installed.
func TestBufferModule(t *testing.T) {
	b, err := bufferWasm()
	if err != nil {
		t.Fatal(err)
	}
	m, err := wasm.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Names == nil || m.Names.Module != ImportModule {
		t.Errorf("the module is not named %q: %+v", ImportModule, m.Names)
	}
	path, err := exec.LookPath("wasm-validate")
	if err != nil {
		t.Skip("no wasm-validate")
	}
	f := filepath.Join(t.TempDir(), "buffer.wasm")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(path, f).CombinedOutput(); err != nil {
		t.Errorf("wasm-validate: %v\n%s", err, out)
	}
}
