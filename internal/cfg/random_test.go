package cfg

import (
	"math/rand/v2"
	"testing"
)

// randomGraph builds a graph of n real blocks with random edges: cycles,
// self loops, parallel edges and dead ends included.
func randomGraph(r *rand.Rand, n int) *Graph {
	g := &Graph{Blocks: make([]Block, n+2)}
	add := func(from, to int32, k EdgeKind) {
		e := int32(len(g.Edges))
		g.Edges = append(g.Edges, Edge{From: from, To: to, Kind: k})
		g.Blocks[from].Out = append(g.Blocks[from].Out, e)
		g.Blocks[to].In = append(g.Blocks[to].In, e)
	}
	add(Entry, 2, EdgeEntry)
	for v := 2; v < n+2; v++ {
		switch r.IntN(6) {
		case 0: // dead end
		case 1:
			add(int32(v), Exit, EdgeReturn)
		default:
			for k := 1 + r.IntN(3); k > 0; k-- {
				to := int32(2 + r.IntN(n))
				if r.IntN(4) == 0 {
					to = Exit
				}
				add(int32(v), to, EdgeBr)
			}
		}
	}
	g.findBackEdges()
	return g
}

// TestRandomGraphs checks the DAG construction and path counting on random
// graphs against brute-force enumeration and an acyclicity check.
func TestRandomGraphs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 3000; iter++ {
		g := randomGraph(r, 1+r.IntN(10))
		d := g.DAG()
		if err := checkTopo(g, d); err != "" {
			t.Fatalf("iteration %d: %s", iter, err)
		}
		// Every back edge is replaced by exactly one dummy pair.
		for _, be := range g.BackEdges() {
			in, out := 0, 0
			for _, e := range d.Edges {
				for _, b := range e.Back {
					if b == be {
						if e.Kind == EdgeDummyEntry {
							in++
						} else {
							out++
						}
					}
				}
			}
			if in != 1 || out != 1 {
				t.Fatalf("iteration %d: back edge %d stands in %d dummy entry and %d dummy exit edges", iter, be, in, out)
			}
		}
		n, ok := enumeratePaths(d, 1_000_000)
		if !ok {
			continue
		}
		if pc := d.NumPaths(); pc.Big != nil || pc.Small != uint64(n) {
			t.Fatalf("iteration %d: counted %s paths, enumerated %d", iter, pc, n)
		}
	}
}

// TestHugePathCounts checks exact counting past 2^64 on a chain of diamonds.
func TestHugePathCounts(t *testing.T) {
	const diamonds = 70
	g := &Graph{Blocks: make([]Block, 2)}
	node := func() int32 { g.Blocks = append(g.Blocks, Block{}); return int32(len(g.Blocks) - 1) }
	add := func(from, to int32) {
		e := int32(len(g.Edges))
		g.Edges = append(g.Edges, Edge{From: from, To: to})
		g.Blocks[from].Out = append(g.Blocks[from].Out, e)
		g.Blocks[to].In = append(g.Blocks[to].In, e)
	}
	cur := node()
	add(Entry, cur)
	for i := 0; i < diamonds; i++ {
		a, b, j := node(), node(), node()
		add(cur, a)
		add(cur, b)
		add(a, j)
		add(b, j)
		cur = j
	}
	add(cur, Exit)
	g.findBackEdges()
	pc := g.DAG().NumPaths()
	if pc.Fits63() || pc.String() != "1180591620717411303424" { // 2^70
		t.Fatalf("got %s paths (fits: %v), want 2^70", pc, pc.Fits63())
	}
}
