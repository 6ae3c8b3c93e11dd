package numbering

import (
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
)

type gedge struct{ from, to int32 }

// randGraph makes a random control-flow graph with loops, self loops,
// parallel edges and dead ends: node 0 is the entry, with one edge to node
// 2, and node 1 the exit.
func randGraph(r *rand.Rand, maxNodes int) (int, []gedge) {
	nn := 3 + r.IntN(maxNodes-2)
	edges := []gedge{{cfg.Entry, 2}}
	for v := 3; v < nn; v++ {
		edges = append(edges, gedge{int32(2 + r.IntN(v-2)), int32(v)})
	}
	for range r.IntN(2 * nn) {
		from := int32(2 + r.IntN(nn-2))
		to := int32(1 + r.IntN(nn-1))
		edges = append(edges, gedge{from, to})
	}
	edges = append(edges, gedge{int32(2 + r.IntN(nn-2)), cfg.Exit})
	r.Shuffle(len(edges)-1, func(i, j int) { edges[i+1], edges[j+1] = edges[j+1], edges[i+1] })
	return nn, edges
}

// dagOf builds the Ball-Larus DAG of a graph the way the cfg package does:
// back edges found by a depth-first search from the entry, then one dummy
// edge v->exit per back-edge source and entry->w per back-edge target.
func dagOf(nn int, edges []gedge) (*cfg.DAG, []bool) {
	out := outEdges(nn, edges)
	back := make([]bool, len(edges))
	state := make([]uint8, nn) // 0 new, 1 on the stack, 2 done
	var dfs func(v int32)
	dfs = func(v int32) {
		state[v] = 1
		for _, e := range out[v] {
			switch w := edges[e].to; state[w] {
			case 0:
				dfs(w)
			case 1:
				back[e] = true
			}
		}
		state[v] = 2
	}
	dfs(cfg.Entry)
	var de []cfg.DAGEdge
	for i, e := range edges {
		if !back[i] {
			de = append(de, cfg.DAGEdge{From: e.from, To: e.to, Kind: cfg.EdgeBr, Orig: int32(i)})
		}
	}
	// The dummy exit edges, then the dummy entry edges, one per back-edge
	// source and target.
	for _, kind := range []cfg.EdgeKind{cfg.EdgeDummyExit, cfg.EdgeDummyEntry} {
		at := map[int32]int{}
		for i, e := range edges {
			if !back[i] {
				continue
			}
			dummy, v := cfg.DAGEdge{From: e.from, To: cfg.Exit, Kind: kind, Orig: -1}, e.from
			if kind == cfg.EdgeDummyEntry {
				dummy.From, dummy.To, v = cfg.Entry, e.to, e.to
			}
			if _, ok := at[v]; !ok {
				at[v] = len(de)
				de = append(de, dummy)
			}
			de[at[v]].Back = append(de[at[v]].Back, int32(i))
		}
	}
	return mkDAG(nn, de), back
}

// outEdges lists each node's out edges.
func outEdges(nn int, edges []gedge) [][]int32 {
	out := make([][]int32, nn)
	for i, e := range edges {
		out[e.from] = append(out[e.from], int32(i))
	}
	return out
}

// walk is what a random walk over a graph's edges needs beside its DAG and
// plan: each node's out edges, and for each Graph edge the DAG edge behind
// it or, for a back edge, the dummy exit and entry edges behind it.
type walk struct {
	out                      [][]int32
	dagEdge, exitOf, entryOf []int32
	probes                   map[int32][]Op // the plan's probes by Graph edge
}

func newWalk(nn int, edges []gedge, d *cfg.DAG, plan *Placement) *walk {
	w := &walk{
		out:     outEdges(nn, edges),
		dagEdge: make([]int32, len(edges)),
		exitOf:  make([]int32, len(edges)),
		entryOf: make([]int32, len(edges)),
		probes:  map[int32][]Op{},
	}
	for i, e := range d.Edges {
		switch e.Kind {
		case cfg.EdgeDummyExit:
			for _, g := range e.Back {
				w.exitOf[g] = int32(i)
			}
		case cfg.EdgeDummyEntry:
			for _, g := range e.Back {
				w.entryOf[g] = int32(i)
			}
		default:
			w.dagEdge[e.Orig] = int32(i)
		}
	}
	for _, p := range plan.Probes {
		w.probes[p.Edge] = append(w.probes[p.Edge], p.Op)
	}
	return w
}

// TestGraphWalks runs the plan's Graph-edge probes along random executions
// of random graphs with loops, as an instrumented function would, and
// compares the counters with the ids of the acyclic paths the executions
// are made of.
func TestGraphWalks(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	iters := iterations(2000)
	var walks, counted, traps, loops int
	for range iters {
		nn, edges := randGraph(r, 10)
		d, back := dagOf(nn, edges)
		n, err := Number(d)
		if err != nil {
			t.Fatal(err)
		}
		inc, err := Chords(d, n, randWeights(r, d))
		if err != nil {
			t.Fatal(err)
		}
		opt := PlaceOptions{NoCountFolding: r.IntN(3) == 0}
		plan, err := Place(d, n, inc, opt)
		if err != nil {
			t.Fatal(err)
		}
		checkDAG(t, d, nil, r.Uint64())

		w := newWalk(nn, edges, d, plan)

		for range 20 {
			want := map[int64]int{}
			got := map[int64]int{}
			reg := int64(r.Uint64())
			seg := int64(0)
			v := int32(cfg.Entry)
			ok, taken := true, 0
			for step := 0; v != cfg.Exit; step++ {
				if step > 400 {
					ok = false // the walk is stuck in a loop with no way out
					break
				}
				choice := w.out[v]
				if step > 100 {
					// Head for the exit: prefer forward edges that can
					// still reach it.
					var fwd []int32
					for _, g := range choice {
						if !back[g] && n.NumPaths[edges[g].to] > 0 {
							fwd = append(fwd, g)
						}
					}
					if len(fwd) > 0 {
						choice = fwd
					}
				}
				if len(choice) == 0 {
					traps++
					break // a trap: the current path is not counted
				}
				g := choice[r.IntN(len(choice))]
				for _, op := range w.probes[g] {
					if c, ok := runOp(op, &reg); ok {
						got[c]++
					}
				}
				if back[g] {
					want[seg+n.Val[w.exitOf[g]]]++
					seg = n.Val[w.entryOf[g]]
					taken++
				} else {
					seg += n.Val[w.dagEdge[g]]
					if edges[g].to == cfg.Exit {
						want[seg]++
					}
				}
				v = edges[g].to
			}
			if !ok {
				continue
			}
			walks++
			loops += taken
			for _, c := range want {
				counted += c
			}
			if !maps.Equal(got, want) {
				t.Fatalf("walk counted %v, want %v\nprobes %v", got, want, plan.Probes)
			}
		}
	}
	if walks < iters*10 || loops < walks || traps == 0 {
		t.Fatalf("%d walks, %d back edges taken, %d traps", walks, loops, traps)
	}
	t.Logf("%d walks, %d paths counted, %d back edges taken, %d traps", walks, counted, loops, traps)
}
