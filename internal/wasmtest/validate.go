package wasmtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Validate runs wasm-validate, with every feature enabled, on module b
// when it is installed (CI installs wabt), and fails the test if it
// rejects the module; name says which module in the message.
func Validate(t testing.TB, name string, b []byte) {
	t.Helper()
	path, err := exec.LookPath("wasm-validate")
	if err != nil {
		return
	}
	f := filepath.Join(t.TempDir(), "m.wasm")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(path, "--enable-all", f).CombinedOutput(); err != nil {
		t.Errorf("wasm-validate rejects %s: %v\n%s", name, err, strings.TrimSpace(string(out)))
	}
}
