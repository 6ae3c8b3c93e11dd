package instrument

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
)

// TestZeroInits checks on random graphs with random probes that dropping
// the inits zeroInits drops leaves the path register's value after every
// edge of every walk from the entry (up to a length) as it was, by
// running both sets of probes along each walk.
func TestZeroInits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	dropped := 0
	for range 3000 {
		n := 2 + r.IntN(6)
		g := &cfg.Graph{Blocks: make([]cfg.Block, n+2)}
		add := func(from, to int32) {
			g.Edges = append(g.Edges, cfg.Edge{From: from, To: to, Kind: cfg.EdgeBr})
		}
		add(cfg.Entry, 2)
		for v := 2; v < n+2; v++ {
			for k := r.IntN(3); k >= 0; k-- {
				to := int32(2 + r.IntN(n))
				if r.IntN(4) == 0 {
					to = cfg.Exit
				}
				add(int32(v), to)
			}
		}
		ops := make([][]numbering.Op, len(g.Edges))
		for e := range ops {
			for k := r.IntN(3); k > 0; k-- {
				o := numbering.Op{Kind: []numbering.ProbeKind{numbering.Init, numbering.Add, numbering.Count}[r.IntN(3)]}
				if r.IntN(3) == 0 {
					o.Value = 1 + r.Int64N(5)
				}
				ops[e] = append(ops[e], o)
			}
		}
		keep := int32(r.IntN(len(g.Edges)))
		orig := make([][]numbering.Op, len(ops))
		for e := range ops {
			orig[e] = slices.Clone(ops[e])
		}
		got := zeroInits(g, ops, func(e int32) bool { return e == keep })
		for e := range ops {
			if !slices.Equal(ops[e], orig[e]) {
				t.Fatal("zeroInits changed its argument")
			}
			if len(got[e]) < len(ops[e]) {
				dropped++
				if e == int(keep) {
					t.Fatalf("edge %d, to be kept, lost a probe", e)
				}
			}
		}
		run := func(ops []numbering.Op, reg int64) int64 {
			for _, o := range ops {
				switch o.Kind {
				case numbering.Init:
					reg = o.Value
				case numbering.Add:
					reg += o.Value
				}
			}
			return reg
		}
		var walk func(b int32, a, b2 int64, depth int)
		walk = func(b int32, before, after int64, depth int) {
			if depth == 0 {
				return
			}
			for e, ed := range g.Edges {
				if ed.From != b {
					continue
				}
				x, y := run(ops[e], before), run(got[e], after)
				if x != y {
					t.Fatalf("edge %d of %v with probes %v: the register is %d, without the dropped inits (%v) %d", e, g.Edges, ops, x, got[e], y)
				}
				walk(ed.To, x, y, depth-1)
			}
		}
		walk(cfg.Entry, 0, 0, 9)
	}
	if dropped == 0 {
		t.Error("no init was dropped")
	}
}
