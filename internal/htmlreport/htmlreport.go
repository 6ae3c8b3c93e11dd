// Package htmlreport writes a path profile as one self-contained HTML page
// for people to browse: the run's facts, the hottest paths and path coverage
// per function on an overview, and per function its control-flow graph with
// the executed paths drawn on it, the list of those paths, and the source
// lines (through DWARF) or instructions they pass.
//
// The page needs nothing but a browser: styles, script and data are inline,
// and the graphs are laid out and drawn by the page's own script. So that a
// profile of tens of thousands of functions opens quickly, the page parses
// only the overview's data at load; each function's data is a separate
// inline JSON document, parsed and drawn only when that function is shown.
package htmlreport

import (
	"io"

	"github.com/pathprof/pathprof/internal/report"
)

// DefaultTop is how many hottest paths the overview lists when the report
// was built for it (the text report's ten are few for a page one scrolls).
const DefaultTop = 50

// DefaultMaxInstructions bounds the instructions embedded for the
// instruction view: a Go program's code would otherwise make a page of
// hundreds of megabytes.
const DefaultMaxInstructions = 1_000_000

// Options say what Write embeds besides the report.
type Options struct {
	// Module is the original module the report was built with, or nil.
	// Without it the page has no graphs, source or instructions: paths
	// are shown as file offsets.
	Module []byte
	// ModulePath is where Module was read; source files that DWARF names
	// by relative paths are looked for relative to its directory.
	ModulePath string
	// SourceDirs are more directories to look for source files in, after
	// the module's directory and the compilation directories DWARF names.
	SourceDirs []string
	// MaxInstructions bounds the instructions embedded over all functions
	// (0 means DefaultMaxInstructions; negative embeds none). Functions are
	// taken most executed first; the page says where they were left out.
	MaxInstructions int
	// MaxSourceBytes bounds the source text embedded (0 means 16 MiB).
	MaxSourceBytes int
}

// Write writes r as an HTML page to w. r must have been built from a
// profile with opt.Module (or with no module if opt.Module is nil).
func Write(w io.Writer, r *report.Report, opt Options) error {
	pg, err := build(r, opt)
	if err != nil {
		return err
	}
	return pg.write(w)
}
