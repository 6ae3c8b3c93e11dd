package main

// This file tests that reports read source files only from where the user
// allows, with testdata/hostile, a module whose DWARF names files outside.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
)

// TestReportLeavesOutForeignSources profiles the hostile module, writes a
// marker into the files its DWARF names (one by an absolute path, one by a
// relative path that climbs out of the module's directory), and checks
// that no report format carries the marker and that each names the files
// as left out; with --source naming their directory the page embeds them,
// so the check can fail.
func TestReportLeavesOutForeignSources(t *testing.T) {
	const secretDir, marker = "/tmp/pathprof-secret", "PATHPROF-SECRET-MARKER"
	wasm := filepath.Join(testprogs.ModuleRoot(t), "testdata", "hostile", "hostile.wasm")
	if err := os.MkdirAll(secretDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for i := 1; i <= 40; i++ {
		text.WriteString(marker + " line\n")
	}
	names := []string{filepath.Join(secretDir, "secret.c"), filepath.Join(secretDir, "climb.c")}
	for _, n := range names {
		if err := os.WriteFile(n, []byte(text.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(n) })
	}

	dir := t.TempDir()
	prof := filepath.Join(dir, "p.json")
	if code, _, errs := runCmd("profile", "-q", "-o", prof, wasm); code != 0 {
		t.Fatalf("profile: exit %d: %s", code, errs)
	}
	check := func(format, out string) {
		t.Helper()
		if strings.Contains(out, marker) {
			t.Errorf("%s: the report holds a left-out file's contents", format)
		}
		for _, n := range names {
			if !strings.Contains(out, n) {
				t.Errorf("%s: the report does not name %s:\n%.3000s", format, n, out)
			}
		}
		if !strings.Contains(out, "left out") || !strings.Contains(out, "--source DIR") {
			t.Errorf("%s: the report does not say the sources were left out, or how to include them", format)
		}
	}

	code, out, errs := runCmd("report", prof)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	check("text", out+errs)

	code, out, errs = runCmd("report", "--json", prof)
	var doc struct {
		LeftOut []string `json:"sources_left_out"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("report --json: exit %d: %s", code, errs)
	}
	check("json", out+errs)
	if len(doc.LeftOut) != 2 {
		t.Errorf("json: sources_left_out %q, want the two files", doc.LeftOut)
	}

	page := filepath.Join(dir, "r.html")
	if code, _, errs = runCmd("report", "--html", page, prof); code != 0 {
		t.Fatalf("report --html: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	check("html", string(b))

	// Allowed with --source, the files are read.
	if code, _, errs = runCmd("report", "--html", page, "--source", secretDir, prof); code != 0 {
		t.Fatalf("report --html --source: exit %d: %s", code, errs)
	}
	if b, _ = os.ReadFile(page); !strings.Contains(string(b), marker) {
		t.Errorf("--source %s: the page does not embed the files", secretDir)
	}
	if code, out, _ = runCmd("report", "--source", secretDir, prof); code != 0 || strings.Contains(out, "left out") {
		t.Errorf("--source %s: exit %d, the text report still leaves sources out:\n%s", secretDir, code, out)
	}
}
