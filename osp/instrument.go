package osp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"pathprof/cfg"
	"pathprof/wasm"
)

// The names the instrumented program imports and exports. The recorder
// module (recorder.go) provides TickName under RecorderModule.
const (
	RecorderModule = "pathprof_osp"
	TickName       = "tick"
	// CountdownExport exports the countdown global, so that the number
	// of block entries a run made can be read back when it ends.
	CountdownExport = "pathprof_osp_countdown"
)

// procExit is the call that never returns (cfg.Options.NoReturn).
var procExit = [2]string{"wasi_snapshot_preview1", "proc_exit"}

// Block is one instrumented basic block. Its index in Instrumented.Blocks
// is the id the program hands to the recorder.
type Block struct {
	Func uint32 // function index in the original module
	Node int32  // the block's node in the function's cfg.Graph
	// Offset is the file offset, in the original module, of the block's
	// first instruction.
	Offset int
}

// Instrumented is a module whose every reachable basic block counts down
// the skip.
type Instrumented struct {
	Wasm   []byte
	Blocks []Block
	// FuncNames holds the name-section names of the original module's
	// functions that have blocks, by original function index.
	FuncNames map[uint32]string
	// Size and SHA256 describe the original module.
	Size   int
	SHA256 string
}

// Instrument decodes orig and inserts, before the first instruction of
// every reachable basic block of every defined function,
//
//	global.get $c  i32.const 1  i32.sub  global.set $c
//	global.get $c  i32.eqz
//	if  i32.const BLOCK  call $tick  global.set $c  end
//
// where $c is a mutable i32 global appended to the module's globals (so no
// global index moves) and $tick is imported from RecorderModule. The
// countdown is one global for the whole program, so a sample follows
// control across calls and returns without any help; everything that is
// not a countdown reaching zero happens in the recorder. $c starts at 1:
// the first block entry calls the recorder, which hands back the first
// skip.
func Instrument(orig []byte) (*Instrumented, error) {
	return instrument(orig, countdownProbe)
}

// countdownProbe appends the code that Instrument puts at the start of block id.
func countdownProbe(a *wasm.Asm, c, tick uint32, id int32) {
	a.Idx(wasm.OpGlobalGet, c).I32(1).Op(wasm.OpI32Sub).Idx(wasm.OpGlobalSet, c)
	a.Idx(wasm.OpGlobalGet, c).Op(wasm.OpI32Eqz)
	a.Block(wasm.OpIf).I32(id).Idx(wasm.OpCall, tick).Idx(wasm.OpGlobalSet, c).Op(wasm.OpEnd)
}

// instrument is Instrument with the code at each block start written by
// probe, given the countdown global, the tick function and the block id
// (the evaluation measures the parts of the countdown's cost this way).
func instrument(orig []byte, probe func(a *wasm.Asm, c, tick uint32, id int32)) (*Instrumented, error) {
	m, err := wasm.Decode(orig)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(orig)
	ins := &Instrumented{Size: len(orig), SHA256: hex.EncodeToString(sum[:]), FuncNames: map[uint32]string{}}
	typ := m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI32}, Results: []wasm.ValType{wasm.ValI32}})
	tick, err := m.AddFuncImport(RecorderModule, TickName, typ)
	if err != nil {
		return nil, err
	}
	var one wasm.Asm
	one.I32(1).Op(wasm.OpEnd)
	c := m.NumImportedGlobals + uint32(len(m.Globals))
	m.Globals = append(m.Globals, wasm.Global{GlobalType: wasm.GlobalType{Type: wasm.ValI32, Mutable: true}, Init: one.B})
	m.Touch(wasm.SecGlobal)
	for _, e := range m.Exports {
		if e.Name == CountdownExport {
			return nil, fmt.Errorf("the module already exports %q", CountdownExport)
		}
	}
	m.Exports = append(m.Exports, wasm.Export{Name: CountdownExport, Kind: wasm.KindGlobal, Index: c})
	m.Touch(wasm.SecExport)

	opts := cfg.Options{NoReturn: cfg.NoReturnImports(m, procExit)}
	for i := range m.Code {
		code := &m.Code[i]
		g, err := cfg.Build(m, i, opts)
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", m.NumImportedFuncs+uint32(i), err)
		}
		if len(g.Blocks) <= 2 {
			continue
		}
		origFunc := m.NumImportedFuncs - 1 + uint32(i) // the tick import shifted every defined function by one
		if name := m.FuncName(m.NumImportedFuncs + uint32(i)); name != "" {
			ins.FuncNames[origFunc] = name
		}
		edits := make([]wasm.Edit, 0, len(g.Blocks)-2)
		for n := 2; n < len(g.Blocks); n++ {
			id := len(ins.Blocks)
			if id >= 1<<31 {
				return nil, fmt.Errorf("more than 2^31 blocks")
			}
			ins.Blocks = append(ins.Blocks, Block{
				Func:   origFunc,
				Node:   int32(n),
				Offset: code.OrigOff + int(code.Map.Orig(g.Blocks[n].Start)),
			})
			var a wasm.Asm
			probe(&a, c, tick, int32(id))
			edits = append(edits, wasm.Edit{Off: g.Blocks[n].Start, Ins: a.B})
		}
		if err := code.Splice(edits); err != nil {
			return nil, fmt.Errorf("function %d: %w", origFunc, err)
		}
	}
	if ins.Wasm, err = m.Encode(); err != nil {
		return nil, err
	}
	return ins, nil
}
