// Planning a function of OSP's sampling copy: packed path values that
// count a path's blocks too, probes kept off threaded jumps, and which
// path ends have no blocks to report.

package instrument

import (
	"fmt"
	"math"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/wasm"
)

// planSegments adds the scratch locals of a Segments function, builds its
// graph and chooses its probes.
func planSegments(m *wasm.Module, def int, f *segFunc, cfgOpt cfg.Options) error {
	// Besides the path register, a saved branch condition and a saved
	// br_table index: the packed value of an ending path and an i32 for
	// End's own use (EndSite.P and P+1).
	ft, locals, err := f.prepare(m, def, 2, wasm.LocalDecl{Count: 1, Type: wasm.ValI64}, wasm.LocalDecl{Count: 1, Type: wasm.ValI32})
	if err != nil {
		return err
	}
	f.results, f.returnBlock = ft.Results, -1
	if len(ft.Results) > 0 {
		f.returnBlock = int64(m.AddType(wasm.FuncType{Params: ft.Results, Results: ft.Results}))
	}
	f.p, f.params, f.decls = f.idx+1, ft.Params, locals
	c := &m.Code[def]
	if err := f.number(c, cfgOpt, 1<<IDBits); err != nil {
		return err
	}
	err = placeSegments(f)
	if cfgOpt.Thread && (err != nil || !f.threadsKept()) {
		// Threaded jumps need the dispatch's arms free of probes; where the
		// numbering could not leave them so, the jumps end paths again.
		cfgOpt.Thread = false
		if err := f.number(c, cfgOpt, 1<<IDBits); err != nil {
			return err
		}
		err = placeSegments(f)
	}
	return err
}

// placeSegments chooses the probes of a Segments function: Ball-Larus ids
// above the low CountBits bits of each DAG edge's value and, in them, one
// for each edge that enters a block (not a call's continuation, not the
// exit), so that a path's sum also counts its block entries.
func placeSegments(f *segFunc) error {
	d, n := f.DAG, f.Num
	most := mostBlocks(f.Graph, d)
	for _, b := range most {
		if b >= 1<<CountBits {
			return skipError(fmt.Sprintf("a path of %d blocks or more", 1<<CountBits))
		}
	}
	packed := &numbering.Numbering{NumPaths: n.NumPaths, Val: make([]int64, len(d.Edges))}
	for i, e := range d.Edges {
		v := n.Val[i] << CountBits
		if e.To != cfg.Exit && !f.Graph.Blocks[e.To].Cont {
			v++
		}
		packed.Val[i] = v
	}
	w, err := numbering.StaticWeights(d)
	if err != nil {
		return err
	}
	fixed := threadFixed(f.Graph, d)
	for i, x := range fixed {
		if x {
			w[i] = math.Inf(1)
		}
	}
	inc, err := numbering.Chords(d, packed, w)
	if err != nil {
		return err
	}
	// Paths end where they end, so a path cut short by a trap is not
	// reported.
	plan, err := numbering.Place(d, packed, inc, numbering.PlaceOptions{NoCountFolding: true, Fixed: fixed})
	if err != nil {
		return err
	}
	f.Mode = Mode{Kind: partition.BallLarus}
	f.setPlacement(plan)
	f.emptyEnd = emptyEnds(f.Graph, d, most)
	return nil
}

// threadsKept reports whether the probes of a function built with
// cfg.Options.Thread leave its threaded jumps alone: no code on an
// EdgeThread edge, nor on the header's arm to the same target, which
// jumps of both kinds take, and no threaded edge cut.
func (f *Func) threadsKept() bool {
	for i, shared := range sharedArms(f.Graph) {
		if shared && (f.Graph.Edges[i].Back || len(f.ops[i]) > 0) {
			return false
		}
	}
	return true
}

// sharedArms marks the Graph edges that threaded jumps take through a
// dispatch header (cfg.Options.Thread): the EdgeThread edges and the
// header's own arms to the same targets, which jumps that end there take
// too. It returns nil when there are none.
func sharedArms(g *cfg.Graph) []bool {
	var shared []bool
	for i, e := range g.Edges {
		if e.Kind != cfg.EdgeThread {
			continue
		}
		if shared == nil {
			shared = make([]bool, len(g.Edges))
		}
		shared[i] = true
		for _, a := range g.Blocks[g.Blocks[e.From].Same].Out {
			if g.Edges[a].To == e.To {
				shared[a] = true
			}
		}
	}
	return shared
}

// threadFixed marks the DAG edges that are shared arms, or returns nil
// when there are none. They must get no probes: they weigh the most, so
// that the spanning tree holds them, and Place keeps operations off them.
func threadFixed(g *cfg.Graph, d *cfg.DAG) []bool {
	shared := sharedArms(g)
	if shared == nil {
		return nil
	}
	fixed := make([]bool, len(d.Edges))
	for i, e := range d.Edges {
		fixed[i] = e.Orig >= 0 && shared[e.Orig]
	}
	return fixed
}

// mostBlocks returns, by DAG node, the most blocks of a path from the
// entry to the node.
func mostBlocks(g *cfg.Graph, d *cfg.DAG) []int {
	most := make([]int, d.NumNodes)
	for _, n := range d.Topo {
		for _, ei := range d.In[n] {
			e := d.Edges[ei]
			b := most[e.From]
			if n != cfg.Exit && !g.Blocks[n].Cont {
				b++
			}
			most[n] = max(most[n], b)
		}
	}
	return most
}

// emptyEnds marks the Graph edges where every path that ends there has
// no blocks: those out of a node that no path from the entry reaches
// through a block (most from mostBlocks).
func emptyEnds(g *cfg.Graph, d *cfg.DAG, most []int) []bool {
	reached := make([]bool, d.NumNodes)
	for _, n := range d.Topo {
		reached[n] = true
	}
	empty := make([]bool, len(g.Edges))
	for i, e := range g.Edges {
		ends := e.To == cfg.Exit || e.Cuts()
		empty[i] = ends && reached[e.From] && most[e.From] == 0
	}
	return empty
}
