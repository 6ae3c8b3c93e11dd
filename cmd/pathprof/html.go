package main

import (
	"flag"
	"io"

	"github.com/pathprof/pathprof/internal/atomicfile"
	"github.com/pathprof/pathprof/internal/diff"
	"github.com/pathprof/pathprof/internal/htmlreport"
	"github.com/pathprof/pathprof/internal/report"
	"github.com/pathprof/pathprof/profile"
)

// htmlFlags are the report command's flags for the HTML report.
type htmlFlags struct {
	file    string
	sources multiFlag
}

func addHTMLFlags(fs *flag.FlagSet) *htmlFlags {
	h := &htmlFlags{}
	fs.StringVar(&h.file, "html", "", "write the report as one self-contained HTML page to `FILE`")
	fs.Var(&h.sources, "source", "read source files DWARF names from `DIR` too (repeatable); sources are read only from here, the module's directory and these")
	return h
}

// writeHTMLReport writes the HTML report of p to h.file. opt is what the
// text report was built with (the module, if one was found and matched);
// unless --top was given, the page lists more hottest paths than the
// text report, since one scrolls a page.
func writeHTMLReport(h *htmlFlags, p *profile.Profile, opt report.Options, topSet bool) error {
	if !topSet {
		opt.Top = htmlreport.DefaultTop
	}
	r, err := report.Build(p, opt)
	if err != nil {
		return err
	}
	return atomicfile.Write(h.file, 0o644, func(w io.Writer) error {
		return htmlreport.Write(w, r, htmlreport.Options{Module: opt.Module, ModulePath: opt.ModulePath, SourceDirs: h.sources})
	})
}

// writeHTMLDiff writes the HTML page of the diff d to h.file.
func writeHTMLDiff(h *htmlFlags, d *diff.Diff) error {
	return atomicfile.Write(h.file, 0o644, d.WriteHTML)
}
