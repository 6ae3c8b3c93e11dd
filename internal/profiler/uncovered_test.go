package profiler

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/profile"
)

// TestUncoveredFrom profiles test binaries (a Go, a Rust libtest and a
// GoogleTest one) with --uncovered-from: a base of some of their tests,
// then all of them. The paths the profile lists as new are exactly those
// the SBL profile of all the tests has and the base has not; every path
// it counts, it counts as SBL does; a function the base covered whole
// has no probes. Then all the tests again, from the base of all of them
// (a suite's second run): nothing new, and the copy's probe hits on the
// run, from SBL's exact profile, are fewer than SBL's (logged).
func TestUncoveredFrom(t *testing.T) {
	root := testprogs.ModuleRoot(t)
	for _, c := range []struct {
		name      string
		path      string
		base, all []string
		cfg       func(t *testing.T) runner.Config
	}{
		{"sort.test", testprogs.GoStdTest(t, "sort"), []string{"-test.short", "-test.run", "^TestSort"}, []string{"-test.short"},
			func(t *testing.T) runner.Config { return testprogs.GoStdTestConfig(t, "sort") }},
		{"shapes (rust)", filepath.Join(root, "testdata", "testbins", "shapes.wasm"), []string{"parse"}, nil,
			func(t *testing.T) runner.Config { return runner.Config{} }},
		{"stack (gtest)", filepath.Join(root, "testdata", "testbins", "stack.wasm"), []string{"--gtest_filter=Stack.*"}, nil,
			func(t *testing.T) runner.Config { return runner.Config{} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			orig, err := os.ReadFile(c.path)
			if err != nil {
				t.Fatal(err)
			}
			run := func(args []string, base *profile.Profile) (*profile.Profile, *Prepared) {
				cfg := c.cfg(t)
				cfg.Args, cfg.Stdout, cfg.CacheDir = args, &bytes.Buffer{}, testprogs.WazeroCacheDir(t)
				opt := Options{ModulePath: c.path, Run: cfg, UncoveredFrom: base, UncoveredName: "base"}
				pr, err := Prepare(orig, opt)
				if err != nil {
					t.Fatal(err)
				}
				p, err := pr.run(ctx, nil, "", cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				if base != nil {
					MarkUncovered(p, base, "base")
				}
				return p, pr
			}
			base, _ := run(c.base, nil)
			all, _ := run(c.all, nil)
			unc, pr := run(c.all, base)
			checkUncovered(t, unc, base, all, pr)
			if len(unc.UncoveredFrom.NewPaths) == 0 {
				t.Fatal("the base covered everything: the test shows nothing")
			}

			again, pr := run(c.all, all)
			checkUncovered(t, again, all, all, pr)
			hits, err := pr.cs.Copy[0].HitsOf(all.Functions)
			if err != nil {
				t.Fatal(err)
			}
			sbl := all.Runs[0].ProbeHits
			t.Logf("%s second run: %d probe hits, SBL's %d (%.3f); %d of %d functions without probes",
				c.name, hits, sbl, float64(hits)/float64(sbl), pr.cs.Covered, len(pr.cs.Funcs))
			if hits >= sbl {
				t.Fatalf("%d probe hits, SBL's %d: counting only what is uncovered saved nothing", hits, sbl)
			}
		})
	}
}

// checkUncovered checks p, profiled with copies of pr from base, against
// all, the SBL profile of the same run.
func checkUncovered(t *testing.T, p, base, all *profile.Profile, pr *Prepared) {
	t.Helper()
	paths := func(p *profile.Profile) map[[2]uint64]uint64 {
		m := map[[2]uint64]uint64{}
		for _, f := range p.Functions {
			for _, q := range f.Paths {
				m[[2]uint64{uint64(f.Index), q.ID}] = q.Count
			}
		}
		return m
	}
	got, had, want := paths(p), paths(base), paths(all)
	newWant := 0
	for k := range want {
		if _, ok := had[k]; !ok {
			newWant++
			if got[k] != want[k] {
				t.Fatalf("function %d path %d: uncovered by the base, counted %d, SBL %d", k[0], k[1], got[k], want[k])
			}
		}
	}
	for k, n := range got {
		if want[k] != n {
			t.Fatalf("function %d path %d: counted %d, SBL %d", k[0], k[1], n, want[k])
		}
	}
	if u := p.UncoveredFrom; u == nil || len(u.NewPaths) != newWant || p.Complete {
		t.Fatalf("uncovered_from %+v, complete %v; want %d new paths, incomplete", u, p.Complete, newWant)
	}
	for _, np := range p.UncoveredFrom.NewPaths {
		if _, ok := had[np]; ok {
			t.Fatalf("path %v listed as new, but the base has it", np)
		}
	}
	// A function whose every path the base covered has no probes.
	perFunc := map[uint64]int64{}
	for k := range had {
		perFunc[k[0]]++
	}
	for _, f := range pr.cs.Copy[0].Funcs {
		if f.Num != nil && f.Num.Paths() > 0 && perFunc[uint64(f.Index)] == f.Num.Paths() && f.Placement != nil {
			t.Fatalf("function %d: the base covered its %d paths, yet it has probes", f.Index, f.Num.Paths())
		}
	}
}
