package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/pathprof/pathprof/internal/diff"
	"github.com/pathprof/pathprof/internal/report"
	"github.com/pathprof/pathprof/internal/srcmap"
	"github.com/pathprof/pathprof/profile"
)

// cmdDiff compares two profiles.
func cmdDiff(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("diff", stderr)
	threshold := fs.Float64("threshold", diff.DefaultThreshold, "a path whose count changed by more than `PCT` percent of A's is changed (0: any change)")
	asJSON := fs.Bool("json", false, "print JSON")
	modA := fs.String("module-a", "", "A's module, for source labels (default: the module A names, if unchanged)")
	modB := fs.String("module-b", "", "B's module (default: the module B names, if unchanged)")
	html := addHTMLFlags(fs)
	if err := fs.Parse(interleaved(fs, args)); err != nil {
		return 2
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return 2
	}
	if *threshold < 0 {
		fmt.Fprintf(stderr, "pathprof: --threshold %v: want at least 0\n", *threshold)
		return 2
	}
	if html.file != "" && !checkOutput(html.file, stderr) {
		return 1
	}
	opt := diff.Options{Threshold: *threshold, FileA: fs.Arg(0), FileB: fs.Arg(1)}
	var ps [2]*profile.Profile
	for i, side := range []struct {
		file, module string
		opt          *report.Options
	}{{fs.Arg(0), *modA, &opt.A}, {fs.Arg(1), *modB, &opt.B}} {
		p, err := profile.ReadFile(side.file)
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		b, name, warn, err := findModule(p.Module.Path, p.Module.SHA256, side.file, side.module)
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		if warn != "" {
			fmt.Fprintf(stderr, "pathprof: warning: %s: %s; its blocks are shown as file offsets\n", side.file, warn)
		}
		side.opt.Module, side.opt.ModulePath, side.opt.Sources = b, name, srcmap.NewRoots(name, html.sources)
		ps[i] = p
	}
	d, err := diff.Compare(ps[0], ps[1], opt)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	switch {
	case html.file != "":
		err = writeHTMLDiff(html, d)
	case *asJSON:
		var b []byte
		if b, err = json.MarshalIndent(d, "", "  "); err == nil {
			_, err = stdout.Write(append(b, '\n'))
		}
	default:
		err = d.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	return 0
}
