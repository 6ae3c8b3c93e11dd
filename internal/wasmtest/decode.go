// This file holds the helpers tests use to read a module from a file, find
// a function in it, write a module's sections by hand and encode a module
// built in code.
package wasmtest

import (
	"os"
	"testing"

	"github.com/pathprof/pathprof/internal/wasm"
)

// DecodeFile reads and decodes the module at path, and fails the test if
// either fails; it returns the module's bytes too.
func DecodeFile(t testing.TB, path string) ([]byte, *wasm.Module) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := wasm.Decode(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b, m
}

// DefinedFunc returns the index, among the defined functions, of the one
// named name, and fails the test if there is none.
func DefinedFunc(t testing.TB, m *wasm.Module, name string) int {
	t.Helper()
	for i := range m.Code {
		if m.FuncName(m.NumImportedFuncs+uint32(i)) == name {
			return i
		}
	}
	t.Fatalf("no function %s in the module", name)
	return -1
}

// Section appends a section: its id, its payload's length and the payload.
func Section(b []byte, id byte, payload []byte) []byte {
	b = append(b, id)
	b = wasm.AppendULEB128(b, uint64(len(payload)))
	return append(b, payload...)
}

// Encode encodes a module built in code, after marking the sections it
// fills as changed (Touch), and fails the test if the encoder fails.
func Encode(t testing.TB, m *wasm.Module, sections ...byte) []byte {
	t.Helper()
	for _, id := range sections {
		m.Touch(id)
	}
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
