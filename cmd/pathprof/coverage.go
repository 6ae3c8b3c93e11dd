package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/pathprof/pathprof/internal/atomicfile"
	"github.com/pathprof/pathprof/internal/coverage"
	"github.com/pathprof/pathprof/internal/srcmap"
	"github.com/pathprof/pathprof/profile"
)

// coverageFlags are the report command's flags for line and branch
// coverage files.
type coverageFlags struct {
	lcov, cobertura string
}

func addCoverageFlags(fs *flag.FlagSet) *coverageFlags {
	c := &coverageFlags{}
	fs.StringVar(&c.lcov, "lcov", "", "write line, branch and function coverage as an lcov tracefile to `FILE`")
	fs.StringVar(&c.cobertura, "cobertura", "", "write line, branch and function coverage as Cobertura XML to `FILE`")
	return c
}

func (c *coverageFlags) any() bool { return c.lcov != "" || c.cobertura != "" }

// write writes the coverage files asked for. module is the profiled
// module (nil when none was found), name its path.
func (c *coverageFlags) write(p *profile.Profile, module []byte, name string, sources []string, stderr io.Writer) error {
	if module == nil {
		return fmt.Errorf("coverage needs the profiled module: give it with --module FILE")
	}
	cov, err := coverage.Build(p, module, coverage.Options{Roots: srcmap.NewRoots(name, sources)})
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	for _, w := range cov.Warnings {
		fmt.Fprintf(stderr, "pathprof: warning: %s\n", w)
	}
	if c.lcov != "" {
		if err := atomicfile.Write(c.lcov, 0o644, cov.WriteLCOV); err != nil {
			return err
		}
	}
	if c.cobertura != "" {
		return atomicfile.Write(c.cobertura, 0o644, func(w io.Writer) error { return cov.WriteCobertura(w, name) })
	}
	return nil
}
