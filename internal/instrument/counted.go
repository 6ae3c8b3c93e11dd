// Counted loops: a loop whose iterations all take one path, driven by a
// local that one step changes each iteration up to a bound, leaves its
// back edge without probes; where it is left, the number of iterations is
// read off the local, and the paths its back edge ended are counted then.

package instrument

import (
	"math/bits"
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/parallel"
	"github.com/pathprof/pathprof/internal/wasm"
)

// Counted loops.
//
// In a loop whose body is one straight run of blocks (its iterations take
// one path), the back edge ends the same path on every iteration but the
// first, and what runs there is a count in memory or in a local; in a
// tight loop, that is much of the loop's time. Compilers end such loops
// with the step of a local and a test of it against a bound that does not
// change in the loop (for (i = a; i != n; i += c), which clang writes as
// local.tee i, local.get n, i32.ne, br_if, or i32.lt_s for i < n, or with
// i counted down to 0 as local.tee i, br_if). Where that test is the
// loop's only way out, whether the loop goes on depends on the local's
// value alone, and for a step of odd·2^s its values repeat after 2^(32-s)
// steps: a loop that ends does so within them, so the number of
// iterations t is the distance the local moved over the step, modulo
// 2^(32-s), exactly, however it wraps. So the back edge runs
// nothing; the edges into the loop keep the local plus one step, and the
// loop's exit computes t - 1, the back edges taken, from the local: if any
// were, it counts the first iteration's path (the path register still
// holds what it held at the loop's header), adds t - 2 to the iteration
// path's counter and sets the register as the back edge would have. The
// counts are those of the back edge's probes exactly. Where the path
// register is not set on the back edge (the header is a cut and the
// placement folded the initialisation into the body, or the path has a
// constant id), every iteration runs the same path, counted as one: the
// exit adds t - 1 to it. A trap in the loop loses the paths it completed
// since it was entered, as loop counters do.
//
// Where a function's loop iterations are shared out (loopslices.go), a
// loop nested in a shared one is counted so in the replicas the copy
// probes (the bare ones run nothing in it), and a loop outside the shared
// ones (before or after them) only in the copy of slot 0, which counts the
// paths that start at back edges there: the flag guards the first
// iteration's count.

// countedLoop is one loop whose back edge runs nothing.
type countedLoop struct {
	back, exit int32   // Graph edges
	entries    []int32 // the Graph edges into it
	x          uint32
	step       uint32 // what one iteration adds to x (mod 2^32), not 0
	// With restart, the back edge's count is count and it sets the
	// path register to init for the next iteration, whose path, id,
	// differs from the first's; without, its paths start at the header
	// (a cut, or a path of one iteration), every iteration's is id, and
	// the body sets the register itself.
	restart bool
	count   numbering.Op
	init    int64
	id      int64
}

// countedLoops is one function's counted loops.
type countedLoops struct {
	// start is the copy's i32 global that holds the driving local at the
	// loop's entry plus a step (a local would be live through the loop,
	// and wazero's compiler then keeps fewer of the loop's own values in
	// registers); no call can come between the entry and the exit, and
	// the loops do not nest. trips, the back edges taken, is an i32
	// local; emitFunc sets it.
	start, trips uint32
	loops        []*countedLoop
	// By Graph edge: the loops it enters, the loop it leaves, and
	// whether it is a loop's back edge.
	entries map[int32][]*countedLoop
	exits   map[int32]*countedLoop
	back    map[int32]bool
}

// indexCounted returns the counted loops ls with their edges indexed, or
// nil for none.
func indexCounted(ls []*countedLoop) *countedLoops {
	if len(ls) == 0 {
		return nil
	}
	cl := &countedLoops{loops: ls, entries: map[int32][]*countedLoop{}, exits: map[int32]*countedLoop{}, back: map[int32]bool{}}
	for _, l := range ls {
		cl.back[l.back], cl.exits[l.exit] = true, l
		for _, e := range l.entries {
			cl.entries[e] = append(cl.entries[e], l)
		}
	}
	return cl
}

// has reports whether Graph edge e runs a counted loop's code.
func (cl *countedLoops) has(e int32) bool {
	return cl != nil && (cl.exits[e] != nil || len(cl.entries[e]) > 0)
}

// without returns cl without the loops whose back edges drop says, or nil
// if none is left.
func (cl *countedLoops) without(drop func(back int32) bool) *countedLoops {
	kept := slices.DeleteFunc(slices.Clone(cl.loops), func(l *countedLoop) bool { return drop(l.back) })
	if len(kept) == len(cl.loops) {
		return cl
	}
	out := indexCounted(kept)
	if out != nil {
		out.start = cl.start
	}
	return out
}

// planAllCountedLoops plans the counted loops of every profiled function
// (whatever numbers its paths: the exit counts what the back edge's probes
// would have; where it shares out loops, as countableBeside says), and
// gives the module the global they keep their start in if any has one.
func planAllCountedLoops(m *wasm.Module, funcs []*Func) {
	parallel.Each(len(funcs), func(i int) {
		f := funcs[i]
		ft, ok := m.FuncType(f.Index)
		if !ok || f.Graph == nil || f.scan == nil || f.Placement == nil {
			return
		}
		var where func(chain []int32, restart bool) bool
		if f.Mode.Loop != 0 {
			rs, err := f.sharedLoops(append([]int32{f.Mode.Loop}, f.Mode.Loops...))
			if err != nil {
				return
			}
			where = func(chain []int32, restart bool) bool {
				return countableBeside(f.Graph, rs, chain, slices.Contains(f.Mode.Slots, 0), restart)
			}
		}
		f.counted = planCountedLoops(&m.Code[i], f, ft.Params, where)
	})
	start := m.NumImportedGlobals + uint32(len(m.Globals))
	added := false
	for _, f := range funcs {
		if f.counted == nil {
			continue
		}
		f.counted.start = start
		if !added {
			// A defined global appended at the end shifts no index.
			var init wasm.Asm
			init.I32(0).Op(wasm.OpEnd)
			m.Globals = append(m.Globals, wasm.Global{GlobalType: wasm.GlobalType{Type: wasm.ValI32, Mutable: true}, Init: init.B})
			m.Touch(wasm.SecGlobal)
			added = true
		}
	}
}

// planCountedLoops finds f's counted loops, or returns nil: loops of that
// shape (shapedLoops) whose back edge's dummy exit edge is its own, with
// no probes but the back edge's count and, if any, the register's
// initialisation (with one, none in the body); and where, if set, true for
// its blocks and whether its back edge sets the register.
func planCountedLoops(c *wasm.Code, f *Func, params []wasm.ValType, where func(chain []int32, restart bool) bool) *countedLoops {
	g := f.Graph
	var alone map[int32]bool
	var ls []*countedLoop
	shapedLoops(c, f, params, func(l *countedLoop, chain []int32) {
		ops := f.ops[l.back]
		if len(ops) == 0 || ops[0].Kind != numbering.Count && ops[0].Kind != numbering.CountConst {
			return
		}
		l.restart = len(ops) == 2 && ops[1].Kind == numbering.Init
		if len(ops) != 1 && !l.restart {
			return
		}
		if alone == nil {
			alone = endingAlone(f.DAG)
		}
		if !alone[l.back] || where != nil && !where(chain, l.restart) {
			return
		}
		if l.restart {
			if slices.ContainsFunc(chain[:len(chain)-1], func(v int32) bool { return len(f.ops[g.Blocks[v].Out[0]]) > 0 }) {
				return // the register would need what they add
			}
			l.count, l.init, l.id = ops[0], ops[1].Value, ops[0].Value
			if ops[0].Kind == numbering.Count {
				l.id += ops[1].Value
			}
		} else if id, ok := chainPath(f, chain, ops[0]); ok {
			l.id = id
		} else {
			return
		}
		ls = append(ls, l)
	})
	return indexCounted(ls)
}

// shapedLoops calls found with each loop of f that has a counted loop's
// shape, whatever the probes: one back edge, a br_if to the header at the
// end of a straight run of blocks (chain) from it without calls, the only
// exit that br_if's other way, and the br_if's test one of a local
// stepped once in the loop. The loop has its edges, local and step set.
func shapedLoops(c *wasm.Code, f *Func, params []wasm.ValType, found func(l *countedLoop, chain []int32)) {
	g := f.Graph
	var calling []bool
	for b, be := range g.Edges {
		if !be.Back || be.Kind != cfg.EdgeBrIfTaken {
			continue
		}
		if calling == nil {
			calling = callingBlocks(g, f.scan.calls)
		}
		chain, exit, ok := straightLoop(g, int32(b), calling)
		if !ok {
			continue
		}
		x, step, ok := inductionTest(c, g, chain, be.From, params)
		if !ok {
			continue
		}
		l := &countedLoop{back: int32(b), exit: exit, x: x, step: step}
		for _, e := range g.Blocks[be.To].In {
			if e != int32(b) {
				l.entries = append(l.entries, e)
			}
		}
		found(l, chain)
	}
}

// endingAlone returns the Graph edges that a dummy exit edge of d stands
// for alone: the hits of a counted loop leave its back edge's dummy exit
// edge out (pathSeqs), which an edge that leaves the loop into a cut
// vertex would share.
func endingAlone(d *cfg.DAG) map[int32]bool {
	alone := map[int32]bool{}
	for _, e := range d.Edges {
		if e.Kind == cfg.EdgeDummyExit && len(e.Back) == 1 {
			alone[e.Back[0]] = true
		}
	}
	return alone
}

// straightLoop returns the blocks of the loop whose one back edge is b, in
// order from its header, and its one exit, if they are a straight run of
// blocks none of which calls, entered only at the header and left only by
// the br_if that takes b.
func straightLoop(g *cfg.Graph, b int32, calling []bool) ([]int32, int32, bool) {
	h, u := g.Edges[b].To, g.Edges[b].From
	for _, e := range g.Blocks[h].In {
		if e != b && g.Edges[e].Back {
			return nil, -1, false
		}
	}
	var chain []int32
	for v := h; ; {
		if v < 2 || g.Blocks[v].Same != 0 || calling[v] || len(chain) > len(g.Blocks) {
			return nil, -1, false
		}
		chain = append(chain, v)
		if v == u {
			break
		}
		out := g.Blocks[v].Out
		if len(out) != 1 {
			return nil, -1, false
		}
		next := g.Edges[out[0]]
		if next.Back || next.To == h || len(g.Blocks[next.To].In) != 1 {
			return nil, -1, false
		}
		switch next.Kind {
		case cfg.EdgeFallthrough, cfg.EdgeBr:
		default:
			return nil, -1, false
		}
		v = next.To
	}
	out := g.Blocks[u].Out
	if len(out) != 2 {
		return nil, -1, false
	}
	exit := out[0]
	if exit == b {
		exit = out[1]
	}
	if g.Edges[exit].Kind != cfg.EdgeBrIfNot || g.Edges[exit].To == h {
		return nil, -1, false
	}
	return chain, exit, true
}

// countedShapes returns the back edges of f's loops that have a counted
// loop's shape, whatever the probes: a copy that profiles f counts most
// of them where they are left.
func countedShapes(c *wasm.Code, f *Func, params []wasm.ValType) map[int32]bool {
	var hs map[int32]bool
	shapedLoops(c, f, params, func(l *countedLoop, _ []int32) {
		if hs == nil {
			hs = map[int32]bool{}
		}
		hs[l.back] = true
	})
	return hs
}

// CountedShape says whether the loop whose header is Graph block h has a
// counted loop's shape (as far as an analysis, which places no probes, can
// tell): a copy that profiles the function counts its iterations where it
// is left, or in a local loop counter, cheaply either way, unless its
// iterations are shared out, when every copy pays for the iterations of
// its slots.
func (f *Func) CountedShape(h int32) bool {
	for b := range f.countedShapes {
		if f.Graph.Edges[b].To == h {
			return true
		}
	}
	return false
}

// chainPath returns the id that count, the only operation on the back edge
// of a straight loop (chain), counts on every iteration: its constant, or
// the register plus its value where the body initialises the register
// (the placement folds the initialisation of a path that starts at a cut
// into its first increment), so that the register's value there is the
// same on every iteration.
func chainPath(f *Func, chain []int32, count numbering.Op) (int64, bool) {
	g := f.Graph
	var r int64
	set := false
	for _, v := range chain[:len(chain)-1] {
		for _, o := range f.ops[g.Blocks[v].Out[0]] {
			switch o.Kind {
			case numbering.Init:
				r, set = o.Value, true
			case numbering.Add:
				r += o.Value
			default:
				return 0, false
			}
		}
	}
	switch {
	case count.Kind == numbering.CountConst:
		return count.Value, true
	case set:
		return r + count.Value, true
	}
	return 0, false
}

// inductionTest returns the local x that the br_if ending block u tests
// and what one iteration adds to it, where the test depends on x alone: x
// (x != 0), x and i32.eqz, or x and n and an i32 comparison, either way
// round, n a constant or a local that the loop does not set (x read by
// local.get, or local.tee where it comes first), and x is an i32 that the
// loop sets once, to x plus or minus a constant (local.get x, i32.const,
// i32.add or i32.sub, local.set or local.tee x).
func inductionTest(c *wasm.Code, g *cfg.Graph, chain []int32, u int32, params []wasm.ValType) (uint32, uint32, bool) {
	// The last four instructions of u, and every write of a local in the
	// loop with the three instructions before it.
	var tail [4]wasm.Instr
	type write struct {
		at     wasm.Instr
		before [3]wasm.Instr
	}
	writes := map[uint32][]write{}
	var last [3]wasm.Instr
	var in wasm.Instr
	for _, v := range chain {
		blk := g.Blocks[v]
		r := wasm.NewReader(c.Body, c.OrigOff, "code")
		r.Seek(int(blk.Start))
		last = [3]wasm.Instr{}
		for r.Pos() < int(blk.End) && !r.Done() {
			if err := r.Next(&in); err != nil {
				return 0, 0, false
			}
			if in.Op == wasm.OpLocalSet || in.Op == wasm.OpLocalTee {
				writes[in.A] = append(writes[in.A], write{in, last})
			}
			if v == u {
				copy(tail[:], tail[1:])
				tail[3] = in
			}
			copy(last[:], last[1:])
			last[2] = in
		}
	}
	if tail[3].Op != wasm.OpBrIf {
		return 0, 0, false
	}
	reads := func(in wasm.Instr) bool { return in.Op == wasm.OpLocalGet || in.Op == wasm.OpLocalTee }
	fixed := func(in wasm.Instr, x uint32) bool {
		switch in.Op {
		case wasm.OpI32Const:
			return true
		case wasm.OpLocalGet:
			return in.A != x && len(writes[in.A]) == 0
		}
		return false
	}
	var x uint32
	switch cmp := tail[2].Op; {
	case reads(tail[2]):
		x = tail[2].A
	case cmp == wasm.OpI32Eqz && reads(tail[1]):
		x = tail[1].A
	case cmp < wasm.OpI32Eq || cmp > wasm.OpI32GeU:
		return 0, 0, false
	case reads(tail[0]) && fixed(tail[1], tail[0].A):
		x = tail[0].A
	case tail[1].Op == wasm.OpLocalGet && fixed(tail[0], tail[1].A):
		x = tail[1].A
	default:
		return 0, 0, false
	}
	if !isI32(c, params, x) || len(writes[x]) != 1 {
		return 0, 0, false
	}
	w := writes[x][0]
	get, k, op := w.before[0], w.before[1], w.before[2]
	if get.Op != wasm.OpLocalGet || get.A != x || k.Op != wasm.OpI32Const {
		return 0, 0, false
	}
	step := uint32(k.Const)
	switch op.Op {
	case wasm.OpI32Add:
	case wasm.OpI32Sub:
		step = -step
	default:
		return 0, 0, false
	}
	return x, step, step != 0
}

// isI32 reports whether local x of a function with those params and body
// c is an i32.
func isI32(c *wasm.Code, params []wasm.ValType, x uint32) bool {
	if int(x) < len(params) {
		return params[x] == wasm.ValI32
	}
	n := uint64(x) - uint64(len(params))
	for _, d := range c.Locals {
		if n < uint64(d.Count) {
			return d.Type == wasm.ValI32
		}
		n -= uint64(d.Count)
	}
	return false
}

// emitEntry appends, for edge e into counted loops, the driving local
// plus one step into the start global.
func (cl *countedLoops) emitEntry(a *wasm.Asm, e int32) {
	if cl == nil {
		return
	}
	for _, l := range cl.entries[e] {
		a.Idx(wasm.OpLocalGet, l.x).I32(int32(l.step)).Op(wasm.OpI32Add).Idx(wasm.OpGlobalSet, cl.start)
	}
}

// emitExit appends, for a counted loop's exit e, the back edges' counts:
// count(o) appends the back edge's count of the path the register holds,
// addN that of n (the i64 push pushes) runs of the path of id, where n may
// be 0 if zero; then is what else the back edge ran (a shared loop's flag).
func (cl *countedLoops) emitExit(a *wasm.Asm, e int32, reg uint32, then []byte, count func(o numbering.Op), addN func(id int64, push func(), zero bool)) {
	if cl == nil || cl.exits[e] == nil {
		return
	}
	l := cl.exits[e]
	// The back edges taken: (x - start)/step, where start is the local
	// at the entry plus a step, modulo 2^(32-s) for a step of odd·2^s.
	s := uint32(bits.TrailingZeros32(l.step))
	odd := l.step >> s
	inv := odd // Newton's iteration: each step doubles the bits of the inverse
	for range 4 {
		inv *= 2 - odd*inv
	}
	a.Idx(wasm.OpLocalGet, l.x).Idx(wasm.OpGlobalGet, cl.start).Op(wasm.OpI32Sub)
	if s > 0 {
		a.I32(int32(s)).Op(wasm.OpI32ShrU)
	}
	if inv != 1 {
		a.I32(int32(inv)).Op(wasm.OpI32Mul)
	}
	if s > 0 {
		a.I32(int32(uint32(1)<<(32-s) - 1)).Op(wasm.OpI32And)
	}
	a.Idx(wasm.OpLocalTee, cl.trips).Block(wasm.OpIf)
	if !l.restart {
		// Every back edge counted the same path.
		addN(l.id, func() { a.Idx(wasm.OpLocalGet, cl.trips).Op(wasm.OpI64ExtU) }, false)
		a.Op(wasm.OpEnd)
		return
	}
	count(l.count)
	addN(l.id, func() {
		a.Idx(wasm.OpLocalGet, cl.trips).Op(wasm.OpI64ExtU).I64(1).Op(wasm.OpI64Sub)
	}, true)
	a.I64(l.init).Idx(wasm.OpLocalSet, reg)
	a.B = append(a.B, then...)
	a.Op(wasm.OpEnd)
}

// holds reports whether any of blocks lies in the loop, its end included.
func (r *region) holds(g *cfg.Graph, blocks []int32) bool {
	return slices.ContainsFunc(blocks, func(b int32) bool {
		return g.Blocks[b].Start >= r.off && g.Blocks[b].Start <= r.end
	})
}

// countableBeside reports whether a copy that shares out the loops rs
// counts the loop of blocks chain where it is left: one nested in a shared
// loop's body, whose replicas the copy probes count it as the whole
// function would (the bare ones run nothing in it); one outside them only
// if the copy has slot 0 (slot0), which counts the paths that start at
// back edges there, and the back edge sets the register (restart): the
// flag guards the first iteration's count, which is then its own.
func countableBeside(g *cfg.Graph, rs []*region, chain []int32, slot0, restart bool) bool {
	for _, r := range rs {
		if !r.holds(g, chain) {
			continue
		}
		// Nested, not the shared loop itself, and clear of its end.
		return !slices.ContainsFunc(chain, func(b int32) bool {
			blk := g.Blocks[b]
			return blk.Start <= r.body || blk.End > r.end || !r.in(blk.Start)
		})
	}
	return slot0 && restart
}
