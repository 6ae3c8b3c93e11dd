package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/pathprof/pathprof/internal/report"
	"github.com/pathprof/pathprof/internal/srcmap"
	"github.com/pathprof/pathprof/profile"
)

// cmdReport prints a profile's hottest paths, per-function path coverage
// and run facts.
func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("report", stderr)
	top := fs.Int("top", report.DefaultTop, "list the `N` hottest paths")
	asJSON := fs.Bool("json", false, "print JSON")
	modFlag := fs.String("module", "", "the profiled module, for function offsets and source lines (default: the module the profile names, if unchanged)")
	html := addHTMLFlags(fs)
	cov := addCoverageFlags(fs)
	if err := fs.Parse(interleaved(fs, args)); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	if *top < 1 {
		fmt.Fprintf(stderr, "pathprof: --top %d: want at least 1\n", *top)
		return 2
	}
	path := fs.Arg(0)
	for _, out := range []string{html.file, cov.lcov, cov.cobertura} {
		if out != "" && !checkOutput(out, stderr) {
			return 1
		}
	}
	p, err := profile.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}

	opt := report.Options{Top: *top}
	explicit := *modFlag != ""
	b, name, warn, err := findModule(p.Module.Path, p.Module.SHA256, path, *modFlag)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	if warn != "" && cov.any() {
		fmt.Fprintf(stderr, "pathprof: coverage needs the profiled module: %s; give it with --module FILE\n", warn)
		return 1
	}
	if warn != "" {
		fmt.Fprintf(stderr, "pathprof: warning: %s; blocks are shown as file offsets (--module FILE gives the module)\n", warn)
	}
	opt.Module, opt.ModulePath = b, name
	opt.Sources = srcmap.NewRoots(name, html.sources)

	r, err := report.Build(p, opt)
	if err != nil && !explicit && opt.Module != nil {
		// The module was found by the name in the profile; the report is
		// still worth having without it.
		fmt.Fprintf(stderr, "pathprof: warning: %s: %v; blocks are shown as file offsets\n", opt.ModulePath, err)
		opt.Module, opt.ModulePath = nil, ""
		r, err = report.Build(p, opt)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %s: %v\n", path, err)
		return 1
	}
	if html.file != "" || cov.any() {
		for _, w := range r.Warnings {
			fmt.Fprintf(stderr, "pathprof: warning: %s\n", w)
		}
		if cov.any() {
			if err := cov.write(p, opt.Module, opt.ModulePath, html.sources, stderr); err != nil {
				fmt.Fprintf(stderr, "pathprof: %v\n", err)
				return 1
			}
		}
		if html.file != "" {
			topSet := false
			fs.Visit(func(f *flag.Flag) { topSet = topSet || f.Name == "top" })
			if err := writeHTMLReport(html, p, opt, topSet); err != nil {
				fmt.Fprintf(stderr, "pathprof: %v\n", err)
				return 1
			}
		}
		return 0
	}
	if *asJSON {
		for _, w := range r.Warnings {
			fmt.Fprintf(stderr, "pathprof: warning: %s\n", w)
		}
		var b []byte
		if b, err = r.JSON(); err == nil {
			_, err = stdout.Write(b)
		}
	} else {
		err = r.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	return 0
}
