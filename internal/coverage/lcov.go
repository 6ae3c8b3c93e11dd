package coverage

// This file writes coverage as an lcov tracefile (geninfo's format, which
// genhtml renders).

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode"
)

// WriteLCOV writes c as an lcov tracefile: per source file its functions
// (FN, FNDA), branches (BRDA) and lines (DA) with their totals. Each
// function's path totals go in a comment line before its FN record, which
// lcov's readers skip: "# paths NAME: EXECUTED of POSSIBLE, EXECUTIONS
// executions". A profile of several inputs gets a test (TN) per input,
// named by its label, which genhtml shows apart and adds up.
func (c *Coverage) WriteLCOV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if len(c.Inputs) == 0 {
		if err := writeLCOV(bw, "", c.Files); err != nil {
			return err
		}
		return bw.Flush()
	}
	seen := map[string]bool{}
	for i, in := range c.Inputs {
		if err := writeLCOV(bw, testName(in.Label, i, seen), in.Files); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// testName makes an input's label a test name lcov takes as it is
// (letters, digits and _), and unique.
func testName(label string, i int, seen map[string]bool) string {
	name := strings.Map(func(r rune) rune {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) || r == '_' {
			return r
		}
		return '_'
	}, label)
	if name == "" {
		name = fmt.Sprintf("input_%d", i)
	}
	for base, k := name, 2; seen[name]; k++ {
		name = fmt.Sprintf("%s_%d", base, k)
	}
	seen[name] = true
	return name
}

func writeLCOV(bw *bufio.Writer, test string, files []*File) error {
	fmt.Fprintf(bw, "TN:%s\n", test)
	for _, f := range files {
		path, err := filepath.Abs(f.Path)
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "SF:%s\n", clean(path))
		hit := 0
		for _, fn := range f.Funcs {
			fmt.Fprintf(bw, "# paths %s: %d of %s, %d executions\n", clean(fn.Name), fn.Paths, fn.PossiblePaths, fn.Executions)
			fmt.Fprintf(bw, "FN:%d,%s\n", fn.Line, clean(fn.Name))
		}
		for _, fn := range f.Funcs {
			fmt.Fprintf(bw, "FNDA:%d,%s\n", fn.Calls, clean(fn.Name))
			if fn.Calls > 0 {
				hit++
			}
		}
		fmt.Fprintf(bw, "FNF:%d\nFNH:%d\n", len(f.Funcs), hit)
		hit = 0
		for _, br := range f.Branches {
			taken := "-"
			if br.Ran {
				taken = fmt.Sprint(br.Taken)
			}
			if br.Taken > 0 {
				hit++
			}
			fmt.Fprintf(bw, "BRDA:%d,%d,%d,%s\n", br.Line, br.Block, br.Branch, taken)
		}
		fmt.Fprintf(bw, "BRF:%d\nBRH:%d\n", len(f.Branches), hit)
		hit = 0
		for _, l := range f.Lines {
			fmt.Fprintf(bw, "DA:%d,%d\n", l.Number, l.Count)
			if l.Count > 0 {
				hit++
			}
		}
		fmt.Fprintf(bw, "LF:%d\nLH:%d\nend_of_record\n", len(f.Lines), hit)
	}
	return nil
}
