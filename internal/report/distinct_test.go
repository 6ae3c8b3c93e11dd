package report

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
	"github.com/pathprof/pathprof/profile"
)

// maxPathsPerFunc bounds the paths taken of one function, spread over its
// ids, so that functions of astronomically many paths stay testable.
const maxPathsPerFunc = 300

// everyPath returns a profile of module b holding every path of every
// function (up to maxPathsPerFunc each), as the instrumenter numbers them,
// each run once: a superset of any profile of the module.
func everyPath(t *testing.T, b []byte, m *wasm.Module) *profile.Profile {
	t.Helper()
	sum := sha256.Sum256(b)
	p := &profile.Profile{Format: profile.Format, Version: profile.Version, Strategy: profile.SBL, Copies: 1, Complete: true,
		Module: profile.Module{Path: "m.wasm", SHA256: hex.EncodeToString(sum[:]), Size: len(b), CodeOffset: m.CodePayloadOff}}
	kinds := map[numbering.PathKind]string{numbering.EntryToExit: profile.KindEntryExit, numbering.EntryToBack: profile.KindEntryBack,
		numbering.BackToBack: profile.KindBackBack, numbering.BackToExit: profile.KindBackExit}
	opt := cfg.Options{NoReturn: cfg.NoReturnImports(m, cfg.ProcExit)}
	for def := range m.Code {
		idx := m.NumImportedFuncs + uint32(def)
		nf, err := numbering.NumberFunction(m, def, opt)
		if err != nil {
			p.Functions = append(p.Functions, profile.Function{Index: idx, Status: profile.Skipped(err.Error()), PossiblePaths: "0", Paths: []profile.Path{}})
			continue
		}
		n := uint64(nf.Num.Paths())
		f := profile.Function{Index: idx, Status: profile.StatusProfiled, PossiblePaths: strconv.FormatUint(n, 10), Paths: []profile.Path{}}
		take := min(n, maxPathsPerFunc)
		for i := range take {
			id := i * (n / take)
			edges, kind, err := numbering.Regenerate(nf.Num, nf.DAG, id)
			if err != nil {
				t.Fatalf("function %d path %d: %v", idx, id, err)
			}
			path := profile.Path{ID: id, Count: 1, Kind: kinds[kind]}
			for _, e := range edges {
				if to := nf.DAG.Edges[e].To; to != cfg.Exit {
					path.Blocks = append(path.Blocks, nf.Off+int(nf.Graph.Blocks[to].Start))
				}
			}
			f.Paths = append(f.Paths, path)
		}
		p.Functions = append(p.Functions, f)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPathsPrintApart checks, on every path of every C test program (both
// lists), that no two paths of a function print alike (the same kind and
// the same blocks as the text report lists them), and that on a random
// half of them each path prints as it did among all. A path's label then
// depends on the module alone, so no profile of these programs, whichever
// paths it holds, has two paths of a function that print alike.
func TestPathsPrintApart(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 7))
	offsets := 0
	for _, prog := range append(testprogs.CPrograms(t), testprogs.CProgramsIn(t, "programs-O0.txt")...) {
		b, m := wasmtest.DecodeFile(t, prog.Wasm)
		all := everyPath(t, b, m)
		half := *all
		half.Functions = nil
		for _, f := range all.Functions {
			var kept []profile.Path
			for _, p := range f.Paths {
				if rng.IntN(2) == 0 {
					kept = append(kept, p)
				}
			}
			f.Paths = append([]profile.Path{}, kept...)
			half.Functions = append(half.Functions, f)
		}
		labels := map[[2]uint64]string{} // by function and path id, in all
		for _, p := range []*profile.Profile{all, &half} {
			r := build(t, p, Options{Module: b})
			for _, w := range r.Warnings {
				t.Errorf("%s: %s", prog.Name, w)
			}
			for _, f := range r.Functions {
				seen := map[string]uint64{}
				for _, p := range f.Paths {
					if p.Label != blockList(p.Blocks, 0, 0) || strings.Contains(p.Label, "\n") {
						t.Errorf("%s %s path %d: label %q", prog.Name, f.Name, p.ID, p.Label)
					}
					// A path reads the same whatever other paths ran.
					k := [2]uint64{uint64(f.Index), p.ID}
					if l, ok := labels[k]; ok && l != p.Label {
						t.Errorf("%s %s path %d: %q among every path, %q among half", prog.Name, f.Name, p.ID, l, p.Label)
					}
					labels[k] = p.Label
					key := p.Kind + " " + p.Label
					if id, ok := seen[key]; ok {
						t.Errorf("%s %s: paths %d and %d both print %s", prog.Name, f.Name, id, p.ID, key)
					}
					seen[key] = p.ID
					for _, b := range p.Blocks {
						if strings.Contains(b.At, "(+0x") {
							offsets++
						}
					}
				}
			}
		}
	}
	t.Logf("%d blocks shown with offsets", offsets)
	if offsets == 0 {
		t.Error("no block needed its offset: the test checks too little")
	}
}

// TestTwinPaths checks that two paths through the same blocks, which only
// parallel edges could make, print with their ids.
func TestTwinPaths(t *testing.T) {
	c := loadProg(t, "calc")
	p := c.header()
	gcd, _ := c.fn(t, "fn_gcd")
	gb := c.blocks(t, "fn_gcd")
	p.Functions = []profile.Function{{Index: gcd, Status: "profiled", PossiblePaths: "9", Paths: []profile.Path{
		{ID: 2, Count: 5, Kind: profile.KindEntryExit, Blocks: gb[:2]},
		{ID: 3, Count: 4, Kind: profile.KindEntryExit, Blocks: gb[:2]},
		{ID: 4, Count: 3, Kind: profile.KindEntryBack, Blocks: gb[:2]},
	}}}
	r := build(t, p, Options{Module: c.bytes})
	ps := r.Functions[0].Paths
	same := blockList(ps[0].Blocks, 0, 0)
	if ps[0].Label != same+" (path 2)" || ps[1].Label != same+" (path 3)" || ps[2].Label != same {
		t.Errorf("labels %q, %q, %q", ps[0].Label, ps[1].Label, ps[2].Label)
	}
	if out := text(t, r); !strings.Contains(out, same+" (path 3)\n") {
		t.Errorf("the text report lacks path 3's id:\n%s", out)
	}
}
