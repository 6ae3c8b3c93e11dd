// Shared loop iterations (Mode.Loop): a loop's body unrolled so that each
// copy probes the iterations of its slots.

package instrument

import (
	"errors"
	"fmt"
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/wasm"
)

// Shared loop iterations (Mode.Loop).
//
// A hot loop in a function called once cannot be shared out by calls, and
// no split of its paths pays: every class of a loop pays each iteration's
// back edge. Its iterations can be shared out at no cost per iteration,
// though, by unrolling the loop g times (g = Mode.Slices):
//
//	block $exit (the loop's type)
//	  loop $top (the loop's type)
//	    block $b_g-1 ... block $b_1
//	          body_0  (continue: br $b_1; falls out: br $exit)
//	        end
//	        body_1    (continue: br $b_2; falls out: br $exit)
//	    ...
//	    end
//	    body_g-1      (continue: br $top; falls out: end)
//	  end
//	end
//
// Replica r runs the iterations n with n mod g = r, counted from 0 at each
// entry, and nothing tests it. Where an iteration runs many probes, a plan
// may deal the iterations out by a test instead (Mode.Spread,
// spreadReplicas): the same replicas behind a br_table at the top of the
// loop, each block of g iterations over every replica in a ring rotated
// block by block, so that work that follows a residue of the loop's
// counter does not all land in one slot. A Ball-Larus path lies in one iteration at
// most, so the copy of that iteration's slot counts it: a copy probes the
// replicas of its slots as the whole function would be probed, and leaves
// the others bare. The paths that never enter the loop are slot 0's.
//
// Around the loop the copy of slot 0 runs the function's probes, and
// every other copy those on the tails of the paths that leave the loop,
// so that such a path is numbered right (trimOutside); the copies tell
// whose a path is by an i32 flag local that every count outside the loop
// tests. The flag is set where a path starts (to whether the copy has
// slot 0) and where one leaves the loop (to whether the copy has the
// replica's slot). The back edges of a bare replica do not reset the path register,
// which the replicas a copy probes then find as their own back edges left
// it: the register's value at the header is the same after every back
// edge. A copy without slot 0 sets it as it enters the loop.
//
// A branch in the loop that continues an enclosing loop ends the path in
// the replica's slot and starts one around the loop: a bare replica
// starts it too (the register and the flag), without the count.
//
// Where every path through the header starts there (a header that is a
// cut), the placement may fold the initialisation into the body's first
// increments, off the back edges: each path then sets the register itself,
// and neither the bare replicas nor a copy without slot 0 need to.
//
// Several loops (Mode.Loops) are unrolled alike, each with its own
// replicas and the same slots, when every header is a cut and none nests
// in another: a path that leaves one loop then ends at the next loop's
// header at the latest, so its flag, set where it left, decides its count
// there, and the next loop's first iteration starts a path of its own.
// The code around the loops is one, probed as around a single loop.
//
// Refused: loops with parameters, and loops with a branch instruction
// that may both continue the loop (or one in it) and an enclosing loop: a
// profile does not tell which it took, so hits could not be computed.

// loopAt is a loop instruction of a body.
type loopAt struct {
	off, end uint32 // the loop instruction and its end
	bt       wasm.BlockType
	params   bool
}

// region is a loop whose iterations can be shared out.
type region struct {
	loopAt
	body uint32 // offset of the body's first instruction
}

// in reports whether body offset off lies in the loop's body.
func (r *region) in(off uint32) bool { return off >= r.body && off < r.end }

// CanShareLoop says why the iterations of the loop whose header is Graph
// block h cannot be shared out (Mode.Loop), or returns nil when they can.
// It reads the body's scan, which a profiled function drops once emitted
// (Func.emitted): ask a function its Instrument did not profile, as
// profiler.Build asks its analysis; a profiled one says no loop can.
func (f *Func) CanShareLoop(h int32) error {
	_, err := f.sharedLoop(h)
	return err
}

// LoopBytes is the size of the code that each replica of the loop whose
// header is Graph block h repeats (its body), or 0 when its iterations
// cannot be shared out (as CanShareLoop, so 0 for a profiled function).
// Shared out in g slots, the function grows by g-1 times it, whatever
// lies around the loop.
func (f *Func) LoopBytes(h int32) int {
	r, err := f.sharedLoop(h)
	if err != nil {
		return 0
	}
	return int(r.end - r.body)
}

// CanShareLoops says why the iterations of the loops whose headers are
// Graph blocks hs cannot be shared out together (Mode.Loop with
// Mode.Loops), or returns nil when they can: each as CanShareLoop says,
// and, for more than one, each header a cut and no loop nested in
// another. It reads the scan as CanShareLoop does.
func (f *Func) CanShareLoops(hs []int32) error {
	_, err := f.sharedLoops(hs)
	return err
}

// sharedLoops returns the regions of the loops whose headers are hs,
// checked as CanShareLoops says.
func (f *Func) sharedLoops(hs []int32) ([]*region, error) {
	var rs []*region
	for _, h := range hs {
		r, err := f.sharedLoop(h)
		if err != nil {
			return nil, err
		}
		if len(hs) > 1 && !slices.Contains(f.Cuts, h) {
			return nil, fmt.Errorf("the loop at block %d is shared out with others, and its header is not a cut", h)
		}
		for j, o := range rs {
			if r.off <= o.end && o.off <= r.end {
				return nil, fmt.Errorf("the loops at blocks %d and %d overlap", hs[j], h)
			}
		}
		rs = append(rs, r)
	}
	return rs, nil
}

func (f *Func) sharedLoop(h int32) (*region, error) {
	g := f.Graph
	if g == nil || f.scan == nil || h < 2 || int(h) >= len(g.Blocks) {
		return nil, fmt.Errorf("no block %d", h)
	}
	lp, ok := f.scan.loops[g.Blocks[h].Start]
	if !ok || g.Blocks[h].Instrs == 0 {
		return nil, fmt.Errorf("block %d is not a loop's header", h)
	}
	if lp.params {
		return nil, fmt.Errorf("the loop at block %d takes parameters", h)
	}
	r := &region{loopAt: lp, body: g.Blocks[h].Start}
	back := false
	leaves := map[uint32]bool{} // per branch instruction
	for _, e := range g.Edges {
		if e.Kind == cfg.EdgeEntry || !r.in(e.Instr) || !e.Back {
			continue
		}
		out := !r.nodeIn(g, e.To)
		if l, ok := leaves[e.Instr]; ok && l != out {
			return nil, fmt.Errorf("a branch in the loop at block %d continues both it and an enclosing loop", h)
		}
		leaves[e.Instr] = out
		back = back || e.To == h
	}
	if !back {
		return nil, fmt.Errorf("block %d has no back edge", h)
	}
	if b := r.ending(g); b >= 0 {
		for _, e := range g.Blocks[b].In {
			if x := g.Edges[e]; x.Back || x.Kind == cfg.EdgeEntry || !r.in(x.Instr) {
				return nil, fmt.Errorf("the block that ends the loop at block %d is entered from outside it", h)
			}
		}
	}
	return r, nil
}

// nodeIn reports whether Graph block n starts in the loop's body.
func (r *region) nodeIn(g *cfg.Graph, n int32) bool {
	return n >= 2 && g.Blocks[n].Instrs > 0 && r.in(g.Blocks[n].Start)
}

// ending returns the block that holds the loop's end, or -1 when falling
// out of the loop is unreachable.
func (r *region) ending(g *cfg.Graph) int32 {
	for b, blk := range g.Blocks {
		// A block may start at the end itself, joining branches out
		// of blocks in the body.
		if b >= 2 && blk.Instrs > 0 && blk.Start >= r.body && blk.Start <= r.end && blk.End > r.end {
			return int32(b)
		}
	}
	return -1
}

// loopSlices is what a function whose loop iterations are shared out
// needs for its hit counts.
type loopSlices struct {
	// inside marks the Graph edges whose probes sit in the loop's
	// body, where each replica has its own.
	inside []bool
	// own and bare are the sequences per Graph edge in the replicas the
	// copy probes and in the others (inside edges only; f.seqs holds
	// the others').
	own, bare []uint8
	// leaves marks the back edges in the loop that continue an
	// enclosing loop: a bare replica runs their sequence too.
	leaves []bool
	// quiet marks, in a copy without slot 0, the edges around the loop
	// that end paths and run nothing there (trimOutside).
	quiet []bool
	// spread holds the headers of the loops whose iterations are dealt
	// out by a test at each (spreadReplicas).
	spread []int32
}

// isSpread reports whether the loop at Graph block h deals out its
// iterations by a test at each.
func (ls *loopSlices) isSpread(h int32) bool {
	return ls != nil && slices.Contains(ls.spread, h)
}

// isQuiet reports whether the path end at back edge e is one a copy
// without slot 0 leaves quiet around the loop (false without a shared
// loop).
func (ls *loopSlices) isQuiet(e int32) bool {
	return ls != nil && ls.quiet != nil && ls.quiet[e]
}

// trimOutside leaves out, around the loop, the probes that a copy without
// slot 0 runs for other copies only. Such a copy counts no path that
// never enters the loop, nor the first iteration's, so of the code around
// the loop it needs only the tails of the paths that leave the loop from
// its replicas: the edges reached from an exit of the loop before the path
// ends, with the ends (their count, and the flag's reset). Elsewhere its
// flag is already false, every count there skipped, so the register's
// value does not matter: those edges keep only the setting of the register
// on entering the loop. It returns the path ends left quiet.
func trimOutside(g *cfg.Graph, outside *variant, inside, ends []bool, leaves func(int32) bool, header func(int32) bool) []bool {
	tail := make([]bool, len(g.Edges))
	var todo []int32
	seen := make([]bool, len(g.Blocks))
	// The edges that leave a loop: from its body, and out of the block
	// that holds its end, whose branch lies after the end.
	for i, e := range g.Edges {
		if e.Kind == cfg.EdgeEntry || !leaves(int32(i)) {
			continue
		}
		tail[i] = !inside[i]
		if !ends[i] && e.To != cfg.Exit && !seen[e.To] {
			seen[e.To] = true
			todo = append(todo, e.To)
		}
	}
	for len(todo) > 0 {
		v := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, e := range g.Blocks[v].Out {
			tail[e] = true
			if to := g.Edges[e].To; !ends[e] && to != cfg.Exit && !seen[to] {
				seen[to] = true
				todo = append(todo, to)
			}
		}
	}
	ops := make([][]numbering.Op, len(g.Edges))
	quiet := make([]bool, len(g.Edges))
	for i, e := range g.Edges {
		switch {
		case inside[i] || tail[i]:
			ops[i] = outside.ops[i]
		case header(e.To):
			// The register's setting on entering a loop stays.
		default:
			outside.extra[i] = nil
			quiet[i] = ends[i]
		}
	}
	outside.ops = ops
	return quiet
}

// ringReplicas writes, after the opening of $exit, the loop of the
// replicas of a loop, n of them in a ring (code for the slots own marks,
// bare for the others): replica r runs the iterations i with i mod n = r
// of each entry, and nothing tests it.
func ringReplicas(a *wasm.Asm, lp *region, n int, own []bool, probed, bare []byte, hit func(*wasm.Asm), setFlag func(bool) []byte) error {
	a.B = wasm.AppendInstr(a.B, &wasm.Instr{Op: wasm.OpLoop, Block: lp.bt})
	for range n - 1 {
		a.Block(wasm.OpBlock)
	}
	for r := range n {
		// Labels beyond the loop's are now n-r deeper: the blocks
		// of the later replicas, the new loop and $exit.
		if err := appendReplica(a, own[r], probed, bare, uint32(n-r), hit, setFlag); err != nil {
			return err
		}
		if r < n-1 {
			a.Idx(wasm.OpBr, uint32(n-r)).Op(wasm.OpEnd)
		}
	}
	a.Op(wasm.OpEnd).Op(wasm.OpEnd)
	return nil
}

// appendReplica appends a replica of the loop's body, probed if it is the
// copy's (mine), its labels beyond the loop's own d deeper, then what
// runs where it falls out of the loop, which leaves it too: the hit and
// the flag's setting.
func appendReplica(a *wasm.Asm, mine bool, probed, bare []byte, d uint32, hit func(*wasm.Asm), setFlag func(bool) []byte) error {
	code := bare
	if mine {
		code = probed
	}
	shifted, err := shiftLabels(code, d)
	if err != nil {
		return err
	}
	a.B = append(a.B, shifted...)
	hit(a)
	a.B = append(a.B, setFlag(mine)...)
	return nil
}

// SliceOfIteration is the slot of the n-th iteration (from 0 at each
// entry) of a loop whose iterations are dealt out by a test
// (Mode.Spread) among slices: each block of slices iterations takes every
// slot once, in a ring that starts at slot SliceOfCall(b, slices) for
// block b (0 for the first). So no slot runs more than one iteration
// more than another, as by n mod slices, while the residues of n are
// spread over the slots as the golden ratio spreads calls.
func SliceOfIteration(n uint64, slices int) int {
	g := uint64(slices)
	return int((n%g + uint64(SliceOfCall(n/g, slices))) % g)
}

// spreadReplicas writes, after the opening of $exit, the loop of the
// replicas of a loop whose iterations are dealt out by a test
// (Mode.Spread): n replicas (code for the slots own marks, bare for the
// others) behind a test at the top of every iteration that sends the
// i-th (from 0 at each entry) to replica SliceOfIteration(i, n). The
// test keeps the slot in the i32 local st.slot, where the block's ring
// started in st.start, and the blocks times callMix in the i64 local
// st.weyl:
//
//	slot, start, weyl = 0
//	loop $top
//	  block $b_n-1 ... block $b_0
//	    slot (left for br_table)
//	    slot = slot+1 mod n
//	    if slot == start: weyl += callMix; slot = start = SliceOfCall(weyl/callMix, n)
//	    br_table $b_0 ... $b_n-1
//	  end
//	  block $c body_0 (continue: br $c; falls out: br $exit) end
//	  br $top
//	  end
//	  ...
//	end
//
// In the ring of ringReplicas replica r runs the iterations of one
// residue mod n, and the work of an outer loop's iterations often
// follows a residue of its counter (the odd and even numbers of a
// Collatz search), which would load one copy with it; the test costs a
// few instructions, and one hit, per iteration.
func spreadReplicas(a *wasm.Asm, lp *region, n int, own []bool, probed, bare []byte, hit func(*wasm.Asm), setFlag func(bool) []byte, st spreadLocals) error {
	a.I32(0).Idx(wasm.OpLocalSet, st.slot).I32(0).Idx(wasm.OpLocalSet, st.start).I64(0).Idx(wasm.OpLocalSet, st.weyl)
	a.B = wasm.AppendInstr(a.B, &wasm.Instr{Op: wasm.OpLoop, Block: lp.bt})
	for range n {
		a.Block(wasm.OpBlock)
	}
	hit(a)
	a.Idx(wasm.OpLocalGet, st.slot)
	a.Idx(wasm.OpLocalGet, st.slot).I32(1).Op(wasm.OpI32Add).Idx(wasm.OpLocalTee, st.slot).I32(int32(n)).Op(wasm.OpI32Eq)
	a.Block(wasm.OpIf).I32(0).Idx(wasm.OpLocalSet, st.slot).Op(wasm.OpEnd)
	a.Idx(wasm.OpLocalGet, st.slot).Idx(wasm.OpLocalGet, st.start).Op(wasm.OpI32Eq).Block(wasm.OpIf)
	a.Idx(wasm.OpLocalGet, st.weyl).I64(mixI64()).Op(wasm.OpI64Add).Idx(wasm.OpLocalTee, st.weyl)
	slotOfMixed(a, n)
	a.Idx(wasm.OpLocalTee, st.start).Idx(wasm.OpLocalSet, st.slot)
	a.Op(wasm.OpEnd)
	labels := make([]uint32, n+1)
	for r := range n {
		labels[r] = uint32(r)
	}
	labels[n] = uint32(n - 1)
	a.BrTable(labels)
	for r := range n {
		a.Op(wasm.OpEnd) // $b_r: replica r follows
		// Inside $c, beyond the loop's own label (now $c's) lie the
		// blocks of the later replicas, $top and $exit.
		a.Block(wasm.OpBlock)
		if err := appendReplica(a, own[r], probed, bare, uint32(n-r+1), hit, setFlag); err != nil {
			return err
		}
		a.Idx(wasm.OpBr, uint32(n-r+1)).Op(wasm.OpEnd)
		a.Idx(wasm.OpBr, uint32(n-1-r))
	}
	a.Op(wasm.OpEnd).Op(wasm.OpEnd)
	return nil
}

// spreadLocals are the locals of the test of spreadReplicas.
type spreadLocals struct {
	slot, start, weyl uint32
}

// emitLoopSlices unrolls the loop Mode.Loop, and those of Mode.Loops, and
// places the variants of the probes: the function's own around the loops,
// the probes of the replicas of the copy's slots, and bare replicas that
// only set the flag local when a loop is left.
func emitLoopSlices(m *wasm.Module, c *wasm.Code, f *Func, ops [][]numbering.Op, place func(*variant) ([]wasm.Edit, error), hit func(*wasm.Asm), flag uint32, st spreadLocals) error {
	g := f.Graph
	hs := append([]int32{f.Mode.Loop}, f.Mode.Loops...)
	lps, err := f.sharedLoops(hs)
	if err != nil {
		return err
	}
	// regionOf returns the loop whose body holds offset off, or -1.
	regionOf := func(off uint32) int {
		for i, lp := range lps {
			if lp.in(off) {
				return i
			}
		}
		return -1
	}
	in := func(off uint32) bool { return regionOf(off) >= 0 }
	// edgeLoop is the loop edge i lies in (its branch in the body), or
	// -1; leaves says whether it leaves that loop, or the block that
	// holds a loop's end, whose branch lies after the end.
	edgeLoop := func(i int32) int {
		e := g.Edges[i]
		if e.Kind == cfg.EdgeEntry {
			return -1
		}
		return regionOf(e.Instr)
	}
	leaves := func(i int32) bool {
		e := g.Edges[i]
		if e.Kind == cfg.EdgeEntry {
			return false
		}
		for _, lp := range lps {
			if (lp.in(e.Instr) || lp.nodeIn(g, e.From)) && !lp.nodeIn(g, e.To) {
				return true
			}
		}
		return false
	}
	header := func(n int32) bool { return slices.Contains(hs, n) }
	own := make([]bool, f.Mode.Slices)
	for _, x := range f.Mode.Slots {
		own[x] = true
	}
	setFlag := func(v bool) []byte {
		var a wasm.Asm
		a.I32(int32(b2i(v))).Idx(wasm.OpLocalSet, flag)
		return a.B
	}

	ls := &loopSlices{inside: make([]bool, len(g.Edges)), leaves: make([]bool, len(g.Edges))}
	outside := &variant{ops: ops, extra: make([][]byte, len(g.Edges)), guard: int64(flag)}
	probed := &variant{ops: ops, extra: make([][]byte, len(g.Edges)), guard: -1}
	bare := &variant{ops: make([][]numbering.Op, len(g.Edges)), extra: make([][]byte, len(g.Edges)), guard: -1, uncounted: true}
	// The register's start at each header: the initialisation on its
	// back edges, the same on each.
	inits := map[int32]int64{}
	for _, h := range hs {
		for _, e := range g.Blocks[h].In {
			for _, o := range f.ops[e] {
				if o.Kind == numbering.Init && g.Edges[e].Back {
					inits[h] = o.Value
				}
			}
		}
		if _, ok := inits[h]; !ok && !slices.Contains(f.Cuts, h) {
			return fmt.Errorf("no initialisation on the back edges of block %d", h)
		}
	}
	// The edges that end paths: back edges, and edges into cut vertices.
	ends := make([]bool, len(g.Edges))
	for _, de := range f.DAG.Edges {
		if de.Kind == cfg.EdgeDummyExit {
			for _, b := range de.Back {
				ends[b] = true
			}
		}
	}
	for i, e := range g.Edges {
		li := edgeLoop(int32(i))
		inside := li >= 0
		stays := inside && lps[li].nodeIn(g, e.To)
		ls.inside[i] = inside
		init, hasInit := inits[e.To]
		switch {
		case inside && e.Back && !stays:
			// The next path starts around the loop, in every copy.
			ls.leaves[i] = true
			for _, o := range f.ops[i] {
				if o.Kind == numbering.Init {
					bare.ops[i] = append(bare.ops[i], o)
				}
			}
			probed.extra[i], bare.extra[i] = setFlag(own[0]), setFlag(own[0])
		case inside && e.Back:
			// In a bare replica the back edge runs nothing.
		case inside && e.To != cfg.Exit && !stays:
			// The path leaves the loop: its counts lie ahead, in
			// code that every copy probes.
			probed.extra[i], bare.extra[i] = setFlag(true), setFlag(false)
		case e.Kind == cfg.EdgeEntry:
			if own[0] {
				outside.extra[i] = setFlag(true)
			}
		case e.Back && f.bare[int32(i)]:
			// A counted loop's back edge runs nothing: its exit
			// sets the flag.
		case e.Back:
			outside.extra[i] = setFlag(own[0])
		case header(e.To) && !own[0] && hasInit:
			// A copy without slot 0 enters the loop with the
			// register as the back edges leave it.
			var a wasm.Asm
			if ends[i] {
				a.B = setFlag(false)
			}
			a.I64(init).Idx(wasm.OpLocalSet, f.reg)
			outside.extra[i] = a.B
		case ends[i]:
			// An edge into a cut vertex starts a path, as a back
			// edge does: slot 0's.
			outside.extra[i] = setFlag(own[0])
		}
	}

	if !own[0] {
		ls.quiet = trimOutside(g, outside, ls.inside, ends, leaves, header)
	}

	outEdits, err := place(outside)
	if err != nil {
		return err
	}
	probedEdits, err := place(probed)
	if err != nil {
		return err
	}
	bareEdits, err := place(bare)
	if err != nil {
		return err
	}
	ls.own, ls.bare = probed.seqs, bare.seqs
	// replica returns loop lp's body with the edits that lie in it.
	replica := func(lp *region, h int32, edits []wasm.Edit) ([]byte, error) {
		var inner []wasm.Edit
		for _, e := range edits {
			if e.Off == lp.end {
				return nil, fmt.Errorf("probes at the end of the loop at block %d", h)
			}
			if lp.in(e.Off) {
				e.Off -= lp.body
				inner = append(inner, e)
			}
		}
		return spliceBytes(c.Body[lp.body:lp.end], inner)
	}

	// spread marks a header whose iterations spreadReplicas deals out:
	// every iteration runs the test, in every copy, where its path
	// starts (a back edge, or the entry into the loop).
	spread := func(h int32) {
		ls.spread = append(ls.spread, h)
		for _, e := range g.Blocks[h].In {
			// An edge that ends a path (into a cut) starts the next
			// at the header, where its dummy entry edge counts it.
			if !ls.inside[e] && !ends[e] {
				outside.seqs[e]++
			}
		}
	}
	n := f.Mode.Slices
	var list []wasm.Edit
	for _, e := range outEdits {
		for li, lp := range lps {
			if e.Off == lp.end {
				return fmt.Errorf("probes at the end of the loop at block %d", hs[li])
			}
		}
		if !in(e.Off) {
			list = append(list, e)
		}
	}
	for li, lp := range lps {
		probedCode, err := replica(lp, hs[li], probedEdits)
		if err != nil {
			return err
		}
		bareCode, err := replica(lp, hs[li], bareEdits)
		if err != nil {
			return err
		}
		var a wasm.Asm
		a.B = wasm.AppendInstr(a.B, &wasm.Instr{Op: wasm.OpBlock, Block: lp.bt})
		if f.Mode.Spread {
			if err := spreadReplicas(&a, lp, n, own, probedCode, bareCode, hit, setFlag, st); err != nil {
				return err
			}
			spread(hs[li])
		} else if err := ringReplicas(&a, lp, n, own, probedCode, bareCode, hit, setFlag); err != nil {
			return err
		}
		// That sequence runs once per run of the block that holds the
		// loop's end, whichever edge enters it (only edges from the
		// loop).
		if b := lp.ending(g); b >= 0 {
			for _, e := range g.Blocks[b].In {
				ls.own[e]++
				ls.bare[e]++
			}
		}
		list = append(list, wasm.Edit{Off: lp.off, Del: lp.end + 1 - lp.off, Ins: a.B})
	}
	for i := range g.Edges {
		if ls.inside[i] {
			outside.seqs[i] = 0
		} else {
			ls.own[i], ls.bare[i] = 0, 0
		}
	}
	f.seqs, f.loop = outside.seqs, ls
	return c.Splice(list)
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// spliceBytes applies edits (sorted, offsets into b) to a copy of b.
func spliceBytes(b []byte, edits []wasm.Edit) ([]byte, error) {
	var out []byte
	pos := uint32(0)
	for _, e := range edits {
		if e.Off < pos || int(e.Off+e.Del) > len(b) {
			return nil, fmt.Errorf("splice: edit at %d overlaps or lies outside %d bytes", e.Off, len(b))
		}
		out = append(out, b[pos:e.Off]...)
		out = append(out, e.Ins...)
		pos = e.Off + e.Del
	}
	return append(out, b[pos:]...), nil
}

// shiftLabels rewrites the code of a loop's body for a place d labels
// deeper: every branch to a label beyond the loop's own goes d further.
// The loop's own label, the innermost around the code, stays.
func shiftLabels(code []byte, d uint32) ([]byte, error) {
	r := wasm.NewReader(code, 0, "code")
	var out []byte
	var in wasm.Instr
	depth := uint32(0) // blocks opened in the code
	pos := 0
	for !r.Done() {
		if err := r.Next(&in); err != nil {
			return nil, err
		}
		switch in.Op {
		case wasm.OpBlock, wasm.OpLoop, wasm.OpIf:
			depth++
		case wasm.OpEnd:
			if depth == 0 {
				return nil, errors.New("loop body closes a block it did not open")
			}
			depth--
		case wasm.OpBr, wasm.OpBrIf:
			if in.A > depth {
				out = append(out, code[pos:in.Off]...)
				in.A += d
				out = wasm.AppendInstr(out, &in)
				pos = int(in.Off + in.Len)
			}
		case wasm.OpBrTable:
			if slices.ContainsFunc(in.Labels, func(l uint32) bool { return l > depth }) {
				out = append(out, code[pos:in.Off]...)
				labels := slices.Clone(in.Labels)
				for j, l := range labels {
					if l > depth {
						labels[j] = l + d
					}
				}
				out = wasm.AppendInstr(out, &wasm.Instr{Op: wasm.OpBrTable, Labels: labels})
				pos = int(in.Off + in.Len)
			}
		case wasm.OpTry, wasm.OpTryTable, wasm.OpDelegate, wasm.OpRethrow, wasm.OpBrOnNull, wasm.OpBrOnNonNull:
			return nil, fmt.Errorf("%s in a shared loop", in.Op.Name())
		}
	}
	if depth != 0 {
		return nil, errors.New("loop body leaves a block open")
	}
	return append(out, code[pos:]...), nil
}
