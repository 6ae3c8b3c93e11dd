// The code the sampling copy runs where a path ends: the countdown, and
// the arm that records the path, which holds the locals a loop carries and
// a call's operands in globals across its own call.

package osp

import (
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/wasm"
)

// countdownEnd appends the code that Instrument runs where a path ends.
func countdownEnd(a *wasm.Asm, r rec, e endSite) (after []byte) {
	countDown(a, r.g.c, e.p)
	e.openArm(a)
	if e.branch >= 0 {
		// A loop's back edge, say: the path is recorded here. Elsewhere
		// (before calls, returns and joins) $tick records it, and the
		// arm stays small.
		word := int64(uint64(noStart)<<32 | uint64(e.fn))
		recordFast(a, r.g, func() { a.I64(word) }, e.p+1, e.p+1, e.p, func() { e.leave(a, 1) })
	}
	kept, ops := r.held.hold(a, e.keep, e.operands)
	a.I32(int32(e.fn)).Idx(wasm.OpLocalGet, e.p).Idx(wasm.OpGlobalGet, r.g.c).Idx(wasm.OpCall, r.tick).Idx(wasm.OpGlobalSet, r.g.c)
	for i, l := range e.keep {
		a.Idx(wasm.OpGlobalGet, kept[i]).Idx(wasm.OpLocalSet, l.Index)
	}
	for _, g := range ops {
		a.Idx(wasm.OpGlobalGet, g)
	}
	return e.closeArm(a)
}

// held hands out the globals that hold values across the call to $tick
// (see instrument.EndSite's Keep and Operands): the k-th value of a type
// at an arm goes to the k-th global of that type, for every arm alike,
// since only $tick runs between the store and the load.
type held struct {
	first uint32         // the index of the first
	types []wasm.ValType // of the globals first, first+1, ...
}

// hold appends the stores of the operands on the stack (the top first)
// and of the locals keep into their globals, and returns the globals of
// each.
func (h *held) hold(a *wasm.Asm, keep []instrument.Local, operands []wasm.ValType) (kept, ops []uint32) {
	if len(keep) == 0 && len(operands) == 0 {
		return nil, nil
	}
	nth := map[wasm.ValType]int{}
	slot := func(t wasm.ValType) uint32 {
		k := nth[t]
		nth[t]++
		g := h.first
		for _, u := range h.types {
			if u == t {
				if k == 0 {
					return g
				}
				k--
			}
			g++
		}
		h.types = append(h.types, t)
		return g
	}
	ops = make([]uint32, len(operands))
	for i, t := range operands {
		ops[i] = slot(t)
	}
	for i := len(ops) - 1; i >= 0; i-- {
		a.Idx(wasm.OpGlobalSet, ops[i])
	}
	kept = make([]uint32, len(keep))
	for i, l := range keep {
		kept[i] = slot(l.Type)
		a.Idx(wasm.OpLocalGet, l.Index).Idx(wasm.OpGlobalSet, kept[i])
	}
	return kept, ops
}

// globals returns the globals handed out, each initialised to zero.
func (h *held) globals() []wasm.Global {
	gs := make([]wasm.Global, len(h.types))
	for i, t := range h.types {
		var init wasm.Asm
		switch t {
		case wasm.ValI32:
			init.I32(0)
		case wasm.ValI64:
			init.I64(0)
		case wasm.ValF32:
			init.B = append(init.B, byte(wasm.OpF32Const), 0, 0, 0, 0)
		case wasm.ValF64:
			init.B = append(init.B, byte(wasm.OpF64Const), 0, 0, 0, 0, 0, 0, 0, 0)
		}
		init.Op(wasm.OpEnd)
		gs[i] = wasm.Global{GlobalType: wasm.GlobalType{Type: t, Mutable: true}, Init: init.B}
	}
	return gs
}

// rec is what the code at path ends uses: the recorder's globals and
// $tick.
type rec struct {
	g    globals
	tick uint32
	held *held
}

// countDown appends $c -= the block entries of the path in local p,
// leaving the new $c in local p+1 too.
func countDown(a *wasm.Asm, c, p uint32) {
	a.Idx(wasm.OpGlobalGet, c).Idx(wasm.OpLocalGet, p).Op(wasm.OpI32Wrap).I32(countMask).Op(wasm.OpI32And).Op(wasm.OpI32Sub)
	a.Idx(wasm.OpLocalTee, p+1).Idx(wasm.OpGlobalSet, c)
}

// endSite is a place where a path ends (see instrument.Segments.End).
type endSite struct {
	fn     uint32 // the function's original index
	p      uint32 // the local holding the packed path value; p+1 is a scratch i32
	branch int64  // the label of the branch that follows, instrument.Return, or -1
	block  int64  // instrument.EndSite.Block
	keep   []instrument.Local
	// operands are the values on the stack that the code after the arm
	// takes (a call's arguments, a return's results), held in globals
	// across $tick as keep is.
	operands []wasm.ValType
	call     []byte // instrument.EndSite.Call: the arm makes the call itself
}

// openArm appends the test of the countdown left in local p+1 and the
// start of the arm that runs when it is out. Where a branch without
// values follows (a loop's back edge, say), the test is an if whose
// only code is that branch, taken while the countdown is not out, and the
// arm is the code after it, which ends with the branch too. Not a br_if:
// the edge from a br_if to a loop's header is critical, and wazero (v1.12)
// splits such an edge with a branch that loses the comparison it tests,
// so that the comparison becomes a flag set, widened and tested again
// (cmp, setg, movzx, test, jnz, then the split edge's jmp); the if's
// branch is a compare and jump that falls through to the jmp.
// Elsewhere the arm is an if.
func (e endSite) openArm(a *wasm.Asm) {
	a.Idx(wasm.OpLocalGet, e.p+1)
	if e.branch >= 0 {
		a.I32(0).Op(wasm.OpI32GtS).Block(wasm.OpIf)
		a.Idx(wasm.OpBr, uint32(e.branch)+1).Op(wasm.OpEnd)
		return
	}
	a.I32(1).Op(wasm.OpI32LtS)
	if e.block >= 0 {
		a.BlockT(wasm.OpIf, uint32(e.block))
	} else {
		a.Block(wasm.OpIf)
	}
}

// leave appends what leaves the arm, from depth blocks inside it: the
// branch or the return that follows the arm, so that the arm does not
// join the code after it, or else a branch to the arm's end (nothing at
// depth 0).
func (e endSite) leave(a *wasm.Asm, depth uint32) {
	switch {
	case e.branch >= 0:
		if depth > 0 {
			a.Idx(wasm.OpBr, uint32(e.branch)+depth)
		}
	case e.branch == instrument.Return:
		a.Op(wasm.OpReturn)
	case depth > 0:
		a.Idx(wasm.OpBr, depth)
	}
}

// closeArm ends the arm: with the return that follows it, when there is
// one, so that it does not join the code after it; where a branch
// follows, with that branch (which may come only after a test of the
// condition it was taken on, saved in a local that would then live
// across the arm's call). Where a call follows, the arm makes it and the
// original call goes into an else, whose end closeArm returns; a tail
// call leaves the arm by itself.
func (e endSite) closeArm(a *wasm.Asm) (after []byte) {
	if e.branch >= 0 {
		a.Idx(wasm.OpBr, uint32(e.branch))
		return nil
	}
	if e.call != nil {
		a.B = append(a.B, e.call...)
		if op := wasm.Op(e.call[0]); op == wasm.OpReturnCall || op == wasm.OpReturnCallIndirect {
			a.Op(wasm.OpEnd)
			return nil
		}
		a.Op(wasm.OpElse)
		return []byte{byte(wasm.OpEnd)}
	}
	e.leave(a, 0)
	a.Op(wasm.OpEnd)
	return nil
}

// endFunc writes the code at a path end. The evaluation measures parts
// of the countdown's cost with others.
type endFunc func(a *wasm.Asm, r rec, e endSite) (after []byte)
