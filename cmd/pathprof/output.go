package main

// This file checks a command's output path before its work starts, so that
// a typo costs a second rather than an hour-long run.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pathprof/pathprof/internal/atomicfile"
)

// checkOutput reports whether a file can be written at path, saying why
// not on stderr; a command that gets false exits 1.
func checkOutput(path string, stderr io.Writer) bool {
	if err := atomicfile.CheckWritable(path); err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return false
	}
	return true
}

// checkOutputDir is checkOutput for a directory of outputs, which is made
// if missing, as the writers would.
func checkOutputDir(dir string, stderr io.Writer) bool {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "pathprof: cannot write to %s: %v\n", dir, err)
		return false
	}
	return checkOutput(filepath.Join(dir, "manifest.json"), stderr)
}
