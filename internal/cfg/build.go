package cfg

// This file builds a function's control-flow graph from its instructions.

import (
	"fmt"
	"slices"
	"sync"

	"github.com/pathprof/pathprof/internal/wasm"
)

// Options change how a graph is built.
type Options struct {
	// NoReturn reports functions whose call never returns (WASI's
	// proc_exit): a call to one ends its block with an edge to the exit.
	NoReturn func(funcIdx uint32) bool
	// SplitCalls ends a block's node after every call that may return
	// (call, call_indirect, call_ref) with an EdgeCall edge into a new
	// node, marked Cont, where the block continues. The DAG cuts paths
	// there, so that a path never spans a call: the blocks the callee
	// runs then come between the caller's paths (package osp).
	SplitCalls bool
	// Thread lets a forward jump through a dispatch loop run on through
	// the loop's header instead of taking a back edge. Go's compiler
	// ends every jump between its blocks with "i32.const K; local.set x;
	// br L", L a loop whose header is only "local.get x; br_table"
	// (inside blocks): a jump whose target comes later in the code then
	// becomes an edge into a node of its own that stands for the header
	// (Block.Same), with one edge (EdgeThread) to the br_table's target
	// for K. Paths no longer end at such jumps, and the header's br_table
	// arms are taken by jumps of both kinds, so they must carry no
	// probes.
	Thread bool
}

// ProcExit is WASI's proc_exit, the import whose calls never return that
// profiles are made with.
var ProcExit = [2]string{"wasi_snapshot_preview1", "proc_exit"}

// NoReturnImports returns a NoReturn that matches the module's imports of
// the given (module, name) pairs, such as wasi_snapshot_preview1.proc_exit.
func NoReturnImports(m *wasm.Module, names ...[2]string) func(uint32) bool {
	set := map[uint32]bool{}
	idx := uint32(0)
	for _, im := range m.Imports {
		if im.Kind != wasm.KindFunc {
			continue
		}
		for _, n := range names {
			if im.Module == n[0] && im.Name == n[1] {
				set[idx] = true
			}
		}
		idx++
	}
	return func(f uint32) bool { return set[f] }
}

type frameKind uint8

const (
	frameFunc frameKind = iota
	frameBlock
	frameLoop
	frameIf
	frameTry      // legacy try
	frameTryTable // try_table
)

type thrower struct {
	from    int32
	tag     int64 // -1: any tag
	isThrow bool  // a throw instruction (leaves the function if uncaught), not a call
}

type frame struct {
	kind    frameKind
	header  int32 // loop header
	plain   bool  // loop: its block type is not a type index, so it takes no values
	end     int32 // join node after the end, created when first targeted; -1 until then
	cond    int32 // if: node holding the condition; -1 when unreachable
	ifOff   uint32
	hasElse bool
	// try_table
	catches []wasm.Catch
	// legacy try
	inCatch   bool
	throwers  []thrower
	caughtAll bool
	caught    map[uint32]bool
}

type builder struct {
	g        *Graph
	fs       []frame
	cur      int32
	noReturn func(uint32) bool
	split    bool
	handlers int // frames that can catch: try_table, legacy try in its body
	excEdges map[[2]int32]bool
	// Options.Thread: the dispatch loops by header node, and the two
	// instructions before the current one.
	thread     bool
	dispatches map[int32]*dispatch
	prev       [2]wasm.Instr
}

// dispatch is a loop header that only branches on a local (Options.Thread).
type dispatch struct {
	local uint32
	site  uint32  // the br_table
	arms  []int32 // the target of each arm, the default last
	// copies holds, per arm, the node standing for the header entered
	// by a jump to it.
	copies map[int]int32
}

func (b *builder) node() int32 {
	b.g.Blocks = append(b.g.Blocks, Block{})
	return int32(len(b.g.Blocks) - 1)
}

// edge adds an edge; the blocks' lists are made once the graph is built
// (finish).
func (b *builder) edge(from, to int32, k EdgeKind, instr uint32) int32 {
	e := int32(len(b.g.Edges))
	b.g.Edges = append(b.g.Edges, Edge{From: from, To: to, Kind: k, Instr: instr})
	return e
}

// scratch is what BuildBody grows: a graph is built in it and copied out
// at its exact size, so that what is kept is no larger than the function's
// blocks and edges, and the scratch is reused by the next function instead
// of allocated again.
type scratch struct {
	g   Graph
	deg []int32 // per block, its out and in degrees
	fs  []frame
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// finish returns the graph built in s: its blocks and edges copied at
// their size, and each block's Out and In, in edge order, carved from one
// array.
func (s *scratch) finish() *Graph {
	g := &Graph{Blocks: slices.Clone(s.g.Blocks), Edges: slices.Clone(s.g.Edges)}
	deg := append(s.deg[:0], make([]int32, 2*len(g.Blocks))...)
	for _, e := range g.Edges {
		deg[2*e.From]++
		deg[2*e.To+1]++
	}
	adj := make([]int32, 2*len(g.Edges))
	at := int32(0)
	for v := range g.Blocks {
		blk := &g.Blocks[v]
		if n := deg[2*v]; n > 0 {
			blk.Out = adj[at : at : at+n]
			at += n
		}
		if n := deg[2*v+1]; n > 0 {
			blk.In = adj[at : at : at+n]
			at += n
		}
	}
	for i, e := range g.Edges {
		g.Blocks[e.From].Out = append(g.Blocks[e.From].Out, int32(i))
		g.Blocks[e.To].In = append(g.Blocks[e.To].In, int32(i))
	}
	s.deg = deg
	// The scratch keeps no br_table's arms alive.
	clear(s.g.Edges)
	s.g.Blocks, s.g.Edges = s.g.Blocks[:0], s.g.Edges[:0]
	return g
}

// target returns the node a branch to label l goes to.
func (b *builder) target(l uint32) (int32, error) {
	if int(l) >= len(b.fs) {
		return 0, fmt.Errorf("branch to label %d with only %d enclosing blocks", l, len(b.fs))
	}
	return b.frameTarget(len(b.fs) - 1 - int(l)), nil
}

func (b *builder) frameTarget(i int) int32 {
	f := &b.fs[i]
	switch f.kind {
	case frameFunc:
		return Exit
	case frameLoop:
		return f.header
	}
	if f.end < 0 {
		f.end = b.node()
	}
	return f.end
}

// dispatch adds the edges of an exception raised in node from, looking
// for handlers in frames top, top-1, ..., 0.
func (b *builder) dispatch(t thrower, top int, off uint32) {
	for i := top; i >= 0; i-- {
		f := &b.fs[i]
		switch f.kind {
		case frameTryTable:
			for _, c := range f.catches {
				all := c.Kind == wasm.CatchAll || c.Kind == wasm.CatchAllRef
				if !all && t.tag >= 0 && int64(c.Tag) != t.tag {
					continue
				}
				// Catch labels are resolved outside the try_table itself.
				to := b.frameTarget(i - 1 - int(c.Label))
				b.excEdge(t.from, to, off)
				if all || int64(c.Tag) == t.tag {
					return
				}
			}
		case frameTry:
			if !f.inCatch {
				f.throwers = append(f.throwers, t)
				return
			}
		}
	}
	if t.isThrow {
		b.edge(t.from, Exit, EdgeThrow, off)
	}
}

func (b *builder) excEdge(from, to int32, off uint32) {
	if b.excEdges == nil {
		b.excEdges = map[[2]int32]bool{}
	}
	k := [2]int32{from, to}
	if b.excEdges[k] {
		return
	}
	b.excEdges[k] = true
	b.edge(from, to, EdgeException, off)
}

// Build returns the control-flow graph of the defined function with the
// given index in m.Code (not the function index space).
func Build(m *wasm.Module, def int, opt Options) (*Graph, error) {
	if def < 0 || def >= len(m.Code) {
		return nil, fmt.Errorf("no function body %d", def)
	}
	return BuildBody(&m.Code[def], opt)
}

// BuildBody returns the control-flow graph of one function body.
func BuildBody(c *wasm.Code, opt Options) (*Graph, error) {
	s := scratches.Get().(*scratch)
	defer scratches.Put(s)
	g := &s.g
	g.Blocks = append(g.Blocks[:0], Block{}, Block{})
	g.Edges = g.Edges[:0]
	b := &builder{g: g, noReturn: opt.NoReturn, split: opt.SplitCalls, thread: opt.Thread}
	first := b.node()
	b.edge(Entry, first, EdgeEntry, c.ExprOff)
	b.cur = first
	b.fs = append(s.fs[:0], frame{kind: frameFunc, end: -1, cond: -1})
	defer func() {
		// The frames' lists and maps are the function's.
		clear(b.fs[:cap(b.fs)])
		s.fs = b.fs[:0]
	}()
	r := wasm.NewReader(c.Body, c.OrigOff, "code")
	r.Seek(int(c.ExprOff))
	var in wasm.Instr
	for {
		if r.Done() {
			return nil, fmt.Errorf("function body ends inside a block")
		}
		if err := r.Next(&in); err != nil {
			return nil, err
		}
		if b.cur >= 0 {
			blk := &g.Blocks[b.cur]
			if blk.Instrs == 0 {
				blk.Start = in.Off
			}
			blk.End = in.Off + in.Len
			blk.Instrs++
		}
		done, err := b.step(&in)
		if err != nil {
			return nil, fmt.Errorf("offset 0x%x (%s): %w", c.OrigOff+int(in.Off), in.Op.Name(), err)
		}
		if done {
			break
		}
		if b.thread {
			b.prev[0], b.prev[1] = b.prev[1], in
		}
	}
	out := s.finish()
	out.findBackEdges()
	return out, nil
}

func (b *builder) push(f frame) {
	if f.kind == frameTryTable || f.kind == frameTry {
		b.handlers++
	}
	b.fs = append(b.fs, f)
}

// step applies one instruction's control effect; it reports true after the
// function's final end.
func (b *builder) step(in *wasm.Instr) (bool, error) {
	cur := b.cur
	switch in.Op {
	case wasm.OpBlock:
		b.push(frame{kind: frameBlock, end: -1, cond: -1})
	case wasm.OpLoop:
		f := frame{kind: frameLoop, end: -1, header: -1, cond: -1, plain: in.Block.Kind != wasm.BlockTypeIndex}
		if cur >= 0 {
			f.header = b.node()
			b.edge(cur, f.header, EdgeFallthrough, in.Off)
			b.cur = f.header
		}
		b.push(f)
	case wasm.OpIf:
		f := frame{kind: frameIf, end: -1, cond: cur, ifOff: in.Off}
		if cur >= 0 {
			t := b.node()
			b.edge(cur, t, EdgeIfThen, in.Off)
			b.cur = t
		}
		b.push(f)
	case wasm.OpElse:
		f := &b.fs[len(b.fs)-1]
		if f.kind != frameIf || f.hasElse {
			return false, fmt.Errorf("else without if")
		}
		f.hasElse = true
		if cur >= 0 {
			b.edge(cur, b.frameTarget(len(b.fs)-1), EdgeFallthrough, in.Off)
		}
		b.cur = -1
		if f.cond >= 0 {
			e := b.node()
			b.edge(f.cond, e, EdgeIfElse, f.ifOff)
			b.cur = e
		}
	case wasm.OpTryTable:
		for _, c := range in.Catches {
			if int(c.Label) >= len(b.fs) {
				return false, fmt.Errorf("catch to label %d with only %d enclosing blocks", c.Label, len(b.fs))
			}
		}
		b.push(frame{kind: frameTryTable, end: -1, cond: -1, catches: append([]wasm.Catch(nil), in.Catches...)})
	case wasm.OpTry:
		b.push(frame{kind: frameTry, end: -1, cond: -1})
	case wasm.OpCatch, wasm.OpCatchAll:
		f := &b.fs[len(b.fs)-1]
		if f.kind != frameTry || f.caughtAll {
			return false, fmt.Errorf("%s outside a try", in.Op.Name())
		}
		if cur >= 0 {
			b.edge(cur, b.frameTarget(len(b.fs)-1), EdgeFallthrough, in.Off)
		}
		if !f.inCatch {
			f.inCatch = true
			b.handlers--
		}
		b.cur = -1
		all := in.Op == wasm.OpCatchAll
		for _, t := range f.throwers {
			if all && t.tag >= 0 && f.caught[uint32(t.tag)] {
				continue // an earlier catch clause takes this tag
			}
			if all || t.tag < 0 || t.tag == int64(in.A) {
				if b.cur < 0 {
					b.cur = b.node()
				}
				b.excEdge(t.from, b.cur, in.Off)
			}
		}
		if all {
			f.caughtAll = true
		} else {
			if f.caught == nil {
				f.caught = map[uint32]bool{}
			}
			f.caught[in.A] = true
		}
	case wasm.OpDelegate:
		f := b.fs[len(b.fs)-1]
		if f.kind != frameTry || f.inCatch {
			return false, fmt.Errorf("delegate outside a try body")
		}
		b.handlers--
		b.fs = b.fs[:len(b.fs)-1]
		if int(in.A) >= len(b.fs) {
			return false, fmt.Errorf("delegate to label %d with only %d enclosing blocks", in.A, len(b.fs))
		}
		for _, t := range f.throwers {
			b.dispatch(t, len(b.fs)-1-int(in.A), in.Off)
		}
		b.finishBlock(f, cur, in.Off)
	case wasm.OpEnd:
		f := b.fs[len(b.fs)-1]
		b.fs = b.fs[:len(b.fs)-1]
		switch f.kind {
		case frameFunc:
			if cur >= 0 {
				b.edge(cur, Exit, EdgeReturn, in.Off)
			}
			b.cur = -1
			return true, nil
		case frameIf:
			if !f.hasElse && f.cond >= 0 {
				if f.end < 0 {
					f.end = b.node()
				}
				b.edge(f.cond, f.end, EdgeIfElse, f.ifOff)
			}
		case frameTry:
			if !f.inCatch {
				b.handlers--
			}
			for _, t := range f.throwers {
				if f.caughtAll || t.tag >= 0 && f.caught[uint32(t.tag)] {
					continue
				}
				b.dispatch(t, len(b.fs)-1, in.Off)
			}
		case frameTryTable:
			b.handlers--
		}
		b.finishBlock(f, cur, in.Off)
	case wasm.OpBr:
		if cur >= 0 {
			t, err := b.target(in.A)
			if err != nil {
				return false, err
			}
			if !b.threadJump(cur, t, in.Off) {
				b.edge(cur, t, EdgeBr, in.Off)
			}
		}
		b.cur = -1
	case wasm.OpBrIf, wasm.OpBrOnNull, wasm.OpBrOnNonNull:
		if cur >= 0 {
			t, err := b.target(in.A)
			if err != nil {
				return false, err
			}
			taken, not := EdgeBrIfTaken, EdgeBrIfNot
			if in.Op != wasm.OpBrIf {
				taken, not = EdgeBrOnNull, EdgeBrOnNullNot
			}
			b.edge(cur, t, taken, in.Off)
			n := b.node()
			b.edge(cur, n, not, in.Off)
			b.cur = n
		}
	case wasm.OpBrTable:
		if cur >= 0 {
			seen := map[int32]int32{}
			for arm, l := range in.Labels {
				t, err := b.target(l)
				if err != nil {
					return false, err
				}
				e, ok := seen[t]
				if !ok {
					e = b.edge(cur, t, EdgeBrTable, in.Off)
					seen[t] = e
				}
				b.g.Edges[e].Arms = append(b.g.Edges[e].Arms, uint32(arm))
			}
			if b.thread {
				b.noteDispatch(cur, in)
			}
		}
		b.cur = -1
	case wasm.OpReturn:
		if cur >= 0 {
			b.edge(cur, Exit, EdgeReturn, in.Off)
		}
		b.cur = -1
	case wasm.OpReturnCall, wasm.OpReturnCallIndirect, wasm.OpReturnCallRef:
		if cur >= 0 {
			// The callee replaces this frame, so its exceptions are
			// not caught here: no exception edges.
			b.edge(cur, Exit, EdgeTailCall, in.Off)
		}
		b.cur = -1
	case wasm.OpUnreachable:
		b.cur = -1
	case wasm.OpThrow, wasm.OpThrowRef, wasm.OpRethrow:
		if cur >= 0 {
			tag := int64(-1)
			if in.Op == wasm.OpThrow {
				tag = int64(in.A)
			}
			b.dispatch(thrower{from: cur, tag: tag, isThrow: true}, len(b.fs)-1, in.Off)
		}
		b.cur = -1
	case wasm.OpCall, wasm.OpCallIndirect, wasm.OpCallRef:
		if cur >= 0 {
			if b.handlers > 0 {
				b.dispatch(thrower{from: cur, tag: -1}, len(b.fs)-1, in.Off)
			}
			if in.Op == wasm.OpCall && b.noReturn != nil && b.noReturn(in.A) {
				b.edge(cur, Exit, EdgeNoReturn, in.Off)
				b.cur = -1
			} else if b.split {
				n := b.node()
				g := b.g
				g.Blocks[n].Cont = true
				b.edge(cur, n, EdgeCall, in.Off)
				b.cur = n
			}
		}
	}
	return false, nil
}

// finishBlock moves past the end of a block-like frame: flow continues in
// the join node when something branches there, else in the same block.
func (b *builder) finishBlock(f frame, cur int32, off uint32) {
	if f.end < 0 {
		b.cur = cur
		return
	}
	if cur >= 0 {
		b.edge(cur, f.end, EdgeFallthrough, off)
	}
	b.cur = f.end
}

// noteDispatch records node n, which ends with br_table in, as a dispatch
// loop's header when it is nothing but blocks, "local.get x" and in, at
// the start of a loop that takes no values.
func (b *builder) noteDispatch(n int32, in *wasm.Instr) {
	i := len(b.fs) - 1
	for i >= 0 && b.fs[i].kind == frameBlock {
		i--
	}
	if i < 0 || b.fs[i].kind != frameLoop || b.fs[i].header != n || !b.fs[i].plain {
		return
	}
	blocks := len(b.fs) - 1 - i
	if b.g.Blocks[n].Instrs != uint32(blocks)+2 || b.prev[1].Op != wasm.OpLocalGet {
		return
	}
	arms := make([]int32, len(in.Labels))
	for arm, l := range in.Labels {
		arms[arm] = b.frameTarget(len(b.fs) - 1 - int(l))
	}
	if b.dispatches == nil {
		b.dispatches = map[int32]*dispatch{}
	}
	b.dispatches[n] = &dispatch{local: b.prev[1].A, site: in.Off, arms: arms}
}

// threadJump adds the edges of "br" from node from to t, a dispatch
// loop's header, when the two instructions before it set the loop's
// local to a constant whose target comes later in the code; it reports
// whether it did.
func (b *builder) threadJump(from, t int32, off uint32) bool {
	d := b.dispatches[t]
	if d == nil {
		return false
	}
	c, set := b.prev[0], b.prev[1]
	if c.Op != wasm.OpI32Const || set.Op != wasm.OpLocalSet || set.A != d.local {
		return false
	}
	arm := len(d.arms) - 1
	if k := uint32(c.Const); uint64(k) < uint64(len(d.arms)-1) {
		arm = int(k)
	}
	to := d.arms[arm]
	// A target's node has instructions once the code reached it.
	if to == Exit || b.g.Blocks[to].Instrs > 0 {
		return false
	}
	n, ok := d.copies[arm]
	if !ok {
		n = b.node()
		h := b.g.Blocks[t]
		b.g.Blocks[n] = Block{Start: h.Start, End: h.End, Instrs: h.Instrs, Same: t}
		e := b.edge(n, to, EdgeThread, d.site)
		b.g.Edges[e].Arms = []uint32{uint32(arm)}
		if d.copies == nil {
			d.copies = map[int]int32{}
		}
		d.copies[arm] = n
	}
	b.edge(from, n, EdgeBr, off)
	return true
}
