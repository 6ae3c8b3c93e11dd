// This file tests Each on the lines a list may hold.
package proglist

import (
	"errors"
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
