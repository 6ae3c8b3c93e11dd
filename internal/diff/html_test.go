package diff

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/pathprof/pathprof/internal/chromium"
	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/report"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
)

// TestHTMLInBrowser opens the page of grid's profiles on two board sizes
// in headless Chromium: every path that differs has a row marked with its
// status, and the page's script has written each changed path's change.
func TestHTMLInBrowser(t *testing.T) {
	bin := chromium.Find(t)
	g := testprogs.CProgramByName(t, "grid")
	orig, err := os.ReadFile(g.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	opt := report.Options{Module: orig}
	a, err := profiler.Profile(context.Background(), orig, profiler.Options{Run: runnerArgs(t, "4")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := profiler.Profile(context.Background(), orig, profiler.Options{Run: runnerArgs(t, "9")})
	if err != nil {
		t.Fatal(err)
	}
	d, err := Compare(a, b, Options{A: opt, B: opt, FileA: "a.json", FileB: "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "diff.html")
	var buf bytes.Buffer
	if err := d.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	profileDir := t.TempDir()
	args := append(append([]string{}, chromium.Flags...), "--user-data-dir="+profileDir, "--dump-dom", "file://"+page)
	dom, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	for st, n := range map[string]int{Gone: d.Totals.Gone, New: d.Totals.New, Changed: d.Totals.Changed} {
		rows := regexp.MustCompile(`<tr data-status="`+st+`"`).FindAll(dom, -1)
		if len(rows) != n {
			t.Errorf("%d rows marked %s, want %d", len(rows), st, n)
		}
	}
	changes := regexp.MustCompile(`data-v="[^"]+">[+-][0-9]+\.[0-9]%</td>`).FindAll(dom, -1)
	if len(changes) != d.Totals.Changed || d.Totals.Changed == 0 {
		t.Errorf("%d changes written by the script, want %d", len(changes), d.Totals.Changed)
	}
}

// runnerArgs is grid's run with the argument arg.
func runnerArgs(t *testing.T, arg string) runner.Config {
	return runner.Config{Args: []string{arg}, CacheDir: testprogs.WazeroCacheDir(t)}
}
