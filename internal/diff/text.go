package diff

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/pathprof/pathprof/internal/report"
)

// MaxTextPaths bounds the differing paths the text lists; --json lists
// them all.
const MaxTextPaths = 50

// WriteText writes the comparison for people: both sides, the totals,
// the functions that differ and the paths that differ most.
func (d *Diff) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, s := range []struct {
		name string
		side *Side
	}{{"a", &d.A}, {"b", &d.B}} {
		state := "complete"
		if !s.side.Complete {
			state = "incomplete"
		}
		fmt.Fprintf(bw, "%s  %s: %s, %s, %s\n", s.name, s.side.File, s.side.Module, plural(s.side.Runs, "run"), state)
	}
	if d.SameModule {
		fmt.Fprintln(bw, "one module: functions matched by index, paths by id")
	} else {
		fmt.Fprintln(bw, "different modules: functions matched by name, paths by kind and blocks as labelled")
	}
	fmt.Fprintf(bw, "\n")
	t := report.NewTable(bw)
	fmt.Fprintf(t, "a\tb\t\n")
	fmt.Fprintf(t, "%s\t%s\t  path executions\n", d.A.Executions, d.B.Executions)
	fmt.Fprintf(t, "%d\t%d\t  paths executed\n", d.A.Paths, d.B.Paths)
	fmt.Fprintf(t, "%s\t%s\t  possible paths\n", report.Possible(d.A.PossiblePaths), report.Possible(d.B.PossiblePaths))
	fmt.Fprintf(t, "%s\t%s\t  path coverage\n", report.Percent(d.A.Coverage), report.Percent(d.B.Coverage))
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(bw, "\npaths: %d gone (only in a), %d new (only in b), %d changed by more than %g%%, %d unchanged\n",
		d.Totals.Gone, d.Totals.New, d.Totals.Changed, d.Threshold, d.Totals.Unchanged)
	if len(d.Functions) == 0 {
		fmt.Fprintln(bw, "no function differs")
		return bw.Flush()
	}
	fmt.Fprintf(bw, "\nfunctions that differ, most differing paths first\n")
	fmt.Fprintf(t, "gone\tnew\tchanged\tpaths a\tpaths b\tcoverage a\tcoverage b\t  function\n")
	for _, f := range d.Functions {
		fmt.Fprintf(t, "%d\t%d\t%d\t%d\t%d\t%s\t%s\t  %s\n", f.Gone, f.New, f.Changed, f.PathsA, f.PathsB, cov(f.CoverageA), cov(f.CoverageB), f.Name)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	type named struct {
		*Path
		fn string
	}
	var all []named
	for i := range d.Functions {
		for j := range d.Functions[i].Paths {
			all = append(all, named{&d.Functions[i].Paths[j], d.Functions[i].Name})
		}
	}
	slices.SortStableFunc(all, func(x, y named) int {
		return cmp.Compare(max(y.CountA, y.CountB), max(x.CountA, x.CountB))
	})
	if len(all) > 0 {
		title := "paths that differ"
		if len(all) > MaxTextPaths {
			title = fmt.Sprintf("paths that differ, the first %d of %d (--json lists all)", MaxTextPaths, len(all))
		}
		fmt.Fprintf(bw, "\n%s\n", title)
		fmt.Fprintf(t, "status\tcount a\tcount b\tchange\tkind\t  function: path\n")
		for _, p := range all[:min(len(all), MaxTextPaths)] {
			ch := ""
			if p.Change != nil {
				ch = fmt.Sprintf("%+.1f%%", *p.Change)
			}
			fmt.Fprintf(t, "%s\t%d\t%d\t%s\t%s\t  %s: %s\n", p.Status, p.CountA, p.CountB, ch, p.Kind, p.fn, p.Label)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func cov(c *float64) string {
	if c == nil {
		return "-"
	}
	return report.Percent(*c)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
