package main

// This file merges profiles of different runs of one module, which
// "pathprof merge" does when given profiles rather than parts.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pathprof/pathprof/profile"
)

// isProfile reports whether the file at path says it is a profile (else
// merge takes it for a part, whose reader says what is wrong with it).
func isProfile(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var hdr struct {
		Format string `json:"format"`
	}
	return json.Unmarshal(data, &hdr) == nil && hdr.Format == profile.Format
}

// mergeProfiles merges the profiles in files into out, one file at a time
// so that any number fit in memory, with a progress line every few
// seconds on progress (nil for none).
func mergeProfiles(files []string, out string, stdout, stderr, progress io.Writer) int {
	m := profile.NewMerger()
	last := time.Now()
	for i, f := range files {
		p, err := profile.ReadFile(f)
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		// A profile that does not record its run (version 1) is
		// labelled by its file's name.
		if err := m.Add(f, filepath.Base(f), p); err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		if progress != nil && time.Since(last) > 2*time.Second {
			fmt.Fprintf(progress, "pathprof: merged %d of %d profiles\n", i+1, len(files))
			last = time.Now()
		}
	}
	p, err := m.Profile()
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	if err := profile.WriteFile(out, p); err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	if !p.Complete {
		fmt.Fprintf(stderr, "pathprof: wrote %s (%d profiles, %d runs), marked incomplete: %s\n", out, len(files), len(p.Inputs), p.Incomplete)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s: %d profiles merged, %d runs, %d paths executed in %d functions\n", out, len(files), len(p.Inputs), countPaths(p), countFuncs(p))
	return 0
}
