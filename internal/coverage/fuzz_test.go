package coverage

import (
	"bytes"
	"testing"
)

// FuzzBuild feeds Build modules (untrusted input) with a real profile of
// calc-O0: whatever the bytes, it returns coverage or an error, and what
// it returns writes in both formats.
func FuzzBuild(f *testing.F) {
	r := profiled(f, "calc-O0")
	f.Add(r.module)
	p := *r.prof
	p.Module.SHA256 = ""
	f.Fuzz(func(t *testing.T, module []byte) {
		c, err := Build(&p, module, Options{})
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := c.WriteLCOV(&b); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteCobertura(&b, "m.wasm"); err != nil {
			t.Fatal(err)
		}
	})
}
