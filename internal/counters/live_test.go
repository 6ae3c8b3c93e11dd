package counters

// Tests of what LiveReader.Read keeps from copies of a counter area taken while
// the program runs.

import (
	"encoding/binary"
	"reflect"
	"testing"
)

// hashedArea is a counter area with one hashed function (index 1) whose
// table, of 4 slots, holds the given paths (path: count) and says used
// entries are used.
func hashedArea(t *testing.T, used uint32, paths map[uint64]uint64) area {
	t.Helper()
	l, err := NewLayout([]uint64{0, 1 << 40}, Options{HashSlots: 4})
	if err != nil {
		t.Fatal(err)
	}
	mem := make([]byte, l.Size)
	copy(mem, l.header())
	copy(mem[l.HashOff:], l.hashHeader())
	binary.LittleEndian.PutUint32(mem[l.HashOff+4:], used)
	slot := l.HashOff + 16
	for p, c := range paths {
		binary.LittleEndian.PutUint32(mem[slot:], 2) // function 1, plus one
		binary.LittleEndian.PutUint64(mem[slot+8:], p)
		binary.LittleEndian.PutUint64(mem[slot+16:], c)
		slot += entrySize
	}
	return area{base: 64, mem: mem}
}

func TestLiveTable(t *testing.T) {
	a := hashedArea(t, 2, map[uint64]uint64{7: 3, 9: 1})
	b := hashedArea(t, 2, map[uint64]uint64{7: 5, 9: 1})
	if !a.sameLayout(b) {
		t.Fatal("two copies of one table differ in layout")
	}
	// One more entry than used: the entry being inserted.
	if !hashedArea(t, 1, map[uint64]uint64{7: 3, 9: 1}).tableWhole() {
		t.Error("an entry being inserted makes the table look torn")
	}
	// Several more: the table was read in the middle of its growth.
	if hashedArea(t, 1, map[uint64]uint64{7: 3, 9: 1, 11: 1}).tableWhole() {
		t.Error("a table holding more entries than used passed")
	}
	moved := hashedArea(t, 2, map[uint64]uint64{7: 3, 9: 1})
	moved.base = 128
	if a.sameLayout(moved) {
		t.Error("copies at two addresses passed as one layout")
	}
}

func TestLower(t *testing.T) {
	a := Counts{1: {7: 3, 9: 1}, 2: {0: 4}}
	b := Counts{1: {7: 5, 8: 1}, 2: {0: 4}}
	want := Counts{1: {7: 3}, 2: {0: 4}}
	if got := lower(a, b); !reflect.DeepEqual(got, want) {
		t.Fatalf("lower = %v, want %v", got, want)
	}
}
