package atomicfile

// This file tests that writes replace a file whole or not at all, and the
// check before a run.

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.json")
	if err := WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A writer that fails half-way leaves the old file as it was.
	boom := errors.New("boom")
	err := Write(path, 0o644, func(w io.Writer) error {
		io.WriteString(w, strings.Repeat("half-written ", 1<<14))
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v, want boom naming %s", err, path)
	}
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Errorf("after a failed write the file holds %.40q", b)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("the temporary file was left behind: %v", es)
	}
	// A successful one replaces it, readable by all.
	if err := WriteFile(path, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new\n" {
		t.Errorf("the file holds %q", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
}

func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	if err := CheckWritable(filepath.Join(dir, "p.json")); err != nil {
		t.Error(err)
	}
	if es, _ := os.ReadDir(dir); len(es) != 0 {
		t.Errorf("the check left %v", es)
	}
	missing := filepath.Join(dir, "no", "such", "p.json")
	if err := CheckWritable(missing); err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing directory: %v", err)
	}
	if err := CheckWritable(dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("a directory: %v", err)
	}
	if err := WriteFile(missing, nil, 0o644); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("write to a missing directory: %v", err)
	}
}
