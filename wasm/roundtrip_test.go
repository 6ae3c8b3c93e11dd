package wasm

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type specModule struct {
	Kind, Path string
}

func specModules(t *testing.T) []specModule {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/tetratelabs/wazero").Output()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "internal/integration_test/spectest")
	jsons, _ := filepath.Glob(filepath.Join(root, "*/testdata/*.json"))
	j2, _ := filepath.Glob(filepath.Join(root, "*/*.json"))
	var mods []specModule
	for _, j := range append(jsons, j2...) {
		var f struct {
			Commands []struct {
				Type, Filename, ModuleType string `json:"module_type"`
			}
		}
		b, err := os.ReadFile(j)
		if err != nil {
			t.Fatal(err)
		}
		var raw struct {
			Commands []map[string]any `json:"commands"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		_ = f
		for _, c := range raw.Commands {
			fn, _ := c["filename"].(string)
			if fn == "" || !strings.HasSuffix(fn, ".wasm") {
				continue
			}
			mods = append(mods, specModule{Kind: c["type"].(string), Path: filepath.Join(filepath.Dir(j), fn)})
		}
	}
	return mods
}

func TestSpecRoundTrip(t *testing.T) {
	mods := specModules(t)
	if len(mods) < 1000 {
		t.Fatalf("found only %d spec modules", len(mods))
	}
	var valid, malformed, malformedAccepted int
	for _, sm := range mods {
		b, err := os.ReadFile(sm.Path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(b)
		switch sm.Kind {
		case "module":
			valid++
			if err != nil {
				t.Errorf("%s: %v", sm.Path, err)
				continue
			}
			enc, err := m.Encode()
			if err != nil {
				t.Errorf("%s: encode: %v", sm.Path, err)
				continue
			}
			if !bytes.Equal(enc, b) {
				t.Errorf("%s: round trip differs", sm.Path)
			}
			checkCanonical(t, sm.Path, b)
		case "assert_malformed":
			malformed++
			if err == nil {
				malformedAccepted++
				// WebAssembly 1.0 required a zero byte after call_indirect's
				// type index; 2.0 made it a table index, which this codec
				// follows, so the 1.0 test of that byte cannot fail here.
				if !strings.HasSuffix(sm.Path, filepath.Join("v1", "testdata", "binary.32.wasm")) {
					t.Errorf("malformed module accepted: %s", sm.Path)
				}
			}
		}
	}
	t.Logf("%d valid modules round-tripped, %d malformed, %d of them accepted", valid, malformed, malformedAccepted)
}

// checkCanonical re-encodes every section afresh and checks that the
// result decodes to the same module, instruction by instruction.
func checkCanonical(t *testing.T, name string, b []byte) {
	m1, _ := Decode(b)
	c, err := m1.EncodeCanonical()
	if err != nil {
		t.Errorf("%s: canonical encode: %v", name, err)
		return
	}
	m2, err := Decode(c)
	if err != nil {
		t.Errorf("%s: canonical encoding does not decode: %v", name, err)
		return
	}
	m1, _ = Decode(b)
	if err := sameModule(m1, m2); err != "" {
		t.Errorf("%s: canonical encoding differs: %s", name, err)
	}
}

func sameModule(a, b *Module) string {
	type pick struct {
		Types    []FuncType
		Imports  []Import
		Funcs    []uint32
		Tables   []Table
		Memories []Limits
		Tags     []Tag
		Globals  []Global
		Exports  []Export
		Start    uint32
		Elements []Element
		Data     []Data
	}
	pa := pick{a.Types, a.Imports, a.Funcs, a.Tables, a.Memories, a.Tags, a.Globals, a.Exports, a.Start, a.Elements, a.Data}
	pb := pick{b.Types, b.Imports, b.Funcs, b.Tables, b.Memories, b.Tags, b.Globals, b.Exports, b.Start, b.Elements, b.Data}
	if !reflect.DeepEqual(pa, pb) {
		return "module fields"
	}
	if len(a.Code) != len(b.Code) {
		return "code count"
	}
	ra, rb := NewReader(nil, 0, "a"), NewReader(nil, 0, "b")
	var ia, ib Instr
	for i := range a.Code {
		ca, cb := &a.Code[i], &b.Code[i]
		if !reflect.DeepEqual(ca.Locals, cb.Locals) {
			return "locals"
		}
		ra.Reset(ca.Body, 0)
		ra.pos = int(ca.ExprOff)
		rb.Reset(cb.Body, 0)
		rb.pos = int(cb.ExprOff)
		for !ra.Done() {
			if rb.Done() {
				return "body shorter"
			}
			if err := ra.Next(&ia); err != nil {
				return err.Error()
			}
			if err := rb.Next(&ib); err != nil {
				return err.Error()
			}
			ia.Off, ib.Off, ia.Len, ib.Len = 0, 0, 0, 0
			if !reflect.DeepEqual(ia, ib) {
				return "instruction " + ia.Op.Name()
			}
		}
		if !rb.Done() {
			return "body longer"
		}
	}
	return ""
}
