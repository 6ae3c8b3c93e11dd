// Local loop counters: the paths that end at the back edges of a loop
// without calls counted in i64 locals, added to memory when the loop is left.

package instrument

import (
	"math/bits"
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
// increment, or, where the loop branches inside, a shift by id-lo picks
// the bits of one local that count it (emitPacked). The counters are
// cleared on every edge that enters the loop and added to their dense
// counters on every edge that leaves it, so a
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
	// addN appends code adding local l to the dense counter at slot;
	// with addsZero, it may run for a local that is 0, which adds
	// nothing, else the flush tests the local first.
	addN     func(a *wasm.Asm, slot int64, l uint32)
	addsZero bool
	// addAll, when not nil, appends code adding every value push(j)
	// pushes to the dense counter at slots[j], zero or not: a flush in
	// one sequence, on Graph edge e.
	addAll func(a *wasm.Asm, e int32, slots []int64, push func(j int))
	first  uint32 // first new local
	total  uint32 // new locals, the counters
	tmp    uint32 // an i64 scratch local after them
	// iteration is how many counters count only iteration paths.
	iteration int
	slot      int64                 // the function's first counter slot
	at        map[int32]*loopSite   // Graph back edge -> the site counting there
	flush     map[int32][]*loopSite // Graph edge leaving a loop -> sites to flush
	// init maps each Graph edge entering a loop from outside to the sites
	// whose counters it clears: the counters then live in the loop only,
	// not from the function's start.
	init map[int32][]*loopSite
}

// loopSite is the set of paths that end at one DAG dummy exit edge, or
// only the loop's iteration paths among them.
type loopSite struct {
	lo, n  int64  // reverse ids lo + stride·j for j in [0, n)
	stride int64  // 1 when the site counts every path ending there
	local  uint32 // counter of id lo; lo+stride·j is in local+j
	// partial says that other paths end there too, counted in memory:
	// the count tests whether the id is one of the site's.
	partial bool
	// inv and rot turn id-lo into j when it is a multiple of the
	// stride (stride = odd·2^rot, inv the odd part's inverse mod 2^64),
	// and into a number of at least n otherwise.
	inv int64
	rot int64
	// width, when not 0, packs the site's n counters into the one
	// local: counter j in bits [j·width, (j+1)·width), and the sum of
	// them all from bit 64-width up (see emitPacked).
	width int64
}

// iteration makes st the site of the iteration paths of the loop whose
// back edges dummy exit edge de stands for, the paths that start at the
// loop's header where a back edge restarts them: where what runs before
// the loop has many paths, the paths ending at a back edge are many, but
// a loop body with few paths has few that start at its header, and they
// are the ones that run on every iteration but the first. In the reverse
// numbering their ids are evenly spaced: the ids of all the paths through
// the header sum a body part, a multiple of the number of paths from the
// entry to the header, and a part below that. It leaves st as it is when
// they are more than a site's counters or not evenly spaced.
func (st *loopSite) iteration(f *Func, x int32, de cfg.DAGEdge) {
	g, d := f.Graph, f.DAG
	h := g.Edges[de.Back[0]].To
	for _, b := range de.Back {
		if g.Edges[b].To != h {
			return
		}
	}
	y := int32(-1)
	for _, e := range d.Out[cfg.Entry] {
		if d.Edges[e].Kind == cfg.EdgeDummyEntry && d.Edges[e].To == h {
			y = e
		}
	}
	if y < 0 {
		return
	}
	ids, ok := f.Rev.Between(y, x, maxSiteCounters)
	if !ok || len(ids) == 0 {
		return
	}
	stride := int64(1)
	if len(ids) > 1 {
		stride = ids[1] - ids[0]
	}
	for j, id := range ids {
		if id != ids[0]+int64(j)*stride {
			return
		}
	}
	rot := int64(bits.TrailingZeros64(uint64(stride)))
	odd := uint64(stride) >> rot
	// Newton's iteration: each step doubles the bits of the inverse.
	inv := odd
	for range 5 {
		inv *= 2 - odd*inv
	}
	*st = loopSite{lo: ids[0], n: int64(len(ids)), stride: stride, partial: true, inv: int64(inv), rot: rot}
}

// planLoopCounts picks the back edges whose counts stay in locals, and the
// edges and calls that flush them. first is the index of the first new
// local; slot the function's first dense counter slot. It returns nil when
// no back edge qualifies. Where the function's counters do not suffice for
// every loop, the most deeply nested loops, which run most, get them. With
// iteration, back edges that end more paths than a site's counters get
// counters for their loop's iteration paths: worth it where the other
// count is a hashed one, not where it is a dense one, which a counter in
// a local and the test that picks it cost as much as (see
// docs/instrumentation.md).
func planLoopCounts(f *Func, first uint32, slot int64, iteration bool, addN func(a *wasm.Asm, slot int64, l uint32)) *loopCounts {
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
	in := make([]bool, len(g.Blocks))
	// depth counts the natural loops around each block.
	depth := make([]int, len(g.Blocks))
	for _, b := range g.Blocks {
		i := slices.IndexFunc(b.In, func(e int32) bool { return g.Edges[e].Back })
		if i < 0 {
			continue
		}
		for _, u := range naturalLoop(g, loopBackEdges(g, b.In[i:i+1]), in) {
			depth[u]++
			in[u] = false
		}
	}
	type candidate struct {
		st             *loopSite
		back           []int32
		body           []int32
		exits, entries []int32
		depth, size    int
		// branchy says that a block of the loop branches within it,
		// so that its iterations may take different paths.
		branchy bool
	}
	var cands []candidate
	for x, de := range d.Edges {
		if de.Kind != cfg.EdgeDummyExit {
			continue
		}
		op := plan.Ops[x]
		if op.Kind != numbering.Count && op.Kind != numbering.CountConst {
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
		st := &loopSite{stride: 1}
		st.lo, st.n = f.Rev.Range(int32(x))
		if st.n > maxSiteCounters && op.Kind == numbering.Count && iteration {
			st.iteration(f, int32(x), de)
		}
		if st.n <= 0 || st.n > maxSiteCounters {
			continue
		}
		body := naturalLoop(g, loopBackEdges(g, de.Back), in)
		free := true
		for _, v := range body {
			free = free && !calling[v]
		}
		c := candidate{st: st, back: de.Back, body: body, depth: depth[g.Edges[de.Back[0]].From], size: len(body)}
		for _, v := range body {
			stays := 0
			for _, e := range g.Blocks[v].Out {
				if to := g.Edges[e].To; to >= 2 && in[to] {
					stays++
				}
			}
			c.branchy = c.branchy || stays > 1
		}
		if free {
			for _, v := range body {
				for _, e := range g.Blocks[v].Out {
					if to := g.Edges[e].To; to < 2 || !in[to] {
						c.exits = append(c.exits, e)
					}
				}
				for _, e := range g.Blocks[v].In {
					if from := g.Edges[e].From; from < 2 || !in[from] {
						c.entries = append(c.entries, e)
					}
				}
			}
		}
		for _, v := range body {
			in[v] = false
		}
		if free {
			cands = append(cands, c)
		}
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		if a.depth != b.depth {
			return b.depth - a.depth
		}
		return a.size - b.size
	})
	lc := &loopCounts{addN: addN, first: first, slot: slot,
		at: map[int32]*loopSite{}, flush: map[int32][]*loopSite{}, init: map[int32][]*loopSite{}}
	var flushCost, counters int
	for _, c := range cands {
		st := c.st
		if counters+int(st.n) > maxFuncCounters || flushCost+len(c.exits)*int(st.n) > maxFlushCounters {
			continue
		}
		counters += int(st.n)
		flushCost += len(c.exits) * int(st.n)
		st.local = lc.first + lc.total
		if st.n > 1 && !st.partial && c.branchy {
			st.width = 64 / (st.n + 1)
			lc.total++
		} else {
			lc.total += uint32(st.n)
		}
		if st.partial {
			lc.iteration += int(st.n)
		}
		for _, b := range c.back {
			lc.at[b] = st
		}
		for _, e := range c.exits {
			lc.flush[e] = append(lc.flush[e], st)
		}
		// Locals start at 0, and the counters change in the loop only:
		// an edge that enters the loop from where no path from the loop
		// leads need not clear them.
		again := g.Reached(c.body)
		for _, e := range c.entries {
			if again[g.Edges[e].From] {
				lc.init[e] = append(lc.init[e], st)
			}
		}
	}
	if lc.total == 0 {
		return nil
	}
	lc.tmp = lc.first + lc.total
	return lc
}

// packedSites counts the sites that pack their counters.
func (lc *loopCounts) packedSites() int {
	seen := map[*loopSite]bool{}
	for _, st := range lc.at {
		if st.width > 0 {
			seen[st] = true
		}
	}
	return len(seen)
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
// range: an instrumentation bug) traps. At a partial site an id that is
// not the site's takes that default, where other counts it in memory.
func (lc *loopCounts) emitCount(a *wasm.Asm, e int32, op numbering.Op, reg uint32, other func()) {
	st := lc.at[e]
	inc := func(l uint32) {
		a.Idx(wasm.OpLocalGet, l).I64(1).Op(wasm.OpI64Add).Idx(wasm.OpLocalSet, l)
	}
	push := func() { // id - lo
		if op.Kind == numbering.CountConst {
			a.I64(op.Value - st.lo)
			return
		}
		a.Idx(wasm.OpLocalGet, reg)
		if v := op.Value - st.lo; v != 0 {
			a.AddI64(v)
		}
	}
	switch {
	case st.width > 0:
		lc.emitPacked(a, e, st, op, push)
		return
	case st.n == 1 && !st.partial:
		inc(st.local)
		return
	case st.n == 1:
		push()
		a.Op(wasm.OpI64Eqz).Block(wasm.OpIf)
		inc(st.local)
		a.Op(wasm.OpElse)
		other()
		a.Op(wasm.OpEnd)
		return
	}
	n := uint32(st.n)
	a.Block(wasm.OpBlock).Block(wasm.OpBlock)
	for range n {
		a.Block(wasm.OpBlock)
	}
	push()
	if st.partial {
		if st.inv != 1 {
			a.I64(st.inv).Op(wasm.OpI64Mul)
		}
		if st.rot != 0 {
			a.I64(st.rot).Op(wasm.OpI64Rotr)
		}
		a.Idx(wasm.OpLocalTee, lc.tmp).I64(st.n).Op(wasm.OpI64GeU).Idx(wasm.OpBrIf, n).Idx(wasm.OpLocalGet, lc.tmp)
	}
	a.Op(wasm.OpI32Wrap)
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
	a.Op(wasm.OpEnd)
	if st.partial {
		other()
	} else {
		a.Op(wasm.OpUnreachable)
	}
	a.Op(wasm.OpEnd)
}

// emitPacked counts id-lo (push) in a packed site: it adds 1 to counter
// j = id-lo and to the sum in the top bits. The sum reaches 2^(width-1),
// turning the local negative, before any counter can carry into the
// next, and the counters are added to memory then. A br_table on j to
// one local per counter was an indirect jump at each iteration, which the
// processor predicts worse than the loop's own branches.
func (lc *loopCounts) emitPacked(a *wasm.Asm, e int32, st *loopSite, op numbering.Op, push func()) {
	top := int64(1) << (64 - st.width)
	a.Idx(wasm.OpLocalGet, st.local)
	if op.Kind == numbering.CountConst {
		a.I64(int64(1)<<((op.Value-st.lo)*st.width) + top)
	} else {
		a.I64(1)
		push()
		if st.width&(st.width-1) == 0 {
			a.I64(int64(bits.TrailingZeros64(uint64(st.width)))).Op(wasm.OpI64Shl)
		} else {
			a.I64(st.width).Op(wasm.OpI64Mul)
		}
		a.Op(wasm.OpI64Shl).Op(wasm.OpI64Add).I64(top)
	}
	a.Op(wasm.OpI64Add).Idx(wasm.OpLocalTee, st.local).I64(0).Op(wasm.OpI64LtS).Block(wasm.OpIf)
	lc.add(a, e, []*loopSite{st})
	a.I64(0).Idx(wasm.OpLocalSet, st.local)
	a.Op(wasm.OpEnd)
}

// field pushes counter j of a packed site.
func (st *loopSite) field(a *wasm.Asm, j int64) {
	a.Idx(wasm.OpLocalGet, st.local)
	if j > 0 {
		a.I64(j * st.width).Op(wasm.OpI64ShrU)
	}
	a.I64(int64(1)<<st.width - 1).Op(wasm.OpI64And)
}

// flushBatch gathers the counters one flush adds to dense slots: locals,
// and the fields of packed sites.
type flushBatch struct {
	slots []int64
	vals  []func(a *wasm.Asm)
}

func (b *flushBatch) local(slot int64, l uint32) {
	b.slots = append(b.slots, slot)
	b.vals = append(b.vals, func(a *wasm.Asm) { a.Idx(wasm.OpLocalGet, l) })
}

func (b *flushBatch) packed(lc *loopCounts, st *loopSite) {
	for j := range st.n {
		b.slots = append(b.slots, lc.slot+st.lo+st.stride*j)
		b.vals = append(b.vals, func(a *wasm.Asm) { st.field(a, j) })
	}
}

// push is the batch's values as addAll takes them, appended to a.
func (b *flushBatch) push(a *wasm.Asm) func(j int) {
	return func(j int) { b.vals[j](a) }
}

// unpack adds a packed site's counters to memory, each that is not 0.
func (lc *loopCounts) unpack(a *wasm.Asm, st *loopSite) {
	for j := range st.n {
		st.field(a, j)
		a.Idx(wasm.OpLocalTee, lc.tmp)
		if lc.addsZero {
			a.Op(wasm.OpDrop)
			lc.addN(a, lc.slot+st.lo+st.stride*j, lc.tmp)
			continue
		}
		a.Op(wasm.OpI64Eqz).Op(wasm.OpI32Eqz).Block(wasm.OpIf)
		lc.addN(a, lc.slot+st.lo+st.stride*j, lc.tmp)
		a.Op(wasm.OpEnd)
	}
}

// emitFlush adds the counters of the loops that edge e leaves to their
// counters in memory (those that are not 0, where a call adds them), and
// clears the counters of the loops it enters.
func (lc *loopCounts) emitFlush(a *wasm.Asm, e int32) {
	if !lc.flushes(e) {
		return
	}
	lc.add(a, e, lc.flush[e])
	for _, st := range lc.init[e] {
		if st.width > 0 {
			a.I64(0).Idx(wasm.OpLocalSet, st.local)
			continue
		}
		for j := range uint32(st.n) {
			a.I64(0).Idx(wasm.OpLocalSet, st.local+j)
		}
	}
}

// add adds the counters of sites to memory, on Graph edge e: in one
// sequence where addAll is set, else each that is not 0 (or each, where
// addN adds 0 as nothing).
func (lc *loopCounts) add(a *wasm.Asm, e int32, sites []*loopSite) {
	if lc.addAll != nil {
		var b flushBatch
		for _, st := range sites {
			if st.width > 0 {
				b.packed(lc, st)
				continue
			}
			for j := range uint32(st.n) {
				b.local(lc.slot+st.lo+st.stride*int64(j), st.local+j)
			}
		}
		if len(b.slots) > 0 {
			lc.addAll(a, e, b.slots, b.push(a))
		}
	} else {
		for _, st := range sites {
			if st.width > 0 {
				lc.unpack(a, st)
				continue
			}
			for j := range uint32(st.n) {
				l := st.local + j
				if lc.addsZero {
					lc.addN(a, lc.slot+st.lo+st.stride*int64(j), l)
					continue
				}
				a.Idx(wasm.OpLocalGet, l).Op(wasm.OpI64Eqz).Op(wasm.OpI32Eqz).Block(wasm.OpIf)
				lc.addN(a, lc.slot+st.lo+st.stride*int64(j), l)
				a.Op(wasm.OpEnd)
			}
		}
	}
}

// decl declares the counters, and the scratch local after them when a
// site tests which of its ids it counts or unpacks its counters.
func (lc *loopCounts) decl() wasm.LocalDecl {
	n := lc.total
	if lc.iteration > 1 || lc.packedSites() > 0 {
		n++
	}
	return wasm.LocalDecl{Count: n, Type: wasm.ValI64}
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
