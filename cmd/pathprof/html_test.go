package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReportHTML writes the HTML report through the command line and
// checks the page's data: the function, its paths on its graph, and the
// source that the module's DWARF names, found next to the module.
func TestReportHTML(t *testing.T) {
	dir := t.TempDir()
	prof, wasmPath := calcAbsReportProfile(t, dir)
	page := filepath.Join(dir, "report.html")
	code, out, errs := runCmd("report", "--html", page, prof)
	if code != 0 || out != "" || errs != "" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "<!DOCTYPE html>") {
		t.Fatalf("not a page: %.100s", b)
	}
	m := regexp.MustCompile(`<script type="application/json" id="overview">([^<]*)</script>`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no overview data")
	}
	var ov struct {
		Run   struct{ Strategy string }
		Funcs [][]any
		Hot   [][]any
		Files []struct{ Name, Path string }
	}
	if err := json.Unmarshal(m[1], &ov); err != nil {
		t.Fatal(err)
	}
	if ov.Run.Strategy != "pbl" || len(ov.Funcs) != 1 || ov.Funcs[0][1] != "fn_gcd" || len(ov.Hot) != 2 {
		t.Errorf("overview %+v", ov)
	}
	found := false
	for _, f := range ov.Files {
		found = found || f.Name == "calc.c" && f.Path == filepath.Join(filepath.Dir(wasmPath), "calc.c")
	}
	if !found {
		t.Errorf("calc.c not embedded: %+v", ov.Files)
	}
	m = regexp.MustCompile(`id="fd0">([^<]*)</script>`).FindSubmatch(b)
	var d struct {
		B []uint64
		E []uint64
		P [][]any
	}
	if m == nil || json.Unmarshal(m[1], &d) != nil || len(d.B) < 12 || len(d.E) < 10 || len(d.P) != 2 {
		t.Errorf("function data %s", m)
	}

	// --top bounds the hottest lists as in the text report.
	if code, _, errs = runCmd("report", "--top", "1", "--html", page, prof); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, _ = os.ReadFile(page)
	m = regexp.MustCompile(`id="overview">([^<]*)</script>`).FindSubmatch(b)
	if m == nil || json.Unmarshal(m[1], &ov) != nil || len(ov.Hot) != 1 {
		t.Errorf("--top 1: %d hottest paths", len(ov.Hot))
	}

	// A page that cannot be written is an error.
	if code, _, errs = runCmd("report", "--html", filepath.Join(dir, "no", "such", "dir", "r.html"), prof); code != 1 || !strings.Contains(errs, "r.html") {
		t.Errorf("unwritable: exit %d: %s", code, errs)
	}
}
