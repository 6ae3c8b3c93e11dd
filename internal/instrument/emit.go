// Emitting a function of a counting copy: its probes (counts in memory or
// in the counter module, hit counts, local loop counters) and, for a
// function whose calls are shared out among copies, the test at its start.

package instrument

import (
	"errors"
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/counters"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/wasm"
)

// callMix scatters a shared function's calls over its g slots: the n-th
// call's slot is ⌊g·frac(n/φ)⌋, frac(n/φ) being the high half of
// n·callMix (2^64 over the golden ratio, as Fibonacci hashing takes). By
// n mod g, calls that repeat a pattern (a program that formats every
// record with the same two calls of printf) would all land in the slots
// the pattern's period aliases with; frac(n/φ) is spread evenly over any
// subsequence n = a + p·m, and over the first n calls within a few calls
// of a g-th each, however few they are.
const callMix uint64 = 0x9e3779b97f4a7c15

// SliceOfCall is the slot of a shared function's n-th call (from 1) among
// slices, as the copies' test computes it.
func SliceOfCall(n uint64, slices int) int {
	return int((n * callMix >> 32) * uint64(slices) >> 32)
}

// mixI64 is callMix as an i64 immediate.
func mixI64() int64 {
	mix := callMix
	return int64(mix)
}

// slotOfMixed emits, for an i64 n·callMix on the stack, its slot among
// slices as an i32: the copies' side of SliceOfCall.
func slotOfMixed(a *wasm.Asm, slices int) {
	a.I64(32).Op(wasm.OpI64ShrU).I64(int64(slices)).Op(wasm.OpI64Mul).I64(32).Op(wasm.OpI64ShrU).Op(wasm.OpI32Wrap)
}

// emitSlices puts the test of a sliced function at the start of its body
// (defined function def, probes already in place): count the call in the
// function's global, and unless its slot is this copy's, call the unprobed
// body (function plain) and return what it returns.
func emitSlices(m *wasm.Module, def int, f *Func, plain uint32, hitsGlobal int64) error {
	ft, ok := m.FuncType(m.NumImportedFuncs + uint32(def))
	if !ok {
		return errors.New("no type")
	}
	calls := m.NumImportedGlobals + uint32(len(m.Globals))
	var init wasm.Asm
	init.I64(0).Op(wasm.OpEnd)
	m.Globals = append(m.Globals, wasm.Global{GlobalType: wasm.GlobalType{Type: wasm.ValI64, Mutable: true}, Init: init.B})
	m.Exports = append(m.Exports, wasm.Export{Name: CallsExport(f.Index), Kind: wasm.KindGlobal, Index: calls})
	m.Touch(wasm.SecGlobal)
	m.Touch(wasm.SecExport)
	var mask uint32
	for _, x := range f.Mode.Slots {
		mask |= 1 << x
	}
	var a wasm.Asm
	a.Idx(wasm.OpGlobalGet, calls).I64(1).Op(wasm.OpI64Add).Idx(wasm.OpGlobalSet, calls)
	if hitsGlobal >= 0 {
		a.Idx(wasm.OpGlobalGet, uint32(hitsGlobal)).I64(1).Op(wasm.OpI64Add).Idx(wasm.OpGlobalSet, uint32(hitsGlobal))
	}
	a.I32(int32(mask)).Idx(wasm.OpGlobalGet, calls).I64(mixI64()).Op(wasm.OpI64Mul)
	slotOfMixed(&a, f.Mode.Slices)
	a.Op(wasm.OpI32ShrU).I32(1).Op(wasm.OpI32And).Op(wasm.OpI32Eqz).Block(wasm.OpIf)
	for j := range ft.Params {
		a.Idx(wasm.OpLocalGet, uint32(j))
	}
	a.Idx(wasm.OpCall, plain).Op(wasm.OpReturn).Op(wasm.OpEnd)
	c := &m.Code[def]
	return c.Splice([]wasm.Edit{{Off: c.ExprOff, Ins: a.B}})
}

// variant is one placement of probes in a body: the function's own, or,
// where a loop's iterations are shared out (Mode.Loop), that of the code
// around the loop and those of the loop's replicas.
type variant struct {
	ops [][]numbering.Op // per Graph edge
	// extra holds, per Graph edge, code that runs after its probes in
	// the same sequence (nil: none).
	extra [][]byte
	// guard, when not negative, is an i32 local that every count
	// tests: the path is counted only when it is not 0.
	guard int64
	// uncounted marks a shared loop's bare replicas: its counted loops
	// (counted.go) run nothing either.
	uncounted bool
	// seqs is set by placement: per Graph edge, the sequences run when
	// the edge is taken.
	seqs []uint8
}

// emitFunc inserts the probes chosen by planFunc.
func emitFunc(m *wasm.Module, c *wasm.Code, f *Func, layout *counters.Layout, fns countFns, hitsGlobal int64, useLoopCounts bool) error {
	reg, idx := f.reg, f.idx
	loopSliced := f.Mode.Loop != 0
	dense := layout.Funcs[f.Index].Kind == counters.KindDense
	slot := layout.Slot(f.Index)
	// A hashed function whose counters are in the program's memory
	// keeps the path id of a count in a local of its own, after the
	// scratch locals.
	hashP := int64(-1)
	if !dense && fns.emb != nil {
		hashP = int64(f.next)
	}
	var lc *loopCounts
	var cl *countedLoops
	ops := f.ops
	// Locals this function adds after its scratch ones: a hashed count's
	// path id, the loop counters, a counted loop's trips.
	first := f.next
	if hashP >= 0 {
		first++
	}
	if useLoopCounts && f.Rev != nil && !loopSliced {
		addN := func(a *wasm.Asm, slot int64, l uint32) {
			fns.add(a, slot, idx+1, func() { a.Idx(wasm.OpLocalGet, l) })
		}
		if !dense {
			// A hashed function's counters flush through the
			// function that inserts paths into the table, which
			// adds n: a loop is left far less often than it turns.
			slot = 0
			addN = func(a *wasm.Asm, id int64, l uint32) {
				a.I32(int32(f.Index)).I64(id).Idx(wasm.OpLocalGet, l).Idx(wasm.OpCall, fns.hash)
			}
		}
		lc = planLoopCounts(f, first, slot, !dense, addN)
		if lc != nil && !dense && fns.emb != nil {
			// The embedded count_hash adds nothing for n = 0.
			lc.addsZero = true
		}
		if lc != nil && dense && fns.emb != nil {
			lc.addAll = func(a *wasm.Asm, e int32, slots []int64, push func(j int)) {
				if !callFlush(f, e) {
					fns.emb.AddValues(a, slots, push, idx+1)
					return
				}
				// Runs of consecutive slots, a call each.
				for i := 0; i < len(slots); {
					j := i + 1
					for j < len(slots) && j-i < counters.MaxAddLocals && slots[j] == slots[j-1]+1 {
						j++
					}
					fns.emb.CallAddValues(a, slots[i], j-i, func(k int) { push(i + k) })
					i = j
				}
			}
		}
		if lc != nil {
			f.LoopCounters, f.IterationCounters, f.PackedSites = int(lc.total), lc.iteration, lc.packedSites()
		}
	}
	if useLoopCounts && f.counted != nil {
		// Loops whose iterations local counters count keep them.
		cl = f.counted.without(lc.counts)
	}
	if cl != nil {
		ops = slices.Clone(ops)
		for b := range cl.back {
			ops[b] = nil
		}
		f.CountedLoops, f.bare = len(cl.back), cl.back
		// Declared after the loop counters (and their scratch).
		cl.trips = first
		switch {
		case lc != nil:
			cl.trips += lc.decl().Count
		case loopSliced && f.Mode.Spread:
			cl.trips += 4 // the flag and spreadLocals
		case loopSliced:
			cl.trips++ // the flag
		}
	}
	z := &sizer{}
	// lowest(e) is the lowest id a count on Graph edge e counts: 0 for
	// a loop counter's other case (e = -1), and where there is no
	// reverse numbering (a selective copy's).
	var lows map[int32]int64
	lowest := func(e int32) int64 {
		if e < 0 || f.Rev == nil {
			return 0
		}
		if lows == nil {
			lows = lowestIDs(f)
		}
		return lows[e]
	}
	// memCount appends a count op in memory (or a counter module).
	memCount := func(a *wasm.Asm, o numbering.Op, e int32) {
		mk, kind := z.mark(a), SizeHashed
		if dense {
			kind = SizeDense
		}
		defer z.end(kind, a, mk)
		push := func() {
			if o.Kind == numbering.CountConst {
				a.I64(o.Value)
				return
			}
			a.Idx(wasm.OpLocalGet, reg)
			if o.Value != 0 {
				a.AddI64(o.Value)
			}
		}
		switch {
		case dense && fns.emb != nil && callDense(f, e):
			if o.Kind == numbering.CountConst {
				a.I64(o.Value + slot)
			} else {
				a.Idx(wasm.OpLocalGet, reg).AddI64(o.Value + slot)
			}
			a.Idx(wasm.OpCall, fns.emb.CountDense)
		case dense && o.Kind == numbering.CountConst:
			fns.add(a, o.Value+slot, idx+1, nil)
		case dense:
			a.Idx(wasm.OpLocalGet, reg)
			fns.countID(a, slot, o.Value, lowest(e), idx+1)
		case hashP >= 0 && !callHash(f, e):
			push()
			a.Idx(wasm.OpLocalSet, uint32(hashP))
			fns.emb.HashCount(a, f.Index, uint32(hashP), idx+1)
		case fns.emb != nil:
			a.I32(int32(f.Index))
			push()
			a.Idx(wasm.OpCall, fns.emb.CountHash1)
		default:
			a.I32(int32(f.Index))
			push()
			a.I64(1).Idx(wasm.OpCall, fns.hash)
		}
	}
	// hit adds the run-time hit count of one sequence, when asked for.
	hit := func(a *wasm.Asm) {
		if hitsGlobal >= 0 {
			mk := z.mark(a)
			a.Idx(wasm.OpGlobalGet, uint32(hitsGlobal)).I64(1).Op(wasm.OpI64Add).Idx(wasm.OpGlobalSet, uint32(hitsGlobal))
			z.end(SizeHits, a, mk)
		}
	}
	// place returns the edits that put a variant's probes in the body,
	// ordered for Splice.
	place := func(v *variant) ([]wasm.Edit, error) {
		p := &placer{m: m, c: c, f: f, ops: v.ops, hit: hit, z: z, ifTaken: true}
		cl := cl
		if v.uncounted {
			cl = nil
		}

		p.has = func(e int32) bool {
			return len(v.ops[e]) > 0 || lc.flushes(e) || cl.has(e) || v.extra != nil && len(v.extra[e]) > 0
		}
		p.plain = func(e int32) bool {
			return !lc.flushes(e) && !cl.has(e) && (v.extra == nil || len(v.extra[e]) == 0)
		}
		p.emit = func(a *wasm.Asm, e int32, back int64) {
			if !p.has(e) {
				return
			}
			hit(a)
			if cl != nil {
				mk := z.mark(a)
				count := func(o numbering.Op) { memCount(a, o, -1) }
				var then []byte
				if v.guard >= 0 {
					// Outside a shared loop: the first iteration's
					// path is the flag's, the others slot 0's,
					// which this copy has (planAllCountedLoops),
					// and the path after the loop too.
					count = func(o numbering.Op) {
						a.Idx(wasm.OpLocalGet, uint32(v.guard)).Block(wasm.OpIf)
						memCount(a, o, -1)
						a.Op(wasm.OpEnd)
					}
					var fa wasm.Asm
					then = fa.I32(1).Idx(wasm.OpLocalSet, uint32(v.guard)).B
				}
				cl.emitExit(a, e, reg, then, count, func(id int64, push func(), zero bool) {
					if dense {
						fns.add(a, slot+id, idx+1, push)
						return
					}
					// count_hash of 0 would add the path to the table.
					if zero {
						a.Idx(wasm.OpLocalGet, cl.trips).I32(1).Op(wasm.OpI32Ne).Block(wasm.OpIf)
					}
					a.I32(int32(f.Index)).I64(id)
					push()
					a.Idx(wasm.OpCall, fns.hash)
					if zero {
						a.Op(wasm.OpEnd)
					}
				})
				z.end(SizeCountedLoop, a, mk)
			}
			for i, o := range v.ops[e] {
				mk := z.mark(a)
				if i == 0 && lc.counts(e) {
					lc.emitCount(a, e, o, reg, func() { memCount(a, o, -1) })
					z.end(SizeLoopCount, a, mk)
					continue
				}
				switch o.Kind {
				case numbering.Init:
					a.I64(o.Value).Idx(wasm.OpLocalSet, reg)
					z.end(SizeInit, a, mk)
				case numbering.Add:
					a.Idx(wasm.OpLocalGet, reg).AddI64(o.Value).Idx(wasm.OpLocalSet, reg)
					z.end(SizeAdd, a, mk)
				case numbering.Count, numbering.CountConst:
					if v.guard >= 0 {
						a.Idx(wasm.OpLocalGet, uint32(v.guard)).Block(wasm.OpIf)
						memCount(a, o, e)
						a.Op(wasm.OpEnd)
						z.end(SizeLoopSlices, a, mk)
					} else {
						memCount(a, o, e)
					}
				}
			}
			mk := z.mark(a)
			lc.emitFlush(a, e)
			z.end(SizeLoopFlush, a, mk)
			if cl != nil {
				mk := z.mark(a)
				cl.emitEntry(a, e)
				z.end(SizeCountedLoop, a, mk)
			}
			if v.extra != nil {
				mk := z.mark(a)
				a.B = append(a.B, v.extra[e]...)
				z.end(SizeLoopSlices, a, mk)
			}
		}
		list, err := p.place()
		v.seqs = p.seqs
		return list, err
	}
	// A hashed count's path id, the loop counters and the flag of a
	// function whose loop is shared out are declared last, after every
	// other local and in that order, so that the indices used above hold.
	var more []wasm.LocalDecl
	if hashP >= 0 {
		more = append(more, wasm.LocalDecl{Count: 1, Type: wasm.ValI64})
	}
	if loopSliced {
		flag := f.next + uint32(len(more))
		more = append(more, wasm.LocalDecl{Count: 1, Type: wasm.ValI32})
		var st spreadLocals
		if f.Mode.Spread {
			// After the flag: two i32s and an i64.
			st = spreadLocals{flag + 1, flag + 2, flag + 3}
			more = append(more, wasm.LocalDecl{Count: 2, Type: wasm.ValI32}, wasm.LocalDecl{Count: 1, Type: wasm.ValI64})
		}
		if err := emitLoopSlices(m, c, f, ops, place, hit, flag, st); err != nil {
			return err
		}
	} else {
		v := &variant{ops: ops, guard: -1}
		list, err := place(v)
		if err != nil {
			return err
		}
		f.seqs = v.seqs
		if list, err = shortest(c, f.scan.padded, list, z); err != nil {
			return err
		}
		if err := c.Splice(list); err != nil {
			return err
		}
	}
	if lc != nil {
		more = append(more, lc.decl())
	}
	if cl != nil {
		more = append(more, wasm.LocalDecl{Count: 1, Type: wasm.ValI32})
	}
	f.sizes = z.s
	if more == nil {
		return nil
	}
	// A declaration of the same type as the one before it extends
	// that one: two bytes less.
	ls := append([]wasm.LocalDecl(nil), c.Locals...)
	for _, d := range more {
		if n := len(ls); n > 0 && ls[n-1].Type == d.Type {
			ls[n-1].Count += d.Count
		} else {
			ls = append(ls, d)
		}
	}
	return c.SetLocals(ls)
}

// shortest merges into list, edits sorted for Splice, the rewriting of
// each padded instruction (offsets in c's body) to its shortest encoding,
// after the edits inserted before it and unless an edit replaces it: a
// linker pads the immediates it relocates, and the copy need not.
func shortest(c *wasm.Code, padded []uint32, list []wasm.Edit, z *sizer) ([]wasm.Edit, error) {
	if len(padded) == 0 {
		return list, nil
	}
	out := make([]wasm.Edit, 0, len(list)+len(padded))
	r := wasm.NewReader(c.Body, c.OrigOff, "code")
	var in wasm.Instr
	var saved int64
	// One array holds the rewritten instructions (mostly calls and
	// constants of two or three bytes).
	buf := make([]byte, 0, 4*len(padded))
	i := 0
	end := uint32(0) // where the edits so far stop deleting
	for _, off := range padded {
		for i < len(list) && list[i].Off <= off {
			if list[i].Off == off && list[i].Del > 0 {
				break
			}
			out = append(out, list[i])
			end = max(end, list[i].Off+list[i].Del)
			i++
		}
		if off < end || i < len(list) && list[i].Off == off {
			continue // replaced by an edit
		}
		r.Seek(int(off))
		if err := r.Next(&in); err != nil {
			return nil, err
		}
		if i < len(list) && list[i].Off < off+in.Len {
			continue // an edit inside it
		}
		n := len(buf)
		buf = wasm.AppendInstr(buf, &in)
		ins := buf[n:len(buf):len(buf)]
		saved += int64(in.Len) - int64(len(ins))
		out = append(out, wasm.Edit{Off: off, Del: in.Len, Ins: ins})
		end = off + in.Len
	}
	out = append(out, list[i:]...)
	if saved > 0 {
		z.rest(SizeShortest, -saved, z.attributed())
	}
	return out, nil
}

// countFns are the counter module's functions as the instrumented module
// imports them, or, with emb, the counters in the program's memory and the
// function counting hashed paths.
type countFns struct {
	count, hash, countN uint32
	emb                 *counters.Embedding
}

// countID appends the count of dense path id (the i64 on the stack) plus
// v, the function's first slot being slot, where no path counted there
// has an id below lo; addr is a scratch i32.
func (fns countFns) countID(a *wasm.Asm, slot, v, lo int64, addr uint32) {
	if fns.emb != nil {
		// v goes into the store's offset with the slot when their sum
		// is not negative (offsets are unsigned), and when the i32
		// address 8·id + Base cannot wrap below 0 without it: the id
		// on the stack is the path's minus v, so as low as lo - v (a
		// module without memory has its area at 0).
		if slot+v >= 0 && (v <= lo || 8*(v-lo) <= int64(fns.emb.Start())) {
			slot, v = slot+v, 0
		}
		if v != 0 {
			a.AddI64(v)
		}
		fns.emb.AddOne(a, slot, addr)
		return
	}
	if v += slot; v != 0 {
		a.AddI64(v)
	}
	a.Idx(wasm.OpCall, fns.count)
}

// add appends code adding what push pushes (an i64; nil: one) to the
// dense counter at slot; addr is a scratch i32.
func (fns countFns) add(a *wasm.Asm, slot int64, addr uint32, push func()) {
	switch {
	case fns.emb != nil:
		if push == nil {
			push = func() { a.I64(1) }
		}
		fns.emb.AddConst(a, slot, addr, push)
	case push == nil:
		a.I64(slot).Idx(wasm.OpCall, fns.count)
	default:
		a.I64(slot)
		push()
		a.Idx(wasm.OpCall, fns.countN)
	}
}

// lowestIDs returns, for f's Graph edges that end paths (into the exit,
// back edges and edges into cut vertices), the lowest reverse id of the
// paths whose count is on them: those that end at the edge's DAG edge
// into the exit. Other edges have none: lowest takes 0 for them. A count whose constant goes
// into the store's offset leaves an address that is the id's less the
// constant, so how low that can be is what allows it (countID).
func lowestIDs(f *Func) map[int32]int64 {
	lows := make(map[int32]int64)
	for x, de := range f.DAG.Edges {
		if de.To != cfg.Exit {
			continue
		}
		lo, _ := f.Rev.Range(int32(x))
		if de.Orig >= 0 {
			lows[de.Orig] = lo
		}
		for _, b := range de.Back {
			lows[b] = lo
		}
	}
	return lows
}

// callHash says whether a count of a hashed function on edge e calls the
// function that counts hashed paths rather than probing the table's first
// slot inline: where the path ends outside every loop, or in a loop that
// calls anyway (its live values are spilled around that call already), a
// call costs little, and the inline probe is five times its bytes. e is -1
// where the count is a loop counter's other case, a path that enters the
// loop from before its header: it runs once per entry into the loop, not
// per iteration, and calls too.
func callHash(f *Func, e int32) bool {
	if e < 0 {
		return true
	}
	if f.inlineHash {
		return false
	}
	in, calls := f.scan.innermostLoopCalls(f.Graph.Edges[e].Instr)
	return !in || calls
}

const (
	// inlineHashBytes is about what probing the hash table inline adds
	// to a count over the call of count_hash1.
	inlineHashBytes = 80
	// maxInlineHashCounts bounds the counts of a function that probes
	// inline: one with more is big, so that a call of it does far more
	// than the count's call, and compiling its copy costs more than the
	// probes save.
	maxInlineHashCounts = 32
)

// inlineHashBudget is the most bytes inline probes may add to a module of
// code bytes of code: 1/128 of it, and 64 KiB at least.
func inlineHashBudget(code int64) int64 { return max(64<<10, code/128) }

// chooseInlineHash lets the hashed functions whose counts would call
// count_hash1, at most maxInlineHashCounts of them, probe the table inline
// instead, the functions with the fewest such counts first, while the
// bytes this adds stay within inlineHashBudget. Where a path ends outside
// the loops, the call costs little next to a loop's work, but a hashed
// function called over and over (libm's sin, whose argument reduction
// gives it millions of paths) pays it on every return; the budget keeps
// the copies of big modules, where such counts are tens of thousands,
// about as small as with calls.
func chooseInlineHash(funcs []*Func, layout *counters.Layout, code int64) {
	type cand struct {
		f     *Func
		sites int
	}
	var cs []cand
	for _, f := range funcs {
		if f.Placement == nil || f.ops == nil || layout.Funcs[f.Index].Kind != counters.KindHash {
			continue
		}
		n := 0
		for e, ops := range f.ops {
			for _, o := range ops {
				if (o.Kind == numbering.Count || o.Kind == numbering.CountConst) && callHash(f, int32(e)) {
					n++
				}
			}
		}
		if f.hashCalls = n; n > 0 && n <= maxInlineHashCounts {
			cs = append(cs, cand{f, n})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.sites - b.sites })
	budget := inlineHashBudget(code)
	for _, c := range cs {
		if budget -= int64(c.sites) * inlineHashBytes; budget < 0 {
			return
		}
		c.f.inlineHash = true
	}
}

// callDense says whether a dense count on edge e calls CountDense, a third
// of the inline add's bytes, in a function with a loop that calls: where
// the path ends outside every loop or returns, once per call beside the
// loops' iterations and calls, and where it enters a loop from one that
// calls anyway, once per entry into the loop. The return of a function
// without such loops is about as hot as its calls (a small loop is soon
// done), and a count at a back edge as its loop: calls there cost the Go
// programs and the interpreters run time (docs/instrumentation.md).
func callDense(f *Func, e int32) bool {
	if e < 0 || !f.scan.loopCalls {
		return false
	}
	ge := f.Graph.Edges[e]
	if ge.Kind == cfg.EdgeReturn {
		return true
	}
	in, calls := f.scan.innermostLoopCalls(ge.Instr)
	if !in {
		return true
	}
	if ge.Back || ge.To == cfg.Entry || ge.To == cfg.Exit || !calls {
		return false
	}
	return slices.ContainsFunc(f.Graph.Blocks[ge.To].In, func(x int32) bool { return f.Graph.Edges[x].Back })
}

// callFlush says whether the flush of loop counters on Graph edge e, which
// leaves their loop, calls a function of the counters rather than adding
// them inline: where the edge leads out of every loop, or into a loop that
// calls anyway, as callHash.
func callFlush(f *Func, e int32) bool {
	to := f.Graph.Edges[e].To
	if to == cfg.Entry || to == cfg.Exit {
		return true
	}
	in, calls := f.scan.innermostLoopCalls(f.Graph.Blocks[to].Start)
	return !in || calls
}
