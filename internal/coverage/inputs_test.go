package coverage

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/profile"
)

// TestInputs merges two runs of calc-O0 on different inputs: the lcov file
// holds a test per input, each the coverage of that input's profile
// alone, and genhtml adds them up to the merged profile's totals.
func TestInputs(t *testing.T) {
	r := profiled(t, "calc-O0")
	cfg := r.prog.Config(t)
	cfg.Stdin = strings.NewReader("1 + 2 * 3\n(1 + 2) * 3\n")
	cfg.Stdout = &bytes.Buffer{}
	small, err := profiler.Profile(context.Background(), r.module, profiler.Options{ModulePath: r.prog.Wasm, Run: cfg})
	if err != nil {
		t.Fatal(err)
	}
	m := profile.NewMerger()
	for _, in := range []struct {
		label string
		p     *profile.Profile
	}{{"calc.in", r.prof}, {"two lines", small}} {
		p := *in.p
		p.Inputs = append([]profile.Input(nil), p.Inputs...)
		for i := range p.Inputs {
			p.Inputs[i].Label = in.label
		}
		if err := m.Add(in.label, in.label, &p); err != nil {
			t.Fatal(err)
		}
	}
	merged, err := m.Profile()
	if err != nil {
		t.Fatal(err)
	}
	cov, err := Build(merged, r.module, Options{Roots: r.roots()})
	if err != nil {
		t.Fatal(err)
	}
	if len(cov.Inputs) != 2 || cov.Inputs[0].Label != "calc.in" || cov.Inputs[1].Label != "two lines" {
		t.Fatalf("inputs %+v", cov.Inputs)
	}
	data := lcov(t, cov)
	for i, want := range []string{"calc_in", "two_lines"} {
		alone, err := merged.OfInput(i)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Build(alone, r.module, Options{Roots: r.roots()})
		if err != nil {
			t.Fatal(err)
		}
		section := strings.TrimPrefix(string(lcov(t, c)), "TN:\n")
		if !strings.Contains(string(data), "TN:"+want+"\n"+section) {
			t.Errorf("input %d: its test is not its own profile's coverage", i)
		}
	}
	// The merged profile's branches are taken as often as the inputs'
	// together, and its lines ran where one of theirs did.
	type key struct {
		file       string
		line, b, i int
	}
	taken, sum := map[key]uint64{}, map[key]uint64{}
	ran, anyRan := map[[2]any]bool{}, map[[2]any]bool{}
	each := func(files []*File, br map[key]uint64, lines map[[2]any]bool) {
		for _, f := range files {
			for _, b := range f.Branches {
				br[key{f.Name, b.Line, b.Block, b.Branch}] += b.Taken
			}
			for _, l := range f.Lines {
				lines[[2]any{f.Name, l.Number}] = lines[[2]any{f.Name, l.Number}] || l.Count > 0
			}
		}
	}
	each(cov.Files, taken, ran)
	for _, in := range cov.Inputs {
		each(in.Files, sum, anyRan)
	}
	if len(taken) < 100 || len(ran) < 100 {
		t.Fatalf("%d branches, %d lines", len(taken), len(ran))
	}
	for k, n := range taken {
		if sum[k] != n {
			t.Errorf("%v: taken %d times, by the inputs %d", k, n, sum[k])
		}
	}
	for k, r := range ran {
		if anyRan[k] != r {
			t.Errorf("%v: ran %v, in an input %v", k, r, anyRan[k])
		}
	}
	totals := lcov(t, &Coverage{Files: cov.Files})
	if genhtml, err := exec.LookPath("genhtml"); err == nil {
		dir := t.TempDir()
		info := filepath.Join(dir, "m.info")
		if err := os.WriteFile(info, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out := command(t, dir, exec.Command(genhtml, "--branch-coverage", "-o", filepath.Join(dir, "html"), info))
		for _, want := range []string{
			"(" + total(t, totals, "LH:") + " of " + total(t, totals, "LF:") + " lines)",
			"(" + total(t, totals, "BRH:") + " of " + total(t, totals, "BRF:") + " branches)",
		} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("genhtml's summary lacks %q:\n%s", want, out)
			}
		}
	}
}
