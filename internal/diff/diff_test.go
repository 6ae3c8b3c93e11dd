package diff

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/report"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/profile"
)

func profileOf(t *testing.T, name string) (*profile.Profile, []byte) {
	t.Helper()
	c := testprogs.CProgramByName(t, name)
	orig, err := os.ReadFile(c.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.Config(t)
	cfg.CacheDir = testprogs.WazeroCacheDir(t)
	p, err := profiler.Profile(context.Background(), orig, profiler.Options{ModulePath: c.Wasm, Run: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return p, orig
}

// TestTwoModules compares the profiles of vm.c built at -O2 and at -O0,
// matched by function name and path label: every path of each side is
// counted once, as gone, new, changed or unchanged, and functions with the
// same source match (main's source is the same in both).
func TestTwoModules(t *testing.T) {
	a, ma := profileOf(t, "vm-O0")
	b, mb := profileOf(t, "vm")
	for _, threshold := range []float64{0, DefaultThreshold} {
		d, err := Compare(a, b, Options{Threshold: threshold, A: report.Options{Module: ma}, B: report.Options{Module: mb}, FileA: "a", FileB: "b"})
		if err != nil {
			t.Fatal(err)
		}
		if d.SameModule {
			t.Fatal("two modules taken for one")
		}
		tt := d.Totals
		if tt.Gone+tt.Changed+tt.Unchanged != d.A.Paths || tt.New+tt.Changed+tt.Unchanged != d.B.Paths {
			t.Fatalf("totals %+v do not account for a's %d and b's %d paths", tt, d.A.Paths, d.B.Paths)
		}
		if tt.Changed+tt.Unchanged == 0 {
			t.Fatal("no path matched between the builds: the libc's functions are the same in both")
		}
		var text bytes.Buffer
		if err := d.WriteText(&text); err != nil || !strings.Contains(text.String(), "different modules") {
			t.Fatalf("%v\n%s", err, text.String())
		}
	}
}
