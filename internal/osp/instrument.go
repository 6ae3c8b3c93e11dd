// The sampling copy: Instrument builds it on instrument.InstrumentSegments,
// adding the countdown, the recorder and its globals, and Instrumented
// holds it with the module's blocks and what turns paths back into them.

package osp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/memarea"
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
