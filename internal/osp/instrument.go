// The sampling copy: Instrument numbers every function's paths, which end
// before calls too, and adds the countdown where they end; Instrumented
// turns the paths a run reports back into its blocks.

package osp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/memarea"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/wasm"
)

// CountdownExport exports the countdown global, so that the number of
// block entries a run made can be read back when it ends.
const CountdownExport = "pathprof_osp_countdown"

// procExit is the call that never returns (cfg.Options.NoReturn).
var procExit = [2]string{"wasi_snapshot_preview1", "proc_exit"}

// Block is one basic block of the program. Its index in
// Instrumented.Blocks is its id in samples.
type Block struct {
	Func uint32 // function index in the original module
	Node int32  // the block's node in the function's cfg.Graph
	// Offset is the file offset, in the original module, of the block's
	// first instruction.
	Offset int
}

// offsets returns the file offset of each block, by block id: what
// subpaths are keyed by (HashOffsets).
func (ins *Instrumented) offsets() []int {
	o := make([]int, len(ins.Blocks))
	for i, b := range ins.Blocks {
		o[i] = b.Offset
	}
	return o
}

// Instrumented is a module whose paths count down the skip.
type Instrumented struct {
	Wasm   []byte
	Blocks []Block
	// FuncNames holds the name-section names of the original module's
	// functions that have blocks, by original function index.
	FuncNames map[uint32]string
	// Size and SHA256 describe the original module.
	Size   int
	SHA256 string
	// funcs holds, per original function index, what turns the paths
	// the program reports back into blocks (nil: no such function).
	funcs []*pathFunc
	// model is what the hot list codes subpaths with.
	model *blockModel
	// recent is a direct-mapped cache in front of the functions' maps:
	// a sample's paths are mostly the hot ones, seen again and again.
	recent []recentPath
}

type recentPath struct {
	fn     uint32
	ok     bool
	p      uint64
	blocks []uint32
}

const recentBits = 14

// pathFunc is one function as the program reports its paths.
type pathFunc struct {
	index     uint32
	blockwise bool // every block is a path whose id is its node
	dag       *cfg.DAG
	num       *numbering.Numbering
	block     []int32 // per node: the block id, or -1 (entry, exit, a call's continuation)
	// paths caches the blocks of the paths seen so far.
	paths map[uint64][]uint32
}

// blocks returns the block ids of path id, which the program says makes
// n block entries.
func (pf *pathFunc) blocks(id uint64, n uint32) ([]uint32, error) {
	bs, ok := pf.paths[id]
	if !ok {
		var err error
		if bs, err = pf.regenerate(id); err != nil {
			return nil, err
		}
		if pf.paths == nil {
			pf.paths = map[uint64][]uint32{}
		}
		pf.paths[id] = bs
	}
	if uint32(len(bs)) != n {
		return nil, fmt.Errorf("osp: function %d, path %d: %d blocks reported, %d regenerated", pf.index, id, n, len(bs))
	}
	return bs, nil
}

// regenerate returns the block ids of path id.
func (pf *pathFunc) regenerate(id uint64) ([]uint32, error) {
	if pf.blockwise {
		if id >= uint64(len(pf.block)) || pf.block[id] < 0 {
			return nil, fmt.Errorf("osp: function %d has no block %d", pf.index, id)
		}
		return []uint32{uint32(pf.block[id])}, nil
	}
	edges, _, err := numbering.Regenerate(pf.num, pf.dag, id)
	if err != nil {
		return nil, fmt.Errorf("osp: function %d: %w", pf.index, err)
	}
	var bs []uint32
	for _, e := range edges {
		if to := pf.dag.Edges[e].To; pf.block[to] >= 0 {
			bs = append(bs, uint32(pf.block[to]))
		}
	}
	return bs, nil
}

// countMask keeps the block entries of a packed register value.
const countMask = 1<<instrument.CountBits - 1

// Instrument decodes orig and numbers the paths of every defined function
// as Ball-Larus does, except that paths also end before every call (see
// instrument.Segments): a run's block entries are then its paths' blocks,
// one path after another. The path register also sums the path's block
// entries, and where a path ends the program counts them down:
//
//	global.get $c  (n = p & 0xFFFF)  i32.sub  local.tee $t  global.set $c
//	local.get $t  i32.const 1  i32.lt_s
//	if
//	  (at a back edge: the path continues a sample: record it, branch out)
//	  i32.const FUNC  local.get $p  global.get $c  call $tick  global.set $c
//	end
//
// $c is a mutable i32 global appended to the module's globals (so no
// global index moves), and $tick a function appended to the module, which
// records into an area of the program's memory that the program cannot
// see (recorder.go). The countdown is one global for the whole program,
// so it runs out in the path where the skip's last block is, whatever
// function that is; the recorder knows from the countdown which block of
// the path that is. Where a branch without values ends the path (a loop's
// back edge, say), the if's arm ends with that branch of its own, and
// before a return with a return of its own: wazero then keeps the loop's
// values in registers, where a call in an arm that joins the loop body
// again makes it spill them on every iteration. At the back edge of a
// loop without calls the arm also stores the locals that the loop
// carries round into globals of its own before it calls $tick, and loads
// them back after: a value that lives across a call, wazero stores after
// each of its definitions, so the loop would pay for the call it almost
// never makes. For the same reason the arm before a call takes the
// call's arguments along, holds them in globals across $tick and makes
// the call itself (the original call going into an else), and the arm
// before a return holds the results. $c starts at 1: the first path ends
// the first skip, and the recorder hands back the next.
//
// The module must define its one memory (memarea.CanEmbed).
func Instrument(orig []byte) (*Instrumented, error) {
	return instrumentWith(orig, countdownEnd, nil, true)
}

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

// instrumentWith is Instrument with the code at each path end written by
// end, and the functions blockwise picks instrumented block by block (see
// instrument.Segments.Blockwise).
func instrumentWith(orig []byte, end endFunc, blockwise func(uint32) bool, thread bool) (*Instrumented, error) {
	sum := sha256.Sum256(orig)
	ins := &Instrumented{Size: len(orig), SHA256: hex.EncodeToString(sum[:]), FuncNames: map[uint32]string{}}
	var r rec
	var area *memarea.Area
	var flush, tickType, grow uint32
	setup := func(m *wasm.Module) error {
		for _, e := range m.Exports {
			if strings.HasPrefix(e.Name, exportPrefix) {
				return fmt.Errorf("the module already exports %q", e.Name)
			}
		}
		var err error
		if flush, err = m.AddFuncImport(FlushModule, FlushName, m.AddType(wasm.FuncType{})); err != nil {
			return err
		}
		if area, err = memarea.Embed(m, memBytes, exportPrefix+"area"); err != nil {
			return fmt.Errorf("the recorder cannot live in the program's memory: %w", err)
		}
		g := m.NumImportedGlobals + uint32(len(m.Globals))
		r.g = globals{base: area.Base, c: g, pos: g + 1, next: g + 2, tlimit: g + 3}
		r.held = &held{first: g + 4}
		for i, v := range []int32{1, 0, tableStart, tableStart + tableBytes} {
			var init wasm.Asm
			init.I32(v).Op(wasm.OpEnd)
			m.Globals = append(m.Globals, wasm.Global{GlobalType: wasm.GlobalType{Type: wasm.ValI32, Mutable: true}, Init: init.B})
			name := CountdownExport
			if i > 0 {
				name = exportPrefix + globalNames[i-1]
			}
			m.Exports = append(m.Exports, wasm.Export{Name: name, Kind: wasm.KindGlobal, Index: g + uint32(i)})
		}
		m.Touch(wasm.SecGlobal)
		m.Touch(wasm.SecExport)
		// The first table: a sample of one block after a skip of 1.
		var off wasm.Asm
		off.I32(int32(area.Start + tableStart)).Op(wasm.OpEnd)
		m.Data = append(m.Data, wasm.Data{Offset: off.B, Init: []byte{1, 0, 0, 0, 1, 0, 0, 0}})
		m.Touch(wasm.SecData)
		if m.HasDataCount {
			m.DataCount++
			m.Touch(wasm.SecDataCount)
		}
		tickType = m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI32, wasm.ValI64, wasm.ValI32}, Results: []wasm.ValType{wasm.ValI32}})
		n := m.NumFuncs()
		r.tick, grow = n, n+1
		return nil
	}
	finish := func(m *wasm.Module) error {
		if m.NumFuncs() != r.tick {
			return fmt.Errorf("osp: %d functions, %d reserved", m.NumFuncs(), r.tick)
		}
		if err := area.Rewrite(m, grow); err != nil {
			return err
		}
		if g := m.NumImportedGlobals + uint32(len(m.Globals)); g != r.held.first {
			return fmt.Errorf("osp: %d globals, %d reserved", g, r.held.first)
		}
		if len(r.held.types) > 0 {
			m.Globals = append(m.Globals, r.held.globals()...)
			m.Touch(wasm.SecGlobal)
		}
		m.Funcs = append(m.Funcs, tickType, area.GrowType)
		m.Code = append(m.Code,
			wasm.NewCode(tickLocals, tickCode(r.g, flush)),
			wasm.NewCode(memarea.GrowLocals, area.GrowCode()),
		)
		m.Touch(wasm.SecFunction)
		m.Touch(wasm.SecCode)
		return nil
	}
	res, err := instrument.InstrumentSegments(orig, instrument.Segments{
		NoReturn: [][2]string{procExit},
		Setup:    setup,
		End: func(a *wasm.Asm, f *instrument.Func, s instrument.EndSite) []byte {
			return end(a, r, endSite{fn: f.Index, p: s.P, branch: s.Branch, block: s.Block, keep: s.Keep, operands: s.Operands, call: s.Call})
		},
		Blockwise: blockwise,
		Thread:    thread,
		Finish:    finish,
	})
	if err != nil {
		return nil, err
	}
	ins.Wasm = res.Module
	funcs := map[uint32]modelFunc{}
	for _, f := range res.Funcs {
		if f.Graph == nil || len(f.Graph.Blocks) <= 2 {
			continue
		}
		if f.Name != "" {
			ins.FuncNames[f.Index] = f.Name
		}
		pf := &pathFunc{index: f.Index, blockwise: f.Blockwise, dag: f.DAG, num: f.Num, block: make([]int32, len(f.Graph.Blocks))}
		for n := range pf.block {
			pf.block[n] = -1
			if n < 2 || f.Graph.Blocks[n].Cont {
				continue
			}
			if h := f.Graph.Blocks[n].Same; h != 0 {
				// A dispatch header entered by a threaded jump: the
				// header's block, whose node comes first.
				pf.block[n] = pf.block[h]
				continue
			}
			if len(ins.Blocks) >= 1<<31 {
				return nil, fmt.Errorf("more than 2^31 blocks")
			}
			pf.block[n] = int32(len(ins.Blocks))
			ins.Blocks = append(ins.Blocks, Block{Func: f.Index, Node: int32(n), Offset: f.BlockOffset(int32(n))})
		}
		for int(f.Index) >= len(ins.funcs) {
			ins.funcs = append(ins.funcs, nil)
		}
		ins.funcs[f.Index] = pf
		funcs[f.Index] = modelFunc{f: f, block: pf.block}
	}
	calls := wasm.NewReader(orig, 0, "code")
	var in wasm.Instr
	ins.model = newBlockModel(len(ins.Blocks), funcs, func(f *instrument.Func, e *cfg.Edge) int64 {
		at := f.InstrOffset(e.Instr)
		if at < 0 || at >= len(orig) {
			return -1
		}
		calls.Seek(at)
		if calls.Next(&in) != nil || in.Op != wasm.OpCall {
			return -1
		}
		return int64(in.A)
	})
	return ins, nil
}

// pathBlocks returns the blocks of the path that function fn reported
// with packed register value p.
func (ins *Instrumented) pathBlocks(fn uint32, p uint64) ([]uint32, error) {
	if ins.recent == nil {
		ins.recent = make([]recentPath, 1<<recentBits)
	}
	r := &ins.recent[((p^uint64(fn)<<32)*0x9e3779b97f4a7c15)>>(64-recentBits)]
	if r.ok && r.p == p && r.fn == fn {
		return r.blocks, nil
	}
	if int(fn) >= len(ins.funcs) || ins.funcs[fn] == nil {
		return nil, fmt.Errorf("osp: a path of function %d, which has no blocks", fn)
	}
	bs, err := ins.funcs[fn].blocks(p>>instrument.CountBits, uint32(p&countMask))
	if err == nil {
		*r = recentPath{fn: fn, ok: true, p: p, blocks: bs}
	}
	return bs, err
}
