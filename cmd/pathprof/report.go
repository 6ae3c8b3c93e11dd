package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pathprof/pathprof/internal/report"
	"github.com/pathprof/pathprof/profile"
)

const reportUsage = "usage: pathprof report [--top N] [--json] [--html FILE [--source DIR]] [--module FILE] PROFILE"

// cmdReport prints a profile's hottest paths, per-function path coverage
// and run facts.
func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	top := fs.Int("top", report.DefaultTop, "list the `N` hottest paths")
	asJSON := fs.Bool("json", false, "print JSON")
	modFlag := fs.String("module", "", "the profiled module, for function offsets and source lines (default: the module the profile names, if unchanged)")
	html := addHTMLFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, reportUsage)
		fs.PrintDefaults()
	}
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
	p, err := profile.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}

	opt := report.Options{Top: *top}
	explicit := *modFlag != ""
	if explicit {
		b, err := os.ReadFile(*modFlag)
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		if sum := sha256hex(b); p.Module.SHA256 != "" && sum != p.Module.SHA256 {
			fmt.Fprintf(stderr, "pathprof: %s is not the module %s profiled (sha256 %s, the profile's %s)\n", *modFlag, path, sum, p.Module.SHA256)
			return 1
		}
		opt.Module, opt.ModulePath = b, *modFlag
	} else {
		b, name, warn := defaultModule(p, path)
		if warn != "" {
			fmt.Fprintf(stderr, "pathprof: warning: %s; blocks are shown as file offsets (--module FILE gives the module)\n", warn)
		}
		opt.Module, opt.ModulePath = b, name
	}

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
	if html.file != "" {
		for _, w := range r.Warnings {
			fmt.Fprintf(stderr, "pathprof: warning: %s\n", w)
		}
		topSet := false
		fs.Visit(func(f *flag.Flag) { topSet = topSet || f.Name == "top" })
		if err := writeHTMLReport(html, p, opt, topSet); err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
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

// defaultModule finds the module a profile names: at its recorded path, or,
// for a relative path, next to the profile (a profile and its module are
// often moved together). It returns no module and a warning when none is
// found or the one found is not the module profiled.
func defaultModule(p *profile.Profile, profilePath string) (module []byte, name, warn string) {
	if p.Module.Path == "" {
		return nil, "", "the profile names no module"
	}
	tries := []string{p.Module.Path}
	if !filepath.IsAbs(p.Module.Path) {
		if alt := filepath.Join(filepath.Dir(profilePath), p.Module.Path); alt != filepath.Clean(p.Module.Path) {
			tries = append(tries, alt)
		}
	}
	var changed []string
	for _, name := range tries {
		b, err := os.ReadFile(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", err.Error()
		}
		if p.Module.SHA256 != "" && sha256hex(b) != p.Module.SHA256 {
			changed = append(changed, name)
			continue
		}
		return b, name, ""
	}
	if len(changed) > 0 {
		return nil, "", fmt.Sprintf("module %s has changed since it was profiled (its sha256 differs)", changed[0])
	}
	return nil, "", fmt.Sprintf("module %s not found", p.Module.Path)
}

func sha256hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
