package report

import "io"

// The text report's formatting, for the reports of other commands
// (pathprof diff) to read alike.

// Percent writes a percentage as the text report does: a tiny non-zero
// one does not read as none.
func Percent(p float64) string { return pct(p) }

// Possible abbreviates a possible-paths count as the text report does.
func Possible(n string) string { return short(n) }

// Table is the text report's table: every tab-terminated cell right
// aligned, the last cell of a line (a name) as is.
type Table = table

// NewTable returns a Table writing to w on Flush.
func NewTable(w io.Writer) *Table { return newTable(w) }
