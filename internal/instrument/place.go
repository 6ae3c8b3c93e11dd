// Placing probes in a body: where the code of each CFG edge goes (before
// the instruction that takes it, at the start of an arm, in an added else
// arm, in a trampoline of a br_table), and how a br_if's two edges share
// one test. Counting copies and OSP's sampling copy both place their
// probes so; each says what code an edge gets.

package instrument

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/wasm"
)

// edit is a splice with an order among edits at the same offset: the end
// of an if around the call before it (-1), code entering an arm (0), code
// placed before the instruction there (1), an added else arm (2).
type edit struct {
	wasm.Edit
	prio int
}

// placer puts the probes of one placement into function f's body c.
type placer struct {
	m *wasm.Module
	c *wasm.Code
	f *Func
	// ops are the probes per Graph edge.
	ops [][]numbering.Op
	// has says whether edge e gets any code.
	has func(e int32) bool
	// plain says whether edge e's code is only its ops, which a br_if
	// whose ops only add then adds with a select, without branching.
	plain func(e int32) bool
	// emit appends edge e's code; back is the label, from where the code
	// goes, of the branch that takes e when it carries no values, Return
	// where the function returns right after the code, else -1.
	emit func(a *wasm.Asm, e int32, back int64)
	// hit appends what a sequence of probes runs besides its ops (the
	// copy's own hit count), if anything.
	hit func(a *wasm.Asm)

	// z attributes the added bytes to kinds (nil: not asked).
	z *sizer
	// ifTaken makes a br_if whose taken edge alone has probes an if
	// around them that takes the branch, as at a back edge: a third of
	// the bytes of the block nest below. Counting copies' probes are a
	// few instructions, and with them in line the copies ran no slower;
	// OSP's end code is larger, and its copies keep the nest.
	ifTaken bool

	edits []edit
	// seqs is set by place: per Graph edge, the sequences run when the
	// edge is taken.
	seqs []uint8
}

// put adds code at body offset off, replacing del bytes, with priority
// prio among the edits at off (see edit).
func (p *placer) put(off, del uint32, prio int, code []byte) {
	p.edits = append(p.edits, edit{wasm.Edit{Off: off, Del: del, Ins: code}, prio})
}

// errNewType says that a function emitted beside others needs a type the
// module lacks; it is emitted again alone, so that types are added in
// function order and the copy's bytes do not depend on scheduling.
var errNewType = errors.New("needs a new type")

// addType is m.AddType, but while functions are emitted in parallel
// (Func.sharedTypes) it only finds the types the module has.
func (p *placer) addType(t wasm.FuncType) (uint32, error) {
	if p.f.sharedTypes {
		if i, ok := p.m.TypeIndex(t); ok {
			return i, nil
		}
		return 0, errNewType
	}
	return p.m.AddType(t), nil
}

// place returns the edits that put the probes in the body, ordered for
// Splice.
func (p *placer) place() ([]wasm.Edit, error) {
	c, g, s, reg, cond, idx := p.c, p.f.Graph, p.f.scan, p.f.reg, p.f.cond, p.f.idx
	p.seqs = make([]uint8, len(g.Edges))
	// Group the edges by the instruction that makes them.
	bySite := map[uint32][]int32{}
	for i, e := range g.Edges {
		if !p.has(int32(i)) && e.Kind != cfg.EdgeBrIfTaken && e.Kind != cfg.EdgeBrIfNot && e.Kind != cfg.EdgeBrTable {
			continue
		}
		switch e.Kind {
		case cfg.EdgeEntry:
			var a wasm.Asm
			p.emit(&a, int32(i), -1)
			p.put(c.ExprOff, 0, 0, a.B)
			p.seqs[i] = 1
		case cfg.EdgeFallthrough, cfg.EdgeBr, cfg.EdgeReturn, cfg.EdgeTailCall, cfg.EdgeThrow, cfg.EdgeNoReturn, cfg.EdgeCall:
			var a wasm.Asm
			back := int64(-1)
			if l, ok := s.voidBr[e.Instr]; ok && e.Kind == cfg.EdgeBr {
				back = int64(l)
			} else if e.Kind == cfg.EdgeReturn {
				back = Return
			}
			p.emit(&a, int32(i), back)
			p.put(e.Instr, 0, 1, a.B)
			p.seqs[i] = 1
		case cfg.EdgeIfThen:
			var a wasm.Asm
			p.emit(&a, int32(i), -1)
			p.put(e.Instr+s.instrLen[e.Instr], 0, 0, a.B)
			p.seqs[i] = 1
		case cfg.EdgeIfElse:
			var a wasm.Asm
			if els := s.ifElse[e.Instr]; els >= 0 {
				p.emit(&a, int32(i), -1)
				p.put(uint32(els)+s.instrLen[uint32(els)], 0, 0, a.B)
			} else {
				mk := p.z.mark(&a)
				a.Op(wasm.OpElse)
				p.emit(&a, int32(i), -1)
				p.z.end(SizeElse, &a, mk)
				p.put(s.ifEnd[e.Instr], 0, 2, a.B)
			}
			p.seqs[i] = 1
		case cfg.EdgeBrIfTaken, cfg.EdgeBrIfNot, cfg.EdgeBrTable:
			bySite[e.Instr] = append(bySite[e.Instr], int32(i))
		default:
			return nil, fmt.Errorf("no placement for probes on %s edges", e.Kind)
		}
	}
	// Sites in order: the types and globals that probes add are then
	// numbered alike in every build of the copy.
	for _, site := range slices.Sorted(maps.Keys(bySite)) {
		es := bySite[site]
		if g.Edges[es[0]].Kind == cfg.EdgeBrTable {
			done := p.z.attributed()
			code, err := brTableCode(p.addType, s, site, g, es, p.has, p.emit, idx, p.seqs)
			if err != nil {
				return nil, err
			}
			if code != nil {
				p.z.rest(SizeBrTable, int64(len(code))-int64(s.instrLen[site]), done)
				p.put(site, s.instrLen[site], 1, code)
			}
			continue
		}
		var taken, not []numbering.Op
		var ti, ni int32 = -1, -1
		for _, e := range es {
			if g.Edges[e].Kind == cfg.EdgeBrIfTaken {
				taken, ti = p.ops[e], e
			} else {
				not, ni = p.ops[e], e
			}
		}
		hasT, hasN := ti >= 0 && p.has(ti), ni >= 0 && p.has(ni)
		if !hasT && !hasN {
			continue
		}
		var a wasm.Asm
		mk := p.z.mark(&a)
		kind := SizeValuedBrIf
		var del uint32 // the original's bytes the code replaces
		if l, ok := s.voidBr[site]; ok {
			// The condition is tested once, by a branch whose edge
			// is not critical, so that a compare that makes it is
			// fused into the jump (wazero tests a condition used
			// twice, or on a critical edge, as a flag set, widened
			// and tested again). At a back edge, and where only the
			// taken edge has probes (ifTaken), an if that takes
			// the branch: going round the loop falls into the jump
			// back. Elsewhere the taken edge's probes go after the
			// other's, where wazero lays them out of line, as the
			// original's branch target is:
			//
			//	local.set c  block  block  local.get c  br_if 0
			//	<not taken>  br 1  end  <taken>  br L+1  end
			if !hasT {
				// Only the edge that does not branch has probes:
				// they follow the br_if, which stays as it is.
				kind = SizeBrIf
				a.Idx(wasm.OpBrIf, l)
				p.emit(&a, ni, -1)
			} else if ti >= 0 && g.Edges[ti].Back || !hasN && p.ifTaken {
				kind = SizeBackIf
				if !g.Edges[ti].Back {
					kind = SizeTakenIf
				}
				a.Block(wasm.OpIf)
				if hasT {
					p.emit(&a, ti, int64(l)+1)
				}
				a.Idx(wasm.OpBr, l+1).Op(wasm.OpEnd)
				if hasN {
					p.emit(&a, ni, -1)
				}
			} else {
				kind = SizeBrIf
				a.Idx(wasm.OpLocalSet, cond).Block(wasm.OpBlock).Block(wasm.OpBlock).Idx(wasm.OpLocalGet, cond).Idx(wasm.OpBrIf, 0)
				if hasN {
					p.emit(&a, ni, -1)
				}
				a.Idx(wasm.OpBr, 1).Op(wasm.OpEnd)
				if hasT {
					p.emit(&a, ti, int64(l)+1)
				}
				a.Idx(wasm.OpBr, l+1).Op(wasm.OpEnd)
			}
			del = s.instrLen[site]
		} else if isAdds(taken) && isAdds(not) && (ti < 0 || p.plain(ti)) && (ni < 0 || p.plain(ni)) {
			// Branch-free: r += select(k_taken, k_not, cond).
			kind = SizeSelect
			p.hit(&a)
			a.Idx(wasm.OpLocalSet, cond).Idx(wasm.OpLocalGet, reg).I64(addValue(taken)).I64(addValue(not)).Idx(wasm.OpLocalGet, cond).Op(wasm.OpSelect).Op(wasm.OpI64Add).Idx(wasm.OpLocalSet, reg).Idx(wasm.OpLocalGet, cond)
			p.seqs[ti], p.seqs[ni] = 1, 1
		} else {
			// A br_if that carries values: the if's arms cannot
			// take the branch themselves.
			a.Idx(wasm.OpLocalTee, cond).Block(wasm.OpIf)
			if hasT {
				p.emit(&a, ti, -1)
			}
			if hasN {
				a.Op(wasm.OpElse)
				p.emit(&a, ni, -1)
			}
			a.Op(wasm.OpEnd).Idx(wasm.OpLocalGet, cond)
		}
		p.z.rest(kind, int64(len(a.B))-int64(del), mk.done)
		p.put(site, del, 1, a.B)
		if hasT {
			p.seqs[ti] = 1
		}
		if hasN {
			p.seqs[ni] = 1
		}
	}
	sort.SliceStable(p.edits, func(i, j int) bool {
		if p.edits[i].Off != p.edits[j].Off {
			return p.edits[i].Off < p.edits[j].Off
		}
		return p.edits[i].prio < p.edits[j].prio
	})
	list := make([]wasm.Edit, len(p.edits))
	for i, e := range p.edits {
		list[i] = e.Edit
	}
	return list, nil
}

// isAdds reports whether ops only add to the path register, if anything.
func isAdds(ops []numbering.Op) bool {
	return len(ops) == 0 || len(ops) == 1 && ops[0].Kind == numbering.Add
}

// addValue is what the ops of isAdds add.
func addValue(ops []numbering.Op) int64 {
	if len(ops) == 0 {
		return 0
	}
	return ops[0].Value
}

// brTableCode replaces a br_table whose edges carry probes by a nest of
// blocks: the new table branches to a trampoline per instrumented target,
// which runs the target's probes and branches on; arms to targets without
// probes branch straight out of the nest. It returns nil when no edge of
// the br_table has probes.
func brTableCode(addType func(wasm.FuncType) (uint32, error), s *scan, site uint32, g *cfg.Graph, es []int32,
	has func(int32) bool, emit func(*wasm.Asm, int32, int64), idx uint32, seqs []uint8) ([]byte, error) {
	labels := s.brTable[site]
	armTramp := make([]int, len(labels)) // trampoline number (1-based) per arm, 0 for none
	var tramps []int32                   // edges with probes, innermost first
	for _, e := range es {
		if !has(e) {
			continue
		}
		tramps = append(tramps, e)
		for _, arm := range g.Edges[e].Arms {
			armTramp[arm] = len(tramps)
		}
		seqs[e] = 1
	}
	if len(tramps) == 0 {
		return nil, nil
	}
	nt := uint32(len(tramps))
	var a wasm.Asm
	a.Idx(wasm.OpLocalSet, idx)
	types := s.brTypes[site]
	for range tramps {
		if len(types) == 0 {
			a.Block(wasm.OpBlock)
		} else {
			t, err := addType(wasm.FuncType{Params: types, Results: types})
			if err != nil {
				return nil, err
			}
			a.BlockT(wasm.OpBlock, t)
		}
	}
	a.Idx(wasm.OpLocalGet, idx)
	nl := make([]uint32, len(labels))
	for arm, l := range labels {
		if j := armTramp[arm]; j > 0 {
			nl[arm] = uint32(j - 1)
		} else {
			nl[arm] = l + nt
		}
	}
	a.BrTable(nl)
	for j, e := range tramps {
		a.Op(wasm.OpEnd)
		l := labels[g.Edges[e].Arms[0]] + nt - uint32(j+1)
		back := int64(-1)
		if len(s.brTypes[site]) == 0 {
			back = int64(l)
		}
		emit(&a, e, back)
		a.Idx(wasm.OpBr, l)
	}
	return a.B, nil
}
