package coverage

// This file writes coverage as an lcov tracefile (geninfo's format, which
// genhtml renders).

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
)

// WriteLCOV writes c as an lcov tracefile: per source file its functions
// (FN, FNDA), branches (BRDA) and lines (DA) with their totals. Each
// function's path totals go in a comment line before its FN record, which
// lcov's readers skip: "# paths NAME: EXECUTED of POSSIBLE, EXECUTIONS
// executions".
func (c *Coverage) WriteLCOV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "TN:")
	for _, f := range c.Files {
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
	return bw.Flush()
}
