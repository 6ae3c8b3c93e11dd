// Local loop counters: the paths that end at the back edges of a loop
// without calls counted in i64 locals, added to memory when the loop is left.

package instrument

import (
	"slices"
	"sort"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/wasm"
)

// Local loop counters.
//
// A call into the counter module at every back edge was most of what path
// profiling cost in a tight loop: not the count itself but the call, around
// which wazero's compiler spills the loop's live values and reloads the
// memory base, even when the call sits in a branch that rarely runs. Where
// the counters live in the program's memory a count is a load, an add and
// a store instead, and a local still saves those. So the
// paths that end at the back edges of a loop without calls (a natural loop
// none of whose blocks calls, tail-calls or throws) are counted in locals of
// the function: the reverse numbering gives the paths ending at one back
// edge contiguous ids [lo, lo+n), and a br_table on id-lo picks the local to
// increment. The counters are cleared on every edge that enters the loop and
// added to their dense counters on every edge that leaves it, so a
// completed path is counted in memory before the function calls
// anything, returns or throws: before any proc_exit, whoever calls it. Only
// a trap inside such a loop loses the paths it completed since it was
// entered (besides the path the trap cuts short), and a run that traps is
// reported incomplete anyway. Go's wasm functions are one loop around a
// br_table with their calls inside, so there only inner loops qualify.

const (
	// maxSiteCounters caps one back edge's locals and maxFuncCounters a
	// function's: every counter is a value live around the loop, which
	// wazero's compiler carries through each of the loop's branches, so
	// a dozen counters already cost more than the calls they replace.
	maxSiteCounters = 8
	maxFuncCounters = 8
	// maxFlushCounters caps a function's flush code: the counters flushed
	// summed over the loop exits that flush them.
	maxFlushCounters = 512
)

// loopCounts is one function's local loop counters.
type loopCounts struct {
	// addN appends code adding local l to the dense counter at slot.
	addN  func(a *wasm.Asm, slot int64, l uint32)
	first uint32                // first new local
	total uint32                // new locals
	slot  int64                 // the function's first counter slot
	at    map[int32]*loopSite   // Graph back edge -> the site counting there
	flush map[int32][]*loopSite // Graph edge leaving a loop -> sites to flush
	// init maps each Graph edge entering a loop from outside to the sites
	// whose counters it clears: the counters then live in the loop only,
	// not from the function's start.
	init map[int32][]*loopSite
}

// loopSite is the set of paths that end at one DAG dummy exit edge.
type loopSite struct {
	lo, n int64  // reverse ids [lo, lo+n)
	local uint32 // counter of id lo; lo+j is in local+j
}

// planLoopCounts picks the back edges whose counts stay in locals, and the
// edges and calls that flush them. first is the index of the first new
// local; slot the function's first dense counter slot. It returns nil when
// no back edge qualifies.
func planLoopCounts(f *Func, first uint32, slot int64, addN func(a *wasm.Asm, slot int64, l uint32)) *loopCounts {
	g, d, plan := f.Graph, f.DAG, f.Placement
	hasBack := false
	for _, e := range g.Edges {
		if e.Back {
			hasBack = true
			break
		}
	}
	if !hasBack {
		return nil
	}
	calling := callingBlocks(g, f.scan.calls)
	lc := &loopCounts{addN: addN, first: first, slot: slot,
		at: map[int32]*loopSite{}, flush: map[int32][]*loopSite{}, init: map[int32][]*loopSite{}}
	in := make([]bool, len(g.Blocks))
	var flushCost int
	for x, de := range d.Edges {
		if de.Kind != cfg.EdgeDummyExit {
			continue
		}
		op := plan.Ops[x]
		if op.Kind != numbering.Count && op.Kind != numbering.CountConst {
			continue
		}
		lo, n := f.Rev.Range(int32(x))
		size := uint32(n)
		if n <= 0 || n > maxSiteCounters || lc.total+size > maxFuncCounters {
			continue
		}
		// Every Graph edge behind the dummy edge must be a back edge that
		// starts with the dummy edge's count.
		ok := len(de.Back) > 0
		for _, b := range de.Back {
			if !g.Edges[b].Back || len(f.ops[b]) == 0 || f.ops[b][0] != op {
				ok = false
			}
		}
		if !ok {
			continue
		}
		body := naturalLoop(g, loopBackEdges(g, de.Back), in)
		free := true
		for _, v := range body {
			free = free && !calling[v]
		}
		var exits, entries []int32
		if free {
			for _, v := range body {
				for _, e := range g.Blocks[v].Out {
					if to := g.Edges[e].To; to < 2 || !in[to] {
						exits = append(exits, e)
					}
				}
				for _, e := range g.Blocks[v].In {
					if from := g.Edges[e].From; from < 2 || !in[from] {
						entries = append(entries, e)
					}
				}
			}
		}
		for _, v := range body {
			in[v] = false
		}
		if !free || flushCost+len(exits)*int(n) > maxFlushCounters {
			continue
		}
		flushCost += len(exits) * int(n)
		st := &loopSite{lo: lo, n: n, local: lc.first + lc.total}
		lc.total += size
		for _, b := range de.Back {
			lc.at[b] = st
		}
		for _, e := range exits {
			lc.flush[e] = append(lc.flush[e], st)
		}
		for _, e := range entries {
			lc.init[e] = append(lc.init[e], st)
		}
	}
	if lc.total == 0 {
		return nil
	}
	return lc
}

// loopBackEdges returns every back edge into the targets of the given back
// edges: a loop with several latches (a continue) is one loop.
func loopBackEdges(g *cfg.Graph, back []int32) []int32 {
	var out []int32
	for _, b := range back {
		h := g.Edges[b].To
		for _, e := range g.Blocks[h].In {
			if g.Edges[e].Back && !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	return out
}

// naturalLoop returns the blocks of the loop the back edges close: their
// targets, and every block that reaches one of their sources without
// passing through a target. It marks them in in, which it expects clear.
func naturalLoop(g *cfg.Graph, back []int32, in []bool) []int32 {
	var body, work []int32
	add := func(v int32) {
		if !in[v] {
			in[v] = true
			body = append(body, v)
			work = append(work, v)
		}
	}
	for _, b := range back {
		if h := g.Edges[b].To; !in[h] {
			in[h] = true
			body = append(body, h)
		}
	}
	for _, b := range back {
		add(g.Edges[b].From)
	}
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		for _, e := range g.Blocks[v].In {
			if u := g.Edges[e].From; u >= 2 {
				add(u)
			}
		}
	}
	return body
}

// counts says whether the first operation of Graph edge e is a count kept
// in locals.
func (lc *loopCounts) counts(e int32) bool { return lc != nil && lc.at[e] != nil }

// flushes says whether edge e leaves or enters a loop with local counters.
func (lc *loopCounts) flushes(e int32) bool {
	return lc != nil && e >= 0 && (len(lc.flush[e]) > 0 || len(lc.init[e]) > 0)
}

// emitCount adds one to the local of the id that op counts: a br_table on
// id-lo over one arm per id, whose default (an id outside the site's
// range: an instrumentation bug) traps.
func (lc *loopCounts) emitCount(a *wasm.Asm, e int32, op numbering.Op, reg uint32) {
	st := lc.at[e]
	inc := func(l uint32) {
		a.Idx(wasm.OpLocalGet, l).I64(1).Op(wasm.OpI64Add).Idx(wasm.OpLocalSet, l)
	}
	if st.n == 1 {
		inc(st.local)
		return
	}
	n := uint32(st.n)
	a.Block(wasm.OpBlock).Block(wasm.OpBlock)
	for range n {
		a.Block(wasm.OpBlock)
	}
	if op.Kind == numbering.Count {
		a.Idx(wasm.OpLocalGet, reg)
		if v := op.Value - st.lo; v != 0 {
			a.AddI64(v)
		}
		a.Op(wasm.OpI32Wrap)
	} else {
		a.I32(int32(op.Value - st.lo))
	}
	labels := make([]uint32, n+1) // n arms and the default
	for j := range labels {
		labels[j] = uint32(j)
	}
	a.BrTable(labels)
	for j := range n {
		a.Op(wasm.OpEnd)
		inc(st.local + j)
		a.Idx(wasm.OpBr, n-j)
	}
	a.Op(wasm.OpEnd).Op(wasm.OpUnreachable).Op(wasm.OpEnd)
}

// emitFlush adds the nonzero counters of the loops that edge e leaves to
// the counter module and clears them, and clears the counters of the loops
// it enters.
func (lc *loopCounts) emitFlush(a *wasm.Asm, e int32) {
	if !lc.flushes(e) {
		return
	}
	for _, st := range lc.flush[e] {
		for j := range uint32(st.n) {
			l := st.local + j
			a.Idx(wasm.OpLocalGet, l).Op(wasm.OpI64Eqz).Op(wasm.OpI32Eqz).Block(wasm.OpIf)
			lc.addN(a, lc.slot+st.lo+int64(j), l)
			a.Op(wasm.OpEnd)
		}
	}
	for _, st := range lc.init[e] {
		for j := range uint32(st.n) {
			a.I64(0).Idx(wasm.OpLocalSet, st.local+j)
		}
	}
}

// declare adds the counters as the function's last locals.
func (lc *loopCounts) declare(c *wasm.Code) error {
	if lc == nil {
		return nil
	}
	ls := append(append([]wasm.LocalDecl(nil), c.Locals...), wasm.LocalDecl{Count: lc.total, Type: wasm.ValI64})
	return c.SetLocals(ls)
}

// callingBlocks marks the blocks that hold one of the calls (instruction
// offsets, as scanBody lists them).
func callingBlocks(g *cfg.Graph, calls []uint32) []bool {
	order := make([]int32, 0, len(g.Blocks))
	for b := 2; b < len(g.Blocks); b++ {
		order = append(order, int32(b))
	}
	sort.Slice(order, func(i, j int) bool { return g.Blocks[order[i]].Start < g.Blocks[order[j]].Start })
	calling := make([]bool, len(g.Blocks))
	for _, off := range calls {
		i := sort.Search(len(order), func(i int) bool { return g.Blocks[order[i]].Start > off }) - 1
		if i >= 0 {
			if b := order[i]; off < g.Blocks[b].End {
				calling[b] = true
			}
		}
	}
	return calling
}
