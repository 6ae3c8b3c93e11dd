// This file tests Each on the lines a list may hold.
package proglist

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEach(t *testing.T) {
	list := "# name args\n\n  a 1 2\n\t# b 1\nc 3 4 5\n"
	var got [][]string
	if err := Each([]byte(list), 3, "NAME X Y", func(f []string) error {
		got = append(got, f)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !slices.Equal(got[0], []string{"a", "1", "2"}) || !slices.Equal(got[1], []string{"c", "3", "4", "5"}) {
		t.Errorf("lines %q", got)
	}
	err := Each([]byte(list+"d 1\n"), 3, "NAME X Y", func([]string) error { return nil })
	if err == nil || err.Error() != "line 6: want NAME X Y" {
		t.Errorf("short line: %v", err)
	}
	bad := errors.New("bad")
	err = Each([]byte(list), 3, "NAME X Y", func(f []string) error {
		if f[0] == "c" {
			return bad
		}
		return nil
	})
	if !errors.Is(err, bad) || !strings.HasPrefix(err.Error(), "line 5: ") {
		t.Errorf("f's error: %v", err)
	}
}

func TestReadKernels(t *testing.T) {
	dir := t.TempDir()
	write := func(list string) {
		if err := os.WriteFile(filepath.Join(dir, "programs.txt"), []byte(list), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# NAME SET SMALL\nfilter train 3\nlu valid 30\n")
	ks, err := ReadKernels(dir)
	if err != nil || len(ks) != 2 || ks[0] != (Kernel{Name: "filter", Small: "3"}) || ks[1] != (Kernel{Name: "lu", Validation: true, Small: "30"}) {
		t.Fatalf("ReadKernels = %+v, %v", ks, err)
	}
	write("filter test 3\n")
	if _, err := ReadKernels(dir); err == nil || !strings.Contains(err.Error(), `set "test"`) {
		t.Errorf("an unknown set: %v", err)
	}
	write("# nothing\n")
	if _, err := ReadKernels(dir); err == nil {
		t.Error("an empty list was accepted")
	}
}
