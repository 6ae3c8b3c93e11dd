package profiler

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/profile"
)

// TestBuildCopy checks that the one copy exec builds from a directory is,
// byte for byte, the copy Build made and WriteDir wrote, on plans of
// every kind, and that a copy the manifest does not record is refused.
func TestBuildCopy(t *testing.T) {
	for _, name := range []string{"sort", "grid"} {
		p := cProgram(t, name)
		orig, _, freq := exactRun(t, p)
		for _, opt := range []instrument.Options{{}, {SeparateCounters: true}} {
			pbl, err := Build(orig, profile.PBL, 4, opt, partition.Options{Weights: freq})
			if err != nil {
				t.Fatal(err)
			}
			loops, _ := loopPlan(t, pbl, freq)
			plans := map[string]*Copies{"pbl": pbl}
			for label, plan := range map[string]*partition.Plan{"sliced": slicedPlan(t, pbl, freq), "loops": loops} {
				if plans[label], err = BuildPlan(orig, plan, opt); err != nil {
					t.Fatal(err)
				}
			}
			for _, w := range [][][]float64{nil, freq} {
				if plans[fmt.Sprintf("p3 weighted=%v", w != nil)], err = Build(orig, profile.P3, 4, opt, partition.Options{Weights: w}); err != nil {
					t.Fatal(err)
				}
			}
			for label, cs := range plans {
				label = fmt.Sprintf("%s %s separate=%v", name, label, opt.SeparateCounters)
				dir := t.TempDir()
				if _, err := WriteDir(dir, p.Path, orig, cs, nil, ""); err != nil {
					t.Fatal(err)
				}
				man, morig, err := ReadManifest(dir)
				if err != nil {
					t.Fatal(err)
				}
				for c := range cs.Copy {
					res, err := man.BuildCopy(dir, morig, c)
					if err != nil {
						t.Fatalf("%s: copy %d: %v", label, c, err)
					}
					written, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("copy-%d.wasm", c)))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(res.Module, cs.Copy[c].Module) || !bytes.Equal(res.Module, written) || !bytes.Equal(res.Counters, cs.Copy[c].Counters) {
						t.Fatalf("%s: copy %d built alone differs from the copy written", label, c)
					}
				}
				if _, err := man.BuildCopy(dir, morig, len(cs.Copy)); err == nil {
					t.Errorf("%s: copy %d of %d copies was built", label, len(cs.Copy), len(cs.Copy))
				}
				man.CopySHA256[1] = strings.Repeat("0", 64)
				if _, err := man.BuildCopy(dir, morig, 1); err == nil || !strings.Contains(err.Error(), "differs") {
					t.Errorf("%s: a copy the manifest does not record: %v", label, err)
				}
				if _, err := man.BuildCopy(dir, morig, 0); err != nil {
					t.Errorf("%s: copy 0, whose digest is right: %v", label, err)
				}
			}
		}
	}
}

// TestReadManifestBuildsNothing checks that ReadManifest reads a
// directory whose plan no longer fits its module, which only building a
// copy finds.
func TestReadManifestBuildsNothing(t *testing.T) {
	p := cProgram(t, "sort")
	orig := readModule(t, p)
	cs, err := Build(orig, profile.P3, 2, instrument.Options{}, partition.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	man, err := WriteDir(dir, p.Path, orig, cs, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	man.Plan.Funcs = man.Plan.Funcs[:len(man.Plan.Funcs)-1]
	if err := WriteManifest(dir, man); err != nil {
		t.Fatal(err)
	}
	rman, rorig, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rman.BuildCopy(dir, rorig, 0); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("building a copy of a plan that does not fit: %v", err)
	}
}

// TestWriteDirManifestLast checks that writing copies over a directory
// removes its manifest before anything else: a write that fails half way
// leaves no manifest that names copies it replaced.
func TestWriteDirManifestLast(t *testing.T) {
	p := cProgram(t, "sort")
	orig := readModule(t, p)
	dir := t.TempDir()
	for _, k := range []int{2, 3} {
		cs, err := Build(orig, profile.PBL, k, instrument.Options{}, partition.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if k == 3 {
			// copy-2.wasm cannot be renamed over a directory.
			if err := os.MkdirAll(filepath.Join(dir, "copy-2.wasm", "x"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		_, err = WriteDir(dir, p.Path, orig, cs, nil, "")
		if k == 2 && err != nil {
			t.Fatal(err)
		}
		if k == 3 && err == nil {
			t.Fatal("the write over a directory succeeded")
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); !os.IsNotExist(err) {
		t.Fatalf("a manifest is left after a failed write: %v", err)
	}
	if _, _, err := ReadManifest(dir); err == nil {
		t.Fatal("the directory of a failed write reads")
	}
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("a temporary file is left: %s", e.Name())
		}
	}
}
