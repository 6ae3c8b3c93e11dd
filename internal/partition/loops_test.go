package partition

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/dagtest"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// TestFlowOfCutDAGs: the control flow rebuilt from a DAG and its edge
// weights (flowOf), cut at random vertices or not at all, has the Graph's
// edges, its back edges and natural loops, and, where the dummy edges'
// sums determine them, every edge's runs of random walks through the
// Graph. Loops whose headers a cut makes the targets of dummy edges only
// are found as any other.
func TestFlowOfCutDAGs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 32))
	var loops, cutLoops, determined, tried, cuts, heavyCut, lighter int
	for tried < 300 {
		// Every third body starts with 19 if/else: over
		// numbering.LoopCutPaths paths, so NumberCut cuts it at its
		// loop headers.
		many := tried%3 == 2
		body := manyPathsBody(r, 14, many)
		g, err := cfg.BuildBody(&wasm.Code{Body: body, ExprOff: 3}, cfg.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(g.BackEdges()) == 0 {
			continue
		}
		runs, ok := walkRuns(g, r)
		if !ok {
			continue
		}
		d := g.DAG()
		if many {
			if d, _, _, err = numbering.NumberCut(g, numbering.MaxPaths); err != nil {
				t.Fatal(err)
			}
		} else if tried%3 == 1 {
			// A limit too low for any cut fails: cuts cannot split
			// the paths between two cut vertices.
			cr, err := numbering.CutTo(d, int64(2+r.IntN(12)))
			if err != nil {
				continue
			}
			d = cr.DAG
			cuts += len(cr.Vertices)
		}
		tried++
		w := make([]float64, len(d.Edges))
		for i, e := range d.Edges {
			if e.Orig >= 0 {
				w[i] = runs[e.Orig]
				continue
			}
			for _, b := range e.Back {
				w[i] += runs[b]
			}
		}
		f := flowOf(d, w)
		if len(f.edges) != len(g.Edges) {
			t.Fatalf("%d flow edges for %d Graph edges", len(f.edges), len(g.Edges))
		}
		for _, e := range f.edges {
			ge := g.Edges[e.orig]
			if e.from != ge.From || e.to != ge.To || e.back != ge.Back {
				t.Fatalf("flow edge %+v, Graph edge %d: %d->%d back %v", e, e.orig, ge.From, ge.To, ge.Back)
			}
			if f.determined && math.Abs(e.runs-runs[e.orig]) > 1e-9 {
				t.Fatalf("edge %d ran %v times, flow says %v", e.orig, runs[e.orig], e.runs)
			}
		}
		if f.determined {
			determined++
		}
		// heavyLoops prices the loops by those runs: entries are the
		// runs into the header from outside, iterations all of them.
		for _, l := range heavyLoops(allLoops(d, w), func(int32) bool { return true }) {
			var entries, iterate float64
			for _, e := range g.Blocks[l.header].In {
				iterate += runs[e]
				if !g.Edges[e].Back {
					entries += runs[e]
				}
			}
			if f.determined && (l.entries != entries || l.iterate != iterate) {
				t.Fatalf("loop at %d: %v entries and %v iterations, want %v and %v", l.header, l.entries, l.iterate, entries, iterate)
			}
			// Its nest's iterations: those of every header in its
			// natural loop whose back edges ran.
			var latches []int32
			for _, e := range g.Blocks[l.header].In {
				if g.Edges[e].Back {
					latches = append(latches, g.Edges[e].From)
				}
			}
			var nested float64
			for v, in := range naturalLoop(g, l.header, latches) {
				var all, backs float64
				for _, e := range g.Blocks[v].In {
					all += runs[e]
					if g.Edges[e].Back {
						backs += runs[e]
					}
				}
				if in && backs > 0 {
					nested += all
				}
			}
			if f.determined && math.Abs(l.nested-nested) > 1e-9*nested {
				t.Fatalf("loop at %d: its nest runs %v iterations, want %v", l.header, l.nested, nested)
			}
			// A copy without slot 0 pays the tails of the paths
			// that leave the loop, part of what slot 0 pays.
			if l.tails < 0 || l.tails > l.outside+1e-6 {
				t.Fatalf("loop at %d: tails %v, outside %v", l.header, l.tails, l.outside)
			}
			if l.tails < l.outside {
				lighter++
			}
			if !slices.ContainsFunc(d.In[l.header], func(e int32) bool { return d.Edges[e].Orig >= 0 }) {
				heavyCut++
			}
		}
		for _, h := range g.Loops() {
			var latches []int32
			cut := true
			for _, e := range g.Blocks[h].In {
				if ge := g.Edges[e]; ge.Back {
					latches = append(latches, ge.From)
				}
			}
			for _, e := range d.In[h] {
				if d.Edges[e].Orig >= 0 {
					cut = false
				}
			}
			loops++
			if cut && slices.ContainsFunc(g.Blocks[h].In, func(e int32) bool { return !g.Edges[e].Back }) {
				cutLoops++
			}
			got := f.region(h, latches)
			want := naturalLoop(g, h, latches)
			if !slices.Equal(got, want) {
				t.Fatalf("loop at %d: region %v, want %v", h, got, want)
			}
		}
	}
	t.Logf("%d loops, %d with their headers cut (%d cuts, %d such loops priced, %d with tails lighter than the code around them); %d of %d graphs' runs determined", loops, cutLoops, cuts, heavyCut, lighter, determined, tried)
	if cutLoops < 50 || heavyCut < 20 || lighter < 20 || determined < tried/2 {
		t.Fatalf("%d loops, %d with their headers cut (%d cuts); %d of %d graphs' runs determined", loops, cutLoops, cuts, determined, tried)
	}
}

// manyPathsBody is a random body (randBody's), after 19 if/else when
// many is set.
func manyPathsBody(r *rand.Rand, size int, many bool) []byte {
	g := &bodyGen{r: r, size: size}
	g.a.B = []byte{1, 1, 0x7F} // one i32 local
	for range 19 {
		if !many {
			break
		}
		g.a.Idx(wasm.OpLocalGet, 0).Block(wasm.OpIf).I32(1).Op(wasm.OpDrop)
		g.a.Op(wasm.OpElse).I32(2).Op(wasm.OpDrop).Op(wasm.OpEnd)
	}
	for g.size > 0 {
		g.size--
		g.stmt(0)
	}
	g.a.Op(wasm.OpEnd)
	return g.a.B
}

// walkRuns runs random walks from the entry to the exit of g and counts
// each edge's runs; false if a walk does not end.
func walkRuns(g *cfg.Graph, r *rand.Rand) ([]float64, bool) {
	runs := make([]float64, len(g.Edges))
	for range 5 {
		v := int32(cfg.Entry)
		for steps := 0; v != cfg.Exit; steps++ {
			out := g.Blocks[v].Out
			if len(out) == 0 || steps > 5000 {
				return nil, false
			}
			e := out[r.IntN(len(out))]
			runs[e]++
			v = g.Edges[e].To
		}
	}
	return runs, true
}

// naturalLoop is the loop of header h by its definition: h and every
// block from which a latch is reached without passing h.
func naturalLoop(g *cfg.Graph, h int32, latches []int32) []bool {
	in := make([]bool, len(g.Blocks))
	in[h] = true
	for v := range g.Blocks {
		for _, l := range latches {
			if in[v] {
				break
			}
			// Depth-first from v, not through h.
			seen := make([]bool, len(g.Blocks))
			stack := []int32{int32(v)}
			seen[v] = true
			for len(stack) > 0 && !in[v] {
				x := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if x == h {
					continue // a latch that is h (a self loop) adds nothing
				}
				if x == l {
					in[v] = true
					break
				}
				for _, e := range g.Blocks[x].Out {
					if y := g.Edges[e].To; !seen[y] {
						seen[y] = true
						stack = append(stack, y)
					}
				}
			}
		}
	}
	return in
}

// TestCompilePrice: the replicas of a shared loop cost nothing to compile
// while the unrolled function stays within compileKnee, and beyond it a
// price that grows with the square of its size, counted from the knee or
// from the function's own size, whichever is larger.
func TestCompilePrice(t *testing.T) {
	if p := compilePrice(1000, 10, 1000, 4); p != 0 {
		t.Fatalf("a function of 4 KB unrolled costs %d", p)
	}
	if p := compilePrice(1000, 0, compileKnee-1000, 2); p != 0 {
		t.Fatalf("a function unrolled to the knee costs %d", p)
	}
	last := int64(0)
	for g := 2; g <= 8; g++ {
		p := compilePrice(8<<10, 300, 8<<10, g)
		grown := float64(8<<10 + 300*probeBytes + (g-1)*(8<<10))
		want := compileHits * (grown*grown - float64(compileKnee)*float64(compileKnee))
		if grown <= compileKnee {
			want = 0
		}
		if math.Abs(float64(p)-want) > 1 || p < last {
			t.Fatalf("g = %d: price %d, want %.0f (g-1: %d)", g, p, want, last)
		}
		last = p
	}
	// Past the knee already, only the growth is priced.
	big := int64(40 << 10)
	if p, want := compilePrice(big, 0, 1<<10, 2), compileHits*(float64(big+1<<10)*float64(big+1<<10)-float64(big)*float64(big)); math.Abs(float64(p)-want) > 1 {
		t.Fatalf("a big function's price %d, want %.0f", p, want)
	}
}

// TestLoopSlicesPricedByCompilation: a loop whose replicas take its
// function past compileKnee is not hedged by an estimate, whose loads
// cannot pay for their compilation, and a small one is; planned by a
// profile, the same loop is shared out when what it saves the slowest
// copy outweighs the replicas' compilation, and not when it does not.
func TestLoopSlicesPricedByCompilation(t *testing.T) {
	m, graphs, ws := calledOnceLoop(t)
	share := func(int, int32) bool { return true }
	small := func(int, int32) int { return 16 }
	large := func(def int, h int32) int {
		if def == 0 {
			return compileKnee
		}
		return 16
	}
	plan := func(opt Options) FuncInfo {
		t.Helper()
		p, err := Make(m, graphs, profile.P3, 4, opt)
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, m, graphs, p, opt.Weights)
		return p.Funcs[0]
	}
	if f := plan(Options{Weights: ws, Guessed: true, ShareLoop: share, LoopBytes: small}); f.Slices != 4 || f.Loop == 0 {
		t.Fatalf("a small loop is not hedged: slices %d, loop %d", f.Slices, f.Loop)
	}
	if f := plan(Options{Weights: ws, Guessed: true, ShareLoop: share, LoopBytes: large}); f.Slices != 0 {
		t.Fatalf("a loop whose replicas pass the knee is hedged in %d slots", f.Slices)
	}
	if f := plan(Options{Weights: ws, ShareLoop: share, LoopBytes: small}); f.Slices < 2 || f.Loop == 0 {
		t.Fatalf("planned by a profile, a small loop is not shared out: slices %d, loop %d", f.Slices, f.Loop)
	}
	if f := plan(Options{Weights: ws, ShareLoop: share, LoopBytes: large}); f.Slices != 0 {
		t.Fatalf("planned by a profile, a loop whose gain does not pay its compilation is shared out in %d slots", f.Slices)
	}
	// Called once still, but its loop iterated a thousand times as
	// often: the gain pays.
	d, w := graphs[0], ws[0]
	clear(w)
	paths, _ := dagtest.Paths(d, cfg.Entry, 200)
	var fromEntry float64
	for _, p := range paths {
		if d.Edges[p[0]].Kind != cfg.EdgeDummyEntry {
			fromEntry++
		}
	}
	for _, p := range paths {
		n := 1 / fromEntry
		if d.Edges[p[0]].Kind == cfg.EdgeDummyEntry {
			n = 1e6
		}
		for _, e := range p {
			w[e] += n
		}
	}
	if f := plan(Options{Weights: ws, ShareLoop: share, LoopBytes: large}); f.Slices < 2 || f.Loop == 0 {
		t.Fatalf("planned by a long run's profile, the loop is not shared out: slices %d, loop %d", f.Slices, f.Loop)
	}
}

// TestSpreads: a loop's slots are dealt out by a test only in a plan made
// from a profile, where each iteration runs spreadWork probes per slot or
// more and each entry spreadBlocks blocks of g iterations, and then every
// slot pays one hit per iteration for it.
func TestSpreads(t *testing.T) {
	l := &loopCost{header: 2, inside: 64 * 1000, outside: 10, tails: 5, entries: 1, iterate: 1000}
	for g := 2; g <= 8; g++ {
		want := 64 >= spreadWork*g
		if got := l.spreads(g, false); got != want {
			t.Errorf("g = %d: spreads %v, want %v", g, got, want)
		}
		if l.spreads(g, true) {
			t.Errorf("g = %d: an estimate's plan spreads", g)
		}
		few := *l
		few.entries = l.iterate / (spreadBlocks*float64(g) - 1)
		if few.spreads(g, false) {
			t.Errorf("g = %d: a loop of %.0f iterations per entry spreads", g, few.perEntry())
		}
		ring, spread := l.slotCosts(64000+10, g, false), l.slotCosts(64000+10, g, true)
		for j := range ring {
			if spread[j]-ring[j] != 1000 {
				t.Errorf("g = %d slot %d: the test costs %d, want 1000", g, j, spread[j]-ring[j])
			}
		}
	}
}
