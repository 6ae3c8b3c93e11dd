package main

// This file tests that commands check their output path before they run
// anything.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
)

// TestOutputCheckedFirst gives every command that writes a file an output
// in a directory that does not exist: each fails at once with exit 1 and a
// message naming the path, and the program never runs (it would print to
// stdout).
func TestOutputCheckedFirst(t *testing.T) {
	calc := testprogs.CProgramByName(t, "calc")
	in := filepath.Join(filepath.Dir(calc.Wasm), "calc.in")
	dir := t.TempDir()
	bad := filepath.Join(dir, "nonexistent", "dir", "p.json")
	copiesDir := filepath.Join(dir, "copies")
	if code, _, errs := runCmd("instrument", "--copies", "2", "-o", copiesDir, calc.Wasm); code != 0 {
		t.Fatalf("instrument: exit %d: %s", code, errs)
	}
	for _, args := range [][]string{
		{"profile", "-o", bad, "--stdin", in, calc.Wasm},
		{"profile", "--strategy", "p3", "-o", bad, "--stdin", in, calc.Wasm},
		{"osp", "-o", bad, "--stdin", in, calc.Wasm},
		{"osp-score", "-o", bad, "--stdin", in, calc.Wasm},
		{"exec", "-o", bad, "--stdin", in, copiesDir, "0"},
		{"merge", "-o", bad, filepath.Join(copiesDir, "part-0.json")},
	} {
		code, out, errs := runCmd(args...)
		if code != 1 || out != "" || !strings.Contains(errs, bad) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", args[0], code, out, errs)
		}
	}
	// A file where instrument's directory should be.
	if code, _, errs := runCmd("instrument", "-o", filepath.Join(copiesDir, "manifest.json"), calc.Wasm); code != 1 || !strings.Contains(errs, "manifest.json") {
		t.Errorf("instrument into a file: exit %d: %s", code, errs)
	}
}
