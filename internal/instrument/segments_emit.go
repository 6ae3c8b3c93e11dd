// Emitting a function of OSP's sampling copy: End where paths end, with
// what it learns there (the values on the stack, the locals a loop
// carries), and End at every block of a function that cannot be numbered.

package instrument

import (
	"fmt"
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/wasm"
)

// emitSegments inserts the probes chosen by planSegments, with End where
// paths end.
func emitSegments(m *wasm.Module, c *wasm.Code, f *segFunc, seg *Segments) error {
	if err := f.findCarried(c.Body); err != nil {
		return err
	}
	g := f.Graph
	p := &placer{m: m, c: c, f: f.Func, ops: f.ops,
		plain: func(int32) bool { return true },
		hit:   func(*wasm.Asm) {}}
	p.has = func(e int32) bool { return len(f.ops[e]) > 0 }
	p.emit = func(a *wasm.Asm, e int32, back int64) {
		if !p.has(e) {
			return
		}
		site := EndSite{P: f.p, Branch: back, Block: -1}
		switch ed := g.Edges[e]; {
		case back >= 0 && ed.Back:
			site.Keep = f.carried[ed.To]
		case back == Return:
			site.Block = f.returnBlock
			if all(f.results, isNumber) {
				site.Operands = f.results
			}
		case ed.Kind == cfg.EdgeCall || ed.Kind == cfg.EdgeTailCall:
			var res []wasm.ValType
			site.Call, site.Operands, res = callOperands(m, c.Body, ed.Instr)
			if site.Call != nil {
				if ed.Kind == cfg.EdgeTailCall {
					res = site.Operands
				}
				site.Block = int64(m.AddType(wasm.FuncType{Params: site.Operands, Results: res}))
			}
		}
		if after := emitSegment(a, f, seg, f.ops[e], site, f.emptyEnd[e]); len(after) > 0 {
			if site.Call == nil {
				panic("instrument: code after a path end that is not a call's")
			}
			p.put(g.Edges[e].Instr+uint32(len(site.Call)), 0, -1, after)
		}
	}
	list, err := p.place()
	if err != nil {
		return err
	}
	f.seqs = p.seqs
	return c.Splice(list)
}

// emitSegment appends the probes of one edge of a Segments function: the
// ending path's packed value goes to p before the next path's register is
// set, and End runs last; where the ending paths are empty, neither.
func emitSegment(a *wasm.Asm, f *segFunc, seg *Segments, ops []numbering.Op, site EndSite, empty bool) (after []byte) {
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
		return seg.End(a, f.Func, site)
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

// findCarried fills f.carried: for each loop without calls, by header,
// the locals of number types that the loop writes and that are live at
// the header, and the path register. body is the body f.Graph was built
// from. Loops with calls get none: their values live across those calls
// anyway. Nor are the locals the loop only reads kept: held in globals
// they would come back as new values at the header, where wazero, short
// of registers, stores them on every iteration instead of once before
// the loop.
func (f *segFunc) findCarried(body []byte) error {
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

// localType is the type of local x.
func (f *segFunc) localType(x uint32) wasm.ValType {
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

// isNumber reports whether t is a number type.
func isNumber(t wasm.ValType) bool {
	return t == wasm.ValI32 || t == wasm.ValI64 || t == wasm.ValF32 || t == wasm.ValF64
}

// emitBlockwise gives a function that cannot be numbered End at the start
// of every block, each block a path of its own.
func emitBlockwise(m *wasm.Module, def int, f *segFunc, seg *Segments, cfgOpt cfg.Options) error {
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
		seg.End(&a, f.Func, EndSite{P: p, Branch: -1, Block: -1})
		edits = append(edits, wasm.Edit{Off: g.Blocks[n].Start, Ins: a.B})
	}
	return c.Splice(edits)
}
