package wasm

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
)

func TestSpecRoundTrip(t *testing.T) {
	mods := testprogs.SpecModules(t)
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
	// All but the sections as read, the bodies (compared instruction by
	// instruction below), the code section's offset and the names must be
	// equal.
	fa, fb := *a, *b
	for _, f := range []*Module{&fa, &fb} {
		f.Sections, f.Code, f.CodePayloadOff, f.Names = nil, nil, 0, nil
	}
	if !reflect.DeepEqual(fa, fb) {
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

// realPrograms lists the Go and C programs the codec must round-trip:
// gofmt, standard-library test binaries and the committed C programs.
func realPrograms(t *testing.T) []string {
	paths := []string{testprogs.Gofmt(t), testprogs.GoHello(t)}
	for _, pkg := range []string{"regexp", "sort", "strconv", "compress/flate", "encoding/json"} {
		paths = append(paths, testprogs.GoStdTest(t, pkg))
	}
	for _, p := range testprogs.CPrograms(t) {
		paths = append(paths, p.Wasm)
	}
	return paths
}

func TestRealProgramsRoundTrip(t *testing.T) {
	for _, path := range realPrograms(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(b)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		enc, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, b) {
			t.Errorf("%s: round trip differs", path)
		}
		checkCanonical(t, path, b)
		t.Logf("%s: %d bytes, %d functions", filepath.Base(path), len(b), len(m.Code))
	}
}

// TestDecodeChecked checks that DecodeChecked, which does not check the
// bodies' instructions again, decodes every module Decode accepts into the
// same module, on the spec suite's valid modules and the largest test
// module.
func TestDecodeChecked(t *testing.T) {
	paths := []string{testprogs.LargestModule(t)}
	for _, sm := range testprogs.SpecModules(t) {
		if sm.Kind == "module" {
			paths = append(paths, sm.Path)
		}
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(b)
		if err != nil {
			continue
		}
		c, err := DecodeChecked(b)
		if err != nil {
			t.Fatalf("%s: Decode accepts, DecodeChecked: %v", p, err)
		}
		if !c.bodiesChecked {
			t.Fatalf("%s: DecodeChecked checked the bodies", p)
		}
		c.bodiesChecked = false
		if !reflect.DeepEqual(m, c) {
			t.Fatalf("%s: DecodeChecked decodes another module", p)
		}
	}
}
