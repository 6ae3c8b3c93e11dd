package tracer

// This file follows a traced run: the listener that keeps the call stack
// from wazero's calls, returns and aborts, and the trie of paths that the
// block events walk.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/profile"
)

// visibleFrames is the most frames wazero v1.12 shows: its stack iterator
// and its Abort calls after a trap stop at wasmdebug.MaxFrames (30) return
// addresses, one of which is the entry trampoline's. A deeper stack shows
// only its top 29 frames, and the frames below get no Abort.
const visibleFrames = 29

// frame is one wasm call in progress.
type frame struct {
	def  api.FunctionDefinition
	fn   *Func // nil unless a traced function of the program
	host bool
	cur  int32 // trie node of the path in progress, or -1
}

// tnode is a node of the trie of paths: the path from its root to it.
// Paths that share a prefix share nodes, so a block event costs a short
// list walk and no allocation once the path has been seen.
type tnode struct {
	fn     *Func
	block  int32
	parent int32 // -1 at a root
	entry  bool  // the path began at the function entry
	kids   int32 // first child in state.kids, -1 for none
	// count[0] counts the path ending at a back (or cut) edge,
	// count[1] at the exit.
	count [2]uint64
}

// kid is a transition from a trie node to a block: to the node that
// extends the path, or, across a back or cut edge, to the root of the
// next path.
type kid struct {
	block   int32
	node    int32
	next    int32
	restart bool
}

// state follows one run. It is the listener factory and the receiver of
// block events.
type state struct {
	t     *Traced
	res   *Result
	stack []frame
	nodes []tnode
	kids  []kid
	// Roots of the trie per defined function: the path from the entry,
	// and the paths from back-edge targets.
	entryRoot []int32
	backRoots []map[int32]int32
	calls     []CallStats
	// unwinding is set by an Abort until the next event of another kind:
	// only the first Abort of an unwinding sees the frame where it began.
	unwinding bool
	exiting   bool // proc_exit was called
	err       error
	callers   []api.FunctionDefinition
	// The runtime, and the buffer module's memory and write position,
	// found in it at the first drain.
	rt  wazero.Runtime
	mem api.Memory
	pos api.MutableGlobal
	// region is nil without a region of interest.
	region *regionState
}

func newState(t *Traced) *state {
	st := &state{
		t:         t,
		res:       &Result{Traced: t, Paths: map[Key]uint64{}, Calls: map[uint32]*CallStats{}},
		entryRoot: make([]int32, len(t.Funcs)),
		backRoots: make([]map[int32]int32, len(t.Funcs)),
		calls:     make([]CallStats, len(t.Funcs)),
		region:    newRegionState(t.Region),
	}
	for i := range st.entryRoot {
		st.entryRoot[i] = -1
	}
	return st
}

func (st *state) fail(format string, args ...any) {
	if st.err == nil {
		st.err = fmt.Errorf(format, args...)
	}
}

// listener is the listener of one function.
type listener struct {
	st       *state
	fn       *Func // traced function of the program, or nil
	host     bool
	procExit bool
}

// NewFunctionListener listens to every function but the tracer's own:
// host functions matter too, because a tail call to one replaces its
// caller and proc_exit ends its caller's path.
func (st *state) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	l := &listener{st: st, host: def.GoFunction() != nil}
	switch {
	case def.ModuleName() == ImportModule || def.ModuleName() == flushModule:
		return nil
	case l.host:
		l.procExit = def.ModuleName() == procExit[0] && def.Name() == procExit[1]
	default:
		l.fn = st.funcOf(def)
	}
	return l
}

// funcOf returns the traced function a program function definition is,
// or nil.
func (st *state) funcOf(def api.FunctionDefinition) *Func {
	if def.GoFunction() != nil {
		return nil
	}
	// The added import shifted every defined function up by one.
	idx := def.Index()
	if idx <= st.t.NumImportedFuncs || int(idx-1-st.t.NumImportedFuncs) >= len(st.t.Funcs) {
		return nil
	}
	f := &st.t.Funcs[idx-1-st.t.NumImportedFuncs]
	if f.Skipped != "" {
		return nil
	}
	return f
}

func (st *state) stats(f *Func) *CallStats { return &st.calls[f.Index-st.t.NumImportedFuncs] }

func sameDef(a, b api.FunctionDefinition) bool {
	return a == b || a.Index() == b.Index() && a.ModuleName() == b.ModuleName() && (a.GoFunction() == nil) == (b.GoFunction() == nil)
}

func (st *state) top() *frame { return &st.stack[len(st.stack)-1] }

// mayVanish reports whether wazero may drop fr without an After or
// Abort: when it tail-calls, or throws an exception that a caller
// catches. A traced frame does either only from a block that ends so.
func (fr *frame) mayVanish(st *state) bool {
	if fr.fn == nil {
		return true
	}
	if fr.cur < 0 {
		return false
	}
	s := fr.fn.exits[st.nodes[fr.cur].block]
	return s.has(cfg.EdgeTailCall) || s.has(cfg.EdgeThrow)
}

func (l *listener) Before(_ context.Context, _ api.Module, def api.FunctionDefinition, _ []uint64, si experimental.StackIterator) {
	st := l.st
	if st.drain(); st.err != nil {
		return
	}
	st.unwinding = false
	// The iterator starts at the callee itself.
	if !si.Next() {
		st.fail("call of %s with an empty stack", def.DebugName())
		return
	}
	var caller api.FunctionDefinition
	if si.Next() {
		caller = si.Function().Definition()
	}
	normal := true
	switch {
	case len(st.stack) == 0:
		if caller != nil {
			st.fail("call of %s from %s, which was never called", def.DebugName(), caller.DebugName())
			return
		}
	case st.top().mayVanish(st):
		v, ok := st.vanished(caller, si)
		if !ok {
			return
		}
		normal = v == 0
		st.vanish(v)
	case caller == nil || !sameDef(caller, st.top().def):
		st.fail("call of %s from %v, but the top frame is %s", def.DebugName(), caller, st.top().def.DebugName())
		return
	}
	if l.procExit {
		st.exiting = true
		// After a tail call the stack no longer shows who called.
		if normal && caller != nil {
			if f := st.funcOf(caller); f != nil {
				st.stats(f).Exits++
			}
			st.complete(st.top(), cfg.EdgeNoReturn)
		}
	}
	if l.fn != nil {
		st.stats(l.fn).Calls++
	}
	st.enterRegion(def, l.fn)
	st.stack = append(st.stack, frame{def: def, fn: l.fn, host: l.host, cur: -1})
}

// vanished returns how many frames on top of the stack are gone, by
// matching the callers the iterator shows against the frames.
func (st *state) vanished(caller api.FunctionDefinition, si experimental.StackIterator) (int, bool) {
	cs := st.callers[:0]
	if caller != nil {
		cs = append(cs, caller)
		for si.Next() {
			cs = append(cs, si.Function().Definition())
		}
	}
	st.callers = cs
	shown := len(cs) + 1 // and the callee
	matches := func(v int) bool {
		for k, c := range cs {
			i := len(st.stack) - 1 - v - k
			if i < 0 || !sameDef(st.stack[i].def, c) {
				return false
			}
		}
		return true
	}
	if shown < visibleFrames {
		// The whole stack is in view: its depth says how many went.
		if v := len(st.stack) - len(cs); v >= 0 && matches(v) {
			return v, true
		}
	} else {
		for v := 0; v < len(st.stack); v++ {
			if matches(v) {
				return v, true
			}
		}
	}
	st.fail("the call stack wazero shows (%d frames below the callee) matches none of the %d frames known", len(cs), len(st.stack))
	return 0, false
}

func (l *listener) After(_ context.Context, _ api.Module, def api.FunctionDefinition, _ []uint64) {
	st := l.st
	if st.drain(); st.err != nil {
		return
	}
	st.unwinding = false
	if !st.reach(def) {
		return
	}
	fr := st.top()
	if fr.fn != nil {
		st.stats(fr.fn).Returns++
		st.complete(fr, cfg.EdgeReturn)
	}
	st.stack = st.stack[:len(st.stack)-1]
	st.leaveRegion(*fr)
}

func (l *listener) Abort(_ context.Context, _ api.Module, def api.FunctionDefinition, err error) {
	st := l.st
	if st.drain(); st.err != nil {
		return
	}
	first := !st.unwinding
	st.unwinding = true
	if !st.reach(def) {
		return
	}
	fr := st.top()
	// An exception that nothing catches aborts the frame that threw it
	// first; if its block ends in a throw, the throw left the function
	// and ended the path.
	if first && !st.exiting && fr.fn != nil && fr.cur >= 0 &&
		fr.fn.exits[st.nodes[fr.cur].block].has(cfg.EdgeThrow) && strings.Contains(err.Error(), "uncaught exception") {
		st.complete(fr, cfg.EdgeThrow)
	}
	st.pop()
}

// reach makes the frame of def the top one, before its After or Abort:
// frames above it were dropped unseen by a tail call or an exception.
func (st *state) reach(def api.FunctionDefinition) bool {
	i := len(st.stack) - 1
	for i >= 0 && !sameDef(st.stack[i].def, def) {
		i--
	}
	if i < 0 {
		st.fail("%s ended, but it has no frame", def.DebugName())
		return false
	}
	if i < len(st.stack)-1 && !st.top().mayVanish(st) {
		st.fail("%s ended while %s, above it, is still running", def.DebugName(), st.top().def.DebugName())
		return false
	}
	st.vanish(len(st.stack) - 1 - i)
	return true
}

// vanish removes the n top frames, which wazero dropped without an After
// or Abort. The topmost left by a tail call or a throw out of the
// function, which ended its path; any frame below it was in a call that
// the exception passed through, so its path is unfinished.
func (st *state) vanish(n int) {
	for k := 0; k < n && st.err == nil; k++ {
		fr := st.top()
		if k == 0 && fr.fn != nil && fr.cur >= 0 {
			switch s := fr.fn.exits[st.nodes[fr.cur].block]; {
			case s.has(cfg.EdgeTailCall):
				st.complete(fr, cfg.EdgeTailCall)
			case s.has(cfg.EdgeThrow):
				st.complete(fr, cfg.EdgeThrow)
			}
		}
		st.pop()
	}
}

// pop removes the top frame of a call that did not return, dropping the
// path in progress.
func (st *state) pop() {
	fr := st.top()
	if fr.fn != nil {
		st.stats(fr.fn).Unwound++
		if fr.cur >= 0 {
			st.res.Dropped++
		}
	}
	st.stack = st.stack[:len(st.stack)-1]
	st.leaveRegion(*fr)
}

// block takes one block event: the top frame, of function fn, entered
// block b.
func (st *state) block(fn, b uint32) {
	st.unwinding = false
	st.res.Events++
	if len(st.stack) == 0 {
		st.fail("block %d of function %d entered with no frame", b, fn)
		return
	}
	fr := st.top()
	f := fr.fn
	if f == nil || f.Index != fn {
		st.fail("block %d of function %d entered while the top frame is %s", b, fn, fr.def.DebugName())
		return
	}
	if b < 2 || int(b) >= len(f.Graph.Blocks) {
		st.fail("function %d has no block %d", fn, b)
		return
	}
	n := int32(b)
	if fr.cur < 0 {
		if n != f.first {
			st.fail("function %d began at block %d (offset %d), not at its first block %d", fn, n, f.Offsets[n], f.first)
			return
		}
		d := f.Index - st.t.NumImportedFuncs
		if st.entryRoot[d] < 0 {
			st.entryRoot[d] = st.newNode(f, n, -1, true)
		}
		fr.cur = st.entryRoot[d]
		return
	}
	k := st.nodes[fr.cur].kids
	for k >= 0 && st.kids[k].block != n {
		k = st.kids[k].next
	}
	if k < 0 {
		if k = st.newKid(fr.cur, n); k < 0 {
			return
		}
	}
	if st.kids[k].restart && st.counting() {
		st.nodes[fr.cur].count[0]++
	}
	fr.cur = st.kids[k].node
}

// newKid adds the transition from trie node cur to block n, checking
// that an edge allows it; it returns -1 if none does.
func (st *state) newKid(cur, n int32) int32 {
	t := &st.nodes[cur]
	f, prev := t.fn, t.block
	edge := int32(-1)
	for _, e := range f.Graph.Blocks[prev].Out {
		if f.Graph.Edges[e].To == n {
			edge = e
			break
		}
	}
	if edge < 0 {
		st.fail("function %d went from block %d (offset %d) to block %d (offset %d), which no edge joins",
			f.Index, prev, f.Offsets[prev], n, f.Offsets[n])
		return -1
	}
	kd := kid{block: n, next: t.kids, restart: f.Restart[edge]}
	if kd.restart {
		d := f.Index - st.t.NumImportedFuncs
		if st.backRoots[d] == nil {
			st.backRoots[d] = map[int32]int32{}
		}
		r, ok := st.backRoots[d][n]
		if !ok {
			r = st.newNode(f, n, -1, false)
			st.backRoots[d][n] = r
		}
		kd.node = r
	} else {
		kd.node = st.newNode(f, n, cur, st.nodes[cur].entry)
	}
	st.kids = append(st.kids, kd)
	k := int32(len(st.kids) - 1)
	st.nodes[cur].kids = k
	return k
}

func (st *state) newNode(f *Func, block, parent int32, entry bool) int32 {
	st.nodes = append(st.nodes, tnode{fn: f, block: block, parent: parent, entry: entry, kids: -1})
	return int32(len(st.nodes) - 1)
}

// complete counts the path of fr as ending in the exit through an edge of
// kind k (EdgeReturn standing for any edge a normal return takes).
func (st *state) complete(fr *frame, k cfg.EdgeKind) {
	if fr.fn == nil {
		return
	}
	if fr.cur < 0 {
		st.fail("%s left before entering a block", fr.def.DebugName())
		return
	}
	last := st.nodes[fr.cur].block
	s := fr.fn.exits[last]
	if ok := k == cfg.EdgeReturn && s.returns() || k != cfg.EdgeReturn && s.has(k); !ok {
		// proc_exit called through call_indirect ends no path in the
		// graph: the path is cut short, as by a trap.
		if k == cfg.EdgeNoReturn {
			return
		}
		st.fail("function %d left by %s from block %d (offset %d), which has no such edge into the exit",
			fr.fn.Index, k, last, fr.fn.Offsets[last])
		return
	}
	if st.counting() {
		st.nodes[fr.cur].count[1]++
	}
	fr.cur = -1
}

// finish checks the stack once the program has ended and turns the trie
// into the result.
func (st *state) finish(res runner.Result) {
	st.res.Run = res
	if st.err == nil && len(st.stack) > 0 {
		if !st.exiting && res.Trap == nil {
			st.fail("%d frames left on the stack when the program ended", len(st.stack))
		}
		// Frames deeper than wazero shows get no Abort.
		for len(st.stack) > 0 {
			st.pop()
		}
	}
	st.res.Region = st.region.record()
	for i := range st.calls {
		if st.calls[i] != (CallStats{}) {
			c := st.calls[i]
			st.res.Calls[st.t.NumImportedFuncs+uint32(i)] = &c
		}
	}
	var path []int32
	var b []byte
	for i := range st.nodes {
		t := &st.nodes[i]
		if t.count == [2]uint64{} {
			continue
		}
		path = path[:0]
		for j := int32(i); j >= 0; j = st.nodes[j].parent {
			path = append(path, st.nodes[j].block)
		}
		b = b[:0]
		for j := len(path) - 1; j >= 0; j-- {
			if j < len(path)-1 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(t.fn.Offsets[path[j]]), 10)
		}
		for exit, n := range t.count {
			if n == 0 {
				continue
			}
			kind := profile.KindBackBack
			switch {
			case t.entry && exit == 1:
				kind = profile.KindEntryExit
			case t.entry:
				kind = profile.KindEntryBack
			case exit == 1:
				kind = profile.KindBackExit
			}
			st.res.Paths[Key{Func: t.fn.Index, Kind: kind, Blocks: string(b)}] += n
		}
	}
}
