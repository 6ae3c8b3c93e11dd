package wasm

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
)

// addSeeds gives a fuzz target a corpus of real modules: small spec test
// modules of every feature folder, valid and malformed, and the C programs.
func addSeeds(f *testing.F) {
	perFeature := map[string]int{}
	for _, sm := range testprogs.SpecModules(f) {
		if perFeature[sm.Feature+sm.Kind] >= 40 {
			continue
		}
		b, err := os.ReadFile(sm.Path)
		if err != nil || len(b) > 4096 {
			continue
		}
		perFeature[sm.Feature+sm.Kind]++
		f.Add(b)
	}
	cs, _ := filepath.Glob(filepath.Join(testprogs.ModuleRoot(f), "testdata", "c", "*.wasm"))
	for _, c := range cs {
		if b, err := os.ReadFile(c); err == nil {
			f.Add(b)
		}
	}
}

// FuzzDecode checks that no input makes the decoder panic or hang, and
// that whatever decodes re-encodes to the same bytes and encodes
// canonically to something that decodes again.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			if _, ok := err.(*DecodeError); !ok {
				if _, ok := unwrapDecodeError(err); !ok {
					t.Fatalf("error without section and offset: %v", err)
				}
			}
			return
		}
		enc, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, b) {
			t.Fatal("round trip differs")
		}
		c, err := m.EncodeCanonical()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(c); err != nil {
			t.Fatalf("canonical encoding does not decode: %v", err)
		}
	})
}

func unwrapDecodeError(err error) (*DecodeError, bool) {
	for err != nil {
		if d, ok := err.(*DecodeError); ok {
			return d, true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return nil, false
		}
		err = u.Unwrap()
	}
	return nil, false
}
