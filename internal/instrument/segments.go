package instrument

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/wasm"
)

// instrumentSegments is Instrument for Options.Segments.
func instrumentSegments(m *wasm.Module, orig []byte, opt Options, res *Result) (*Result, error) {
	seg := opt.Segments
	if seg.End == nil {
		return nil, errors.New("instrument: Segments without End")
	}
	numImported := m.NumImportedFuncs
	if seg.Setup != nil {
		if err := seg.Setup(m); err != nil {
			return nil, err
		}
	}
	shift := m.NumImportedFuncs - numImported
	noRet := cfg.NoReturnImports(m, opt.NoReturn...)
	cfgOpt := cfg.Options{NoReturn: noRet, SplitCalls: true, Thread: seg.Thread}
	for i := range m.Code {
		orig := numImported + uint32(i)
		f := &Func{Index: orig, Name: m.FuncName(orig + shift), origOff: m.Code[i].OrigOff, returnBlock: -1}
		res.Funcs = append(res.Funcs, f)
		var err error
		if seg.Blockwise != nil && seg.Blockwise(orig) {
			err = skipError("block by block, as asked")
		} else {
			err = planFunc(m, i, f, cfgOpt, nil, true)
		}
		var skip skipError
		if errors.As(err, &skip) {
			f.Status = "skipped: " + string(skip)
			err = emitBlockwise(m, i, f, seg, cfg.Options{NoReturn: noRet})
		} else if err == nil {
			f.Status = "profiled"
			err = emitFunc(m, &m.Code[i], f, nil, countFns{}, -1, false, seg)
		}
		if err != nil {
			return nil, fmt.Errorf("function %d (%s): %w", orig, f.Name, err)
		}
	}
	m.Touch(wasm.SecCode)
	if seg.Finish != nil {
		if err := seg.Finish(m); err != nil {
			return nil, err
		}
	}
	var err error
	if res.Module, err = m.Encode(); err != nil {
		return nil, err
	}
	return res, nil
}

// placeSegments chooses the probes of a Segments function: Ball-Larus ids
// above the low CountBits bits of each DAG edge's value and, in them, one
// for each edge that enters a block (not a call's continuation, not the
// exit), so that a path's sum also counts its block entries.
func placeSegments(f *Func) error {
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
	f.Mode = Mode{Kind: BallLarus}
	f.setPlan(plan)
	f.emptyEnd = emptyEnds(f.Graph, d, most)
	return nil
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

// emitSegment appends the probes of one edge of a Segments function: the
// ending path's packed value goes to p before the next path's register is
// set, and End runs last; where the ending paths are empty, neither.
func emitSegment(a *wasm.Asm, f *Func, seg *Segments, ops []numbering.Op, site EndSite, empty bool) (after []byte) {
	end := false
	for _, o := range ops {
		if empty {
			break
		}
		switch o.Kind {
		case numbering.Count:
			a.Idx(wasm.OpLocalGet, f.reg)
			if o.Value != 0 {
				a.AddI64(o.Value)
			}
			a.Idx(wasm.OpLocalSet, f.p)
			end = true
		case numbering.CountConst:
			a.I64(o.Value).Idx(wasm.OpLocalSet, f.p)
			end = true
		}
	}
	for _, o := range ops {
		switch o.Kind {
		case numbering.Init:
			a.I64(o.Value).Idx(wasm.OpLocalSet, f.reg)
		case numbering.Add:
			a.Idx(wasm.OpLocalGet, f.reg).AddI64(o.Value).Idx(wasm.OpLocalSet, f.reg)
		}
	}
	if end {
		return seg.End(a, f, site)
	}
	return nil
}

// callOperands returns the call at off in body, the types of the values
// that it takes from the stack (call_indirect's table index last) and of
// those it gives back; or nils where it takes none, one is not of a
// number type, or the instruction is not a call or call_indirect.
func callOperands(m *wasm.Module, body []byte, off uint32) (call []byte, params, results []wasm.ValType) {
	var in wasm.Instr
	r := wasm.NewReader(body, 0, "code")
	r.Seek(int(off))
	if r.Next(&in) != nil {
		return nil, nil, nil
	}
	var ft wasm.FuncType
	switch in.Op {
	case wasm.OpCall, wasm.OpReturnCall:
		var ok bool
		if ft, ok = m.FuncType(in.A); !ok {
			return nil, nil, nil
		}
		params = ft.Params
	case wasm.OpCallIndirect, wasm.OpReturnCallIndirect:
		if int(in.A) >= len(m.Types) || table64(m, in.B) {
			return nil, nil, nil
		}
		ft = m.Types[in.A]
		params = append(slices.Clip(ft.Params), wasm.ValI32)
	default:
		return nil, nil, nil
	}
	if len(params) == 0 || !all(params, isNumber) {
		return nil, nil, nil
	}
	return body[off : off+in.Len], params, ft.Results
}

// table64 reports whether table t is indexed by i64 values, or is not
// there.
func table64(m *wasm.Module, t uint32) bool {
	for _, im := range m.Imports {
		if im.Kind != wasm.KindTable {
			continue
		}
		if t == 0 {
			return im.Table.Limits.Is64()
		}
		t--
	}
	return int(t) >= len(m.Tables) || m.Tables[t].Limits.Is64()
}

// all reports whether every element of xs satisfies ok.
func all[T any](xs []T, ok func(T) bool) bool {
	for _, x := range xs {
		if !ok(x) {
			return false
		}
	}
	return true
}

// Local is one of a function's locals: its index and type.
type Local struct {
	Index uint32
	Type  wasm.ValType
}

// findCarried fills f.carried: for each loop without calls, by header,
// the locals of number types that the loop writes and that are live at
// the header, and the path register. body is the body f.Graph was built
// from. Loops with calls get none: their values live across those calls
// anyway. Nor are the locals the loop only reads kept: held in globals
// they would come back as new values at the header, where wazero, short
// of registers, stores them on every iteration instead of once before
// the loop.
func (f *Func) findCarried(body []byte) error {
	g := f.Graph
	heads := g.Loops()
	if len(heads) == 0 {
		return nil
	}
	locals, err := cfg.ScanLocals(g, body)
	if err != nil {
		return err
	}
	writes := make([][]uint32, len(heads))
	var track []uint32
	seen := map[uint32]bool{}
	callFree := make([]bool, len(heads))
	for i, h := range heads {
		nodes := g.LoopNodes(h)
		callFree[i] = true
		for _, n := range nodes {
			for _, ei := range g.Blocks[n].Out {
				if g.Edges[ei].Kind == cfg.EdgeCall {
					callFree[i] = false
				}
			}
		}
		if !callFree[i] {
			continue
		}
		for _, n := range nodes {
			for _, x := range locals.Writes(n) {
				if !seen[x] && isNumber(f.localType(x)) {
					seen[x] = true
					writes[i] = append(writes[i], x)
				}
			}
		}
		clear(seen)
		track = append(track, writes[i]...)
	}
	locals.Track(track)
	f.carried = make(map[int32][]Local, len(heads))
	for i, h := range heads {
		if !callFree[i] {
			continue
		}
		keep := []Local{{f.reg, wasm.ValI64}}
		for _, x := range writes[i] {
			if locals.Live(h, x) {
				keep = append(keep, Local{x, f.localType(x)})
			}
		}
		f.carried[h] = keep
	}
	return nil
}

func (f *Func) localType(x uint32) wasm.ValType {
	if x < uint32(len(f.params)) {
		return f.params[x]
	}
	x -= uint32(len(f.params))
	for _, d := range f.decls {
		if x < d.Count {
			return d.Type
		}
		x -= d.Count
	}
	return wasm.ValType{}
}

func isNumber(t wasm.ValType) bool {
	return t == wasm.ValI32 || t == wasm.ValI64 || t == wasm.ValF32 || t == wasm.ValF64
}

// emitBlockwise gives a function that cannot be numbered End at the start
// of every block, each block a path of its own.
func emitBlockwise(m *wasm.Module, def int, f *Func, seg *Segments, cfgOpt cfg.Options) error {
	c := &m.Code[def]
	ft, ok := m.FuncType(m.NumImportedFuncs + uint32(def))
	if !ok {
		return fmt.Errorf("no type")
	}
	p := uint32(uint64(len(ft.Params)) + c.NumLocals())
	if err := c.SetLocals(append(append([]wasm.LocalDecl(nil), c.Locals...), wasm.LocalDecl{Count: 1, Type: wasm.ValI64}, wasm.LocalDecl{Count: 1, Type: wasm.ValI32})); err != nil {
		return err
	}
	g, err := cfg.BuildBody(c, cfgOpt)
	if err != nil {
		return err
	}
	f.Graph, f.bodyMap, f.Blockwise, f.p = g, c.Map, true, p
	edits := make([]wasm.Edit, 0, len(g.Blocks)-2)
	for n := 2; n < len(g.Blocks); n++ {
		var a wasm.Asm
		a.I64(int64(n)<<CountBits|1).Idx(wasm.OpLocalSet, p)
		seg.End(&a, f, EndSite{P: p, Branch: -1, Block: -1})
		edits = append(edits, wasm.Edit{Off: g.Blocks[n].Start, Ins: a.B})
	}
	return c.Splice(edits)
}
