package srcmap

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
)

// FuzzAddNames gives AddNames a module without a name section whose
// .debug_info and .debug_abbrev are the fuzzer's: DWARF is untrusted
// input, so no bytes may make it panic, and it names only functions the
// module defines, and only those nothing else names.
func FuzzAddNames(f *testing.F) {
	b, err := os.ReadFile(filepath.Join(testprogs.ModuleRoot(f), "testdata", "hosts", "reactor-noname.wasm"))
	if err != nil {
		f.Fatal(err)
	}
	m, err := wasm.Decode(b)
	if err != nil {
		f.Fatal(err)
	}
	section := func(m *wasm.Module, name string) *wasm.Section {
		for i := range m.Sections {
			if m.Sections[i].Name == name {
				return m.Sections[i]
			}
		}
		f.Fatalf("no %s section", name)
		return nil
	}
	f.Add(section(m, ".debug_info").Payload, section(m, ".debug_abbrev").Payload)
	f.Fuzz(func(t *testing.T, info, abbrev []byte) {
		m, err := wasm.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		section(m, ".debug_info").Payload = info
		section(m, ".debug_abbrev").Payload = abbrev
		AddNames(m)
		for idx := range m.DebugNames {
			if idx < m.NumImportedFuncs || idx >= m.NumImportedFuncs+uint32(len(m.Code)) {
				t.Fatalf("named function %d, which the module does not define", idx)
			}
			m.DebugNames[idx], m.Names = "", nil
			if m.FuncName(idx) != "" {
				t.Fatalf("named function %d, which its export names", idx)
			}
		}
	})
}
