// Tests of the profile file: docs/osp.md names every field.

package osp

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestDocCoversFields checks that docs/osp.md's section on the profile
// file names every field of the file, in its example or its table.
func TestDocCoversFields(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "osp.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "## The profile file")
	end := strings.Index(text, "## Scoring")
	if start < 0 || end < start {
		t.Fatal("docs/osp.md has no section on the profile file before Scoring")
	}
	section := text[start:end]
	for _, v := range []any{Profile{}, Module{}, RunFacts{}, Sampling{}, LengthFacts{}, Memory{}, Function{}, Subpath{}, BlockRef{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			named := regexp.MustCompile("`([a-z_]+(\\[\\])?\\.)*" + name + "`")
			if !strings.Contains(section, `"`+name+`":`) && !named.MatchString(section) {
				t.Errorf("docs/osp.md's profile file does not name %s.%s (`%s`)", typ.Name(), typ.Field(i).Name, name)
			}
		}
	}
}
