package numbering

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/dagtest"
)

// loopsDAG is the DAG of a long function made of while loops in sequence,
// each with a random acyclic body, early returns and traps: about nn nodes,
// and few enough paths to number without cutting.
func loopsDAG(r *rand.Rand, nn int) *cfg.DAG {
	var edges []cfg.DAGEdge
	next := int32(2)
	node := func() int32 { next++; return next - 1 }
	add := func(a, b int32, k cfg.EdgeKind) {
		edges = append(edges, cfg.DAGEdge{From: a, To: b, Kind: k, Orig: int32(len(edges))})
	}
	h := node()
	add(cfg.Entry, h, cfg.EdgeEntry)
	back := int32(1 << 20)
	for int(next) < nn {
		body := make([]int32, 3+r.IntN(8))
		for i := range body {
			body[i] = node()
		}
		latch := node()
		body = append(body, latch)
		add(h, body[0], cfg.EdgeBrIfNot)
		for i, b := range body[:len(body)-1] {
			add(b, body[i+1], cfg.EdgeFallthrough)
			if r.IntN(2) == 0 {
				add(b, body[min(i+2+r.IntN(3), len(body)-1)], cfg.EdgeBrIfTaken)
			}
			switch r.IntN(40) {
			case 0:
				add(b, cfg.Exit, cfg.EdgeReturn)
			case 1:
				add(b, node(), cfg.EdgeBrIfTaken) // a block ending in unreachable
			}
		}
		edges = append(edges,
			cfg.DAGEdge{From: latch, To: cfg.Exit, Kind: cfg.EdgeDummyExit, Orig: -1, Back: []int32{back}},
			cfg.DAGEdge{From: cfg.Entry, To: h, Kind: cfg.EdgeDummyEntry, Orig: -1, Back: []int32{back}})
		back++
		nh := node()
		add(h, nh, cfg.EdgeBrIfTaken)
		h = nh
	}
	add(h, cfg.Exit, cfg.EdgeReturn)
	// Graph edge indices are dense: number the back edges after the
	// others.
	real := int32(len(edges))
	for i := range edges {
		if edges[i].Orig < 0 {
			edges[i].Back[0] -= 1<<20 - real
		}
	}
	return mkDAG(int(next), edges)
}

// localDAG has random short forward edges: its paths overflow quickly, so
// it must be cut.
func localDAG(r *rand.Rand, nn int) *cfg.DAG {
	var edges []cfg.DAGEdge
	add := func(a, b int32) {
		edges = append(edges, cfg.DAGEdge{From: a, To: b, Kind: cfg.EdgeBr, Orig: int32(len(edges))})
	}
	// Ranks 0..nn-1, entry first and exit last.
	label := dagtest.Ranks(nn, nil)
	add(cfg.Entry, label(1))
	for i := 1; i < nn-1; i++ {
		add(label(i), label(i+1))
		if r.IntN(3) == 0 {
			add(label(i), label(min(i+2+r.IntN(4), nn-1)))
		}
	}
	return mkDAG(nn, edges)
}

func BenchmarkNumber(b *testing.B) {
	for _, size := range []int{5000, 50000, 500000} {
		d := loopsDAG(rand.New(rand.NewPCG(1, uint64(size))), size)
		n, err := Number(d)
		if err != nil {
			b.Fatal(err)
		}
		w, _ := StaticWeights(d)
		inc, err := Chords(d, n, w)
		if err != nil {
			b.Fatal(err)
		}
		perEdge := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(d.Edges)), "ns/edge")
		}
		name := fmt.Sprintf("nodes=%d", d.NumNodes)
		b.Run("Number/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Number(d); err != nil {
					b.Fatal(err)
				}
			}
			perEdge(b)
		})
		b.Run("Chords/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Chords(d, n, w); err != nil {
					b.Fatal(err)
				}
			}
			perEdge(b)
		})
		b.Run("Place/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Place(d, n, inc, PlaceOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			perEdge(b)
		})
	}
}

func BenchmarkCut(b *testing.B) {
	for _, size := range []int{5000, 50000} {
		d := localDAG(rand.New(rand.NewPCG(2, uint64(size))), size)
		b.Run(fmt.Sprintf("nodes=%d", size), func(b *testing.B) {
			var cr *CutResult
			for b.Loop() {
				var err error
				if cr, err = Cut(d); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(cr.Vertices)), "cuts")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(d.Edges)), "ns/edge")
		})
	}
}

// TestBenchGraphs keeps the benchmark graphs honest: the loops DAG numbers
// without cutting and its plan is correct on sampled paths, and the local
// DAG needs cutting.
func TestBenchGraphs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 5))
	d := loopsDAG(r, 5000)
	n, err := Number(d)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := StaticWeights(d)
	inc, _ := Chords(d, n, w)
	plan, err := Place(d, n, inc, PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2000 {
		id := r.Int64N(n.Paths())
		p, _, err := Regenerate(n, d, uint64(id))
		if err != nil {
			t.Fatal(err)
		}
		got, err := simulate(plan.Ops, p, int64(r.Uint64()), false)
		if err != nil || len(got) != 1 || got[0] != id {
			t.Fatalf("path %d counted %v, %v", id, got, err)
		}
	}
	l := localDAG(r, 2000)
	if _, err := Number(l); err == nil {
		t.Fatal("local DAG fits")
	}
	cr, err := Cut(l)
	if err != nil {
		t.Fatal(err)
	}
	checkCut(t, l, cr, MaxPaths, 50, r)
}
