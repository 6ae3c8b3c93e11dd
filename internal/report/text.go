package report

// This file writes a report as aligned text.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/big"
	"strings"
	"text/tabwriter"

	"github.com/pathprof/pathprof/profile"
)

// wrapAt is the width past which a path's block list continues on the
// next line.
const wrapAt = 100

// WriteText writes the report as plain aligned text: the run facts, path
// coverage per function, and the two hottest-paths lists with each path's
// blocks.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	run := r.Run
	if !run.Complete {
		// First and loud: every figure below is a lower bound.
		fmt.Fprintf(bw, "INCOMPLETE PROFILE: %s\n", run.Incomplete)
		if run.Interrupted {
			fmt.Fprintf(bw, "  Counts were read while the program ran: each is at most the full run's; the path in flight and the paths of a call-free loop not yet left are not counted.\n\n")
		} else {
			fmt.Fprintf(bw, "  Counts are exact for the paths that completed; paths still running when a run ended are not counted.\n\n")
		}
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(bw, "warning: %s\n", wn)
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(bw)
	}

	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "module\t%s\n", run.Module)
	if run.SHA256 != "" {
		fmt.Fprintf(tw, "sha256\t%s\n", run.SHA256)
	}
	switch run.Source {
	case "dwarf":
		fmt.Fprintf(tw, "blocks\tsource lines and columns from DWARF, else function+offset\n")
	case "offsets":
		fmt.Fprintf(tw, "blocks\tfunction+offset (the module has no DWARF)\n")
	default:
		fmt.Fprintf(tw, "blocks\tfile offsets (give the module for function offsets and source lines)\n")
	}
	fmt.Fprintf(tw, "strategy\t%s, %s\n", run.Strategy, plural(run.Copies, "copy"))
	if w := run.Weights; w != nil {
		fmt.Fprintf(tw, "planned by\t%s\n", w.String())
	}
	status := "complete"
	if !run.Complete {
		status = "INCOMPLETE"
	}
	fmt.Fprintf(tw, "result\t%s, exit code %d\n", status, run.ExitCode)
	for i, st := range run.Stubs {
		label := ""
		if i == 0 {
			label = "stubs"
		}
		returns := ""
		if st.Result != "" {
			returns = " (returns " + st.Result + ")"
		}
		fmt.Fprintf(tw, "%s\t%s%s, %s\n", label, st.Import, returns, plural(int(st.Calls), "call"))
	}
	for i, c := range run.Invoked {
		label := ""
		if i == 0 {
			label = "invoked"
		}
		returned := ""
		if len(c.Results) > 0 {
			returned = " = " + strings.Join(c.Results, ", ")
		}
		fmt.Fprintf(tw, "%s\t%s%s\n", label, c.Call, returned)
	}
	if g := run.Region; g != nil {
		where := "while " + g.Func + " is on the stack"
		if g.Func == "" {
			where = "between " + g.Start + " and " + g.End
		}
		var cutOpen, cutClose uint64
		for _, c := range g.Cut {
			cutOpen += c.AtOpen
			cutClose += c.AtClose
		}
		partial := ""
		if g.CutPartial {
			partial = " (at least: some boundaries lay deeper than the stack shows)"
		}
		fmt.Fprintf(tw, "region\tonly paths ending %s: opened %s, closed %s; cut: %s in progress at an opening (counted), %d at a close (not counted)%s\n",
			where, plural(int(g.Opened), "time"), plural(int(g.Closed), "time"), plural(int(cutOpen), "path"), cutClose, partial)
	}
	tw.Flush()

	if len(r.Inputs) > 0 {
		// The copies' facts of many runs are in the JSON.
		writeInputs(bw, r.Inputs)
	} else if len(run.Runs) > 0 {
		fmt.Fprintln(bw)
		tw := newTable(bw)
		errCol := ""
		for _, c := range run.Runs {
			if c.Error != "" {
				errCol = "  error"
			}
		}
		fmt.Fprintf(tw, "copy\tprobe hits\tseconds\texit\t%s\n", errCol)
		for _, c := range run.Runs {
			fmt.Fprintf(tw, "%d\t%d\t%.3f\t%d\t  %s\n", c.Copy, c.ProbeHits, c.Seconds, c.ExitCode, c.Error)
		}
		tw.Flush()
	}

	fmt.Fprintf(bw, "\npath coverage by function, most executed first\n")
	ct := newTable(bw)
	fmt.Fprintf(ct, "executions\tcalls\tpaths\tpossible\tcoverage\t  function\n")
	idle, skipped, pathless := 0, 0, 0
	for _, f := range r.Functions {
		if f.Status != profile.StatusProfiled {
			skipped++
			continue
		}
		if f.Coverage == nil {
			pathless++
			continue
		}
		if f.ExecutedPaths == 0 {
			idle++
			continue
		}
		fmt.Fprintf(ct, "%s\t%s\t%d\t%s\t%s\t  %s\n", f.Executions, f.Calls, f.ExecutedPaths, short(f.PossiblePaths), pct(*f.Coverage), f.Name)
	}
	t := r.Totals
	fmt.Fprintf(ct, "%s\t%s\t%d\t%s\t%s\t  total\n", t.Executions, t.Calls, t.Paths, short(t.PossiblePaths), pct(t.Coverage))
	ct.Flush()
	fmt.Fprintf(bw, "%s profiled: %d ran", plural(t.Profiled, "function"), t.Executed)
	if idle > 0 {
		fmt.Fprintf(bw, ", %d did not (not listed)", idle)
	}
	if pathless > 0 {
		fmt.Fprintf(bw, "; %d cannot complete a path (every path traps or never returns)", pathless)
	}
	fmt.Fprintln(bw)
	if skipped > 0 {
		fmt.Fprintf(bw, "%s not profiled, so not counted:\n", plural(skipped, "function"))
		tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
		for _, f := range r.Functions {
			if f.Status != profile.StatusProfiled {
				fmt.Fprintf(tw, "  %s\t%s\n", f.Name, f.Status)
			}
		}
		tw.Flush()
	}
	for _, f := range r.Functions {
		if len(f.Cuts) > 0 {
			fmt.Fprintf(bw, "%s: paths cut at %s (a function of many paths is cut at its loop headers, and where a 64-bit register would overflow)\n", f.Name, blockList(f.Cuts, 0, wrapAt))
		}
	}

	writeHot(bw, "hottest paths by count", r.Hottest)
	writeHot(bw, "hottest paths by count × blocks", r.HottestByLength)
	return bw.Flush()
}

// writeHot writes one hottest-paths list, each entry followed by its
// blocks. The entry lines are aligned as a table first, without the block
// lines, which would break the table's columns.
func writeHot(w io.Writer, title string, list []Hot) {
	fmt.Fprintf(w, "\n%s\n", title)
	if len(list) == 0 {
		fmt.Fprintln(w, "  (no paths ran)")
		return
	}
	var tb bytes.Buffer
	tw := newTable(&tb)
	fmt.Fprintf(tw, "rank\tcount\tblocks\tcount×blocks\tkind\tpath\t  function\n")
	for _, h := range list {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%d\t  %s\n", h.Rank, h.Count, h.Length, h.Weight, h.Kind, h.ID, h.Function)
	}
	tw.Flush()
	lines := strings.Split(strings.TrimSuffix(tb.String(), "\n"), "\n")
	io.WriteString(w, lines[0]+"\n")
	for i, h := range list {
		io.WriteString(w, lines[i+1]+"\n")
		io.WriteString(w, blockList(h.path.Blocks, 6, wrapAt)+h.path.suffix+"\n")
	}
}

// blockList writes blocks compactly: consecutive blocks in the same file
// (or function) share its name, "calc.c:410:3,412:9 util.h:3:1", and past
// width (when not 0) the list wraps, continuing at the indentation.
func blockList(blocks []Block, indent, width int) string {
	var b strings.Builder
	pad := strings.Repeat(" ", indent)
	b.WriteString(pad)
	col := indent
	prev := ""
	for i, bl := range blocks {
		prefix, rest := splitAt(bl)
		whole := bl.At
		tok := whole
		sep := " "
		if i > 0 && prefix != "" && prefix == prev {
			tok, sep = rest, ","
		}
		if i == 0 {
			sep = ""
		}
		if i > 0 && width > 0 && col+len(sep)+len(tok) > width {
			b.WriteString("\n" + pad)
			col = indent
			tok, sep = whole, "" // a continued line names its file again
		}
		b.WriteString(sep)
		b.WriteString(tok)
		col += len(sep) + len(tok)
		prev = prefix
	}
	return b.String()
}

// splitAt splits a block's At into the part consecutive blocks can share
// (the file and colon, or the function and plus) and the rest; a bare
// offset shares nothing.
func splitAt(b Block) (prefix, rest string) {
	if b.File != "" {
		if rest, ok := strings.CutPrefix(b.At, b.File+":"); ok {
			return b.File + ":", rest
		}
	}
	if i := strings.LastIndex(b.At, "+0x"); i > 0 {
		return b.At[:i+1], b.At[i+1:]
	}
	return "", b.At
}

func plural(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "y"):
		return fmt.Sprintf("%d %sies", n, noun[:len(noun)-1])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// pct writes a percentage so that a tiny non-zero coverage does not read
// as none.
func pct(p float64) string {
	switch {
	case p == 0:
		return "0.0%"
	case p < 0.05:
		return "<0.1%"
	case p > 99.95 && p < 100:
		return ">99.9%"
	}
	return fmt.Sprintf("%.1f%%", p)
}

// short abbreviates a possible-paths count that would widen its column
// past use, as pathprof inspect does.
func short(n string) string {
	if len(n) <= 15 {
		return n
	}
	f, _, err := big.ParseFloat(n, 10, 64, big.ToNearestEven)
	if err != nil {
		return n
	}
	return "~" + f.Text('e', 3)
}

// table is a tabwriter that right-aligns every tab-terminated cell, as
// numbers read best, and leaves the last cell of a line (a name) as is. On
// Flush it drops the padding that right alignment puts before the first
// column and after an empty last cell.
type table struct {
	*tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

func newTable(w io.Writer) *table {
	t := &table{out: w}
	t.Writer = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	return t
}

func (t *table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(t.buf.String(), "\n"), "\n")
	indent := -1
	for _, l := range lines {
		n := len(l) - len(strings.TrimLeft(l, " "))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	for _, l := range lines {
		if _, err := io.WriteString(t.out, strings.TrimRight(l[indent:], " ")+"\n"); err != nil {
			return err
		}
	}
	t.buf.Reset()
	return nil
}
