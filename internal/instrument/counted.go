// Counted loops: a loop whose iterations all take one path, driven by a
// local that one step changes each iteration up to a bound, leaves its
// back edge without probes; where it is left, the number of iterations is
// read off the local, and the paths its back edge ended are counted then.

package instrument

import (
	"math/bits"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
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
// counts are those of the back edge's probes exactly. A trap in the loop
// loses the paths it completed since it was entered, as loop counters do.

// countedLoop is one loop whose back edge runs nothing.
type countedLoop struct {
	back, exit int32 // Graph edges
	x          uint32
	step       uint32 // what one iteration adds to x (mod 2^32), not 0
	count      numbering.Op
	init       int64 // the path register after the back edge
}

// countedLoops is one function's counted loops.
type countedLoops struct {
	// x0 (the driving local at the loop's entry plus a step) and trips
	// (the back edges taken) are i32 locals, set by emitFunc.
	x0, trips uint32
	entries   map[int32][]*countedLoop // Graph edge into a loop -> its loops
	exits     map[int32]*countedLoop
	back      map[int32]bool
}

// has reports whether Graph edge e runs a counted loop's code.
func (cl *countedLoops) has(e int32) bool {
	return cl != nil && (cl.exits[e] != nil || len(cl.entries[e]) > 0)
}

// bare reports whether back edge e is a counted loop's.
func (cl *countedLoops) bare(e int32) bool { return cl != nil && cl.back[e] }

// planCountedLoops finds f's counted loops, or returns nil: loops with one
// back edge, a br_if to the header at the end of a straight run of blocks
// from it without calls, the only exit that br_if's other way, no probes
// but the back edge's count and the register's initialisation, and the
// br_if's test one of a local stepped once in the loop.
func planCountedLoops(c *wasm.Code, f *Func, params []wasm.ValType) *countedLoops {
	g := f.Graph
	var calling []bool
	var cl *countedLoops
	for b, be := range g.Edges {
		if !be.Back || be.Kind != cfg.EdgeBrIfTaken {
			continue
		}
		ops := f.ops[b]
		if len(ops) != 2 || ops[0].Kind != numbering.Count && ops[0].Kind != numbering.CountConst || ops[1].Kind != numbering.Init {
			continue
		}
		if calling == nil {
			calling = callingBlocks(g, f.scan.calls)
		}
		h, u := be.To, be.From
		chain, exit, ok := straightLoop(g, f.ops, int32(b), calling)
		if !ok {
			continue
		}
		x, step, ok := inductionTest(c, g, chain, u, params)
		if !ok {
			continue
		}
		if cl == nil {
			cl = &countedLoops{entries: map[int32][]*countedLoop{}, exits: map[int32]*countedLoop{}, back: map[int32]bool{}}
		}
		l := &countedLoop{back: int32(b), exit: exit, x: x, step: step, count: ops[0], init: ops[1].Value}
		cl.back[int32(b)] = true
		cl.exits[exit] = l
		for _, e := range g.Blocks[h].In {
			if e != int32(b) {
				cl.entries[e] = append(cl.entries[e], l)
			}
		}
	}
	return cl
}

// straightLoop returns the blocks of the loop whose one back edge is b, in
// order from its header, and its one exit, if they are a straight run of
// blocks none of which calls, entered only at the header, left only by
// the br_if that takes b, and with no probes on their edges.
func straightLoop(g *cfg.Graph, ops [][]numbering.Op, b int32, calling []bool) ([]int32, int32, bool) {
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
		if len(out) != 1 || len(ops[out[0]]) != 0 {
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
// plus one step into x0.
func (cl *countedLoops) emitEntry(a *wasm.Asm, e int32) {
	if cl == nil {
		return
	}
	for _, l := range cl.entries[e] {
		a.Idx(wasm.OpLocalGet, l.x).I32(int32(l.step)).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, cl.x0)
	}
}

// emitExit appends, for a counted loop's exit e, the back edges' counts:
// count(o) appends the back edge's count of the path the register holds,
// addN that of n (the i64 push pushes) runs of the path of id.
func (cl *countedLoops) emitExit(a *wasm.Asm, e int32, reg uint32, count func(o numbering.Op), addN func(id int64, push func())) {
	if cl == nil || cl.exits[e] == nil {
		return
	}
	l := cl.exits[e]
	// The back edges taken: (x - x0)/step, where x0 is the local at the
	// entry plus a step, modulo 2^(32-s) for a step of odd·2^s.
	s := uint32(bits.TrailingZeros32(l.step))
	odd := l.step >> s
	inv := odd // Newton's iteration: each step doubles the bits of the inverse
	for range 4 {
		inv *= 2 - odd*inv
	}
	a.Idx(wasm.OpLocalGet, l.x).Idx(wasm.OpLocalGet, cl.x0).Op(wasm.OpI32Sub)
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
	count(l.count)
	id := l.count.Value
	if l.count.Kind == numbering.Count {
		id += l.init
	}
	addN(id, func() {
		a.Idx(wasm.OpLocalGet, cl.trips).Op(wasm.OpI64ExtU).I64(1).Op(wasm.OpI64Sub)
	})
	a.I64(l.init).Idx(wasm.OpLocalSet, reg)
	a.Op(wasm.OpEnd)
}
