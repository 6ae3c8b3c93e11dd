package runner

import (
	"bytes"
	"testing"
)

// TestLinearMemories checks both kinds of linear memory: growth keeps the
// contents and gives zero bytes, the maximum holds, and a mapped memory
// stays readable after wazero frees it, until the run releases it.
func TestLinearMemories(t *testing.T) {
	const page = 65536
	ms := &memories{}
	check := func(name string, m interface {
		Reallocate(uint64) []byte
		Free()
	}) {
		b := m.Reallocate(page)
		if len(b) != page {
			t.Fatalf("%s: %d bytes, want %d", name, len(b), page)
		}
		b[0], b[page-1] = 1, 2
		for _, n := range []uint64{2, 3, 7, 8} {
			b = m.Reallocate(n * page)
			if uint64(len(b)) != n*page || b[0] != 1 || b[page-1] != 2 {
				t.Fatalf("%s: growth to %d pages lost the contents", name, n)
			}
			if !bytes.Equal(b[page:], make([]byte, len(b)-page)) {
				t.Fatalf("%s: growth to %d pages is not zero", name, n)
			}
		}
		if m.Reallocate(9*page) != nil {
			t.Fatalf("%s: grew beyond its maximum", name)
		}
		m.Free()
	}
	check("heap", &heapMemory{max: 8 * page})
	m := ms.Allocate(page, 8*page)
	if _, ok := m.(mappedMemory); !ok {
		t.Logf("memories are not mapped here (%T)", m)
	}
	check("allocated", m)
	if b := m.Reallocate(page); b != nil && b[0] != 1 {
		t.Fatal("a freed memory changed before the run released it")
	}
	ms.release()
	if len(ms.mapped) != 0 {
		t.Fatal("release kept mappings")
	}
}
