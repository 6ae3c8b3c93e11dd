package jshost

import (
	"bytes"
	"strings"
	"testing"
)

// TestModule checks that the manifest lands in the module once, and that
// copies whose counters are in the program's memory are refused: a host
// that grows the memory itself would overwrite them.
func TestModule(t *testing.T) {
	part := Part{Format: "pathprof-part", Version: 1}
	b, err := Module("abc", part, []Copy{{SHA256: "def", Counters: []byte{0, 'a', 's', 'm'}}})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, placeholder) || !bytes.Contains(b, []byte(`"module_sha256":"abc"`)) || !bytes.Contains(b, []byte(`"counters":"AGFzbQ=="`)) {
		t.Fatalf("the manifest is not in the module:\n%s", b[:min(len(b), 2000)])
	}
	_, err = Module("abc", part, []Copy{{SHA256: "def"}})
	if err == nil || !strings.Contains(err.Error(), "counter module") {
		t.Fatalf("a copy without a counter module: %v", err)
	}
}
