package tracer

// This file records block events: the wasm buffer module the traced copy
// calls at every block, and the host side that drains it.

import (
	"context"
	"encoding/binary"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/wasm"
)

// Calling a Go host function on every block entry made the traced C test
// programs 70 to 130 times slower than plain runs, while a call into
// another wasm module costs about 2 ns. So $block is a small wasm module,
// ImportModule, that appends the events to its memory and calls the Go
// host module flushModule when the buffer is full. The listener drains the
// buffer before it looks at any call, return or abort, so the events are
// always seen in program order.
const (
	flushModule = "pathprof_trace_flush"
	// bufferEvents is how many (function, block) pairs fit in the buffer.
	bufferEvents = 1 << 15
)

// bufferModule returns the module that records block events:
//
//	(import "pathprof_trace_flush" "flush" (func $flush))
//	(memory (export "buf") 4)
//	(global $pos (export "pos") (mut i32) (i32.const 0))
//	(func (export "block") (param $f i32) (param $b i32) (local $p i32)
//	  global.get $pos  local.get $f  i32.store
//	  global.get $pos  local.get $b  i32.store offset=4
//	  global.get $pos  i32.const 8  i32.add  local.tee $p  global.set $pos
//	  local.get $p  i32.const bufferEvents*8  i32.eq
//	  if  call $flush  end)
func bufferModule() ([]byte, error) {
	const size = bufferEvents * 8
	var a wasm.Asm
	a.Idx(wasm.OpGlobalGet, 0).Idx(wasm.OpLocalGet, 0).Mem(wasm.OpI32Store, 2, 0)
	a.Idx(wasm.OpGlobalGet, 0).Idx(wasm.OpLocalGet, 1).Mem(wasm.OpI32Store, 2, 4)
	a.Idx(wasm.OpGlobalGet, 0).I32(8).Op(wasm.OpI32Add).Idx(wasm.OpLocalTee, 2).Idx(wasm.OpGlobalSet, 0)
	a.Idx(wasm.OpLocalGet, 2).I32(size).Op(wasm.OpI32Eq)
	a.Block(wasm.OpIf).Idx(wasm.OpCall, 0).Op(wasm.OpEnd).Op(wasm.OpEnd)
	body := append([]byte{1, 1, wasm.I32}, a.B...) // one run of one i32 local
	var init wasm.Asm
	init.I32(0).Op(wasm.OpEnd)
	m := &wasm.Module{
		Version: 1,
		Types: []wasm.FuncType{
			{},
			{Params: []wasm.ValType{wasm.ValI32, wasm.ValI32}},
		},
		Imports:          []wasm.Import{{Module: flushModule, Name: "flush", Kind: wasm.KindFunc, Type: 0}},
		NumImportedFuncs: 1,
		Funcs:            []uint32{1},
		Memories:         []wasm.Limits{{Min: size / 65536}},
		Globals:          []wasm.Global{{GlobalType: wasm.GlobalType{Type: wasm.ValI32, Mutable: true}, Init: init.B}},
		Exports: []wasm.Export{
			{Name: "buf", Kind: wasm.KindMemory},
			{Name: "pos", Kind: wasm.KindGlobal},
			{Name: ImportName, Kind: wasm.KindFunc, Index: 1},
		},
		Code: []wasm.Code{{Body: body, ExprOff: 3}},
	}
	for _, id := range []byte{wasm.SecType, wasm.SecImport, wasm.SecFunction, wasm.SecMemory, wasm.SecGlobal, wasm.SecExport, wasm.SecCode} {
		m.Touch(id)
	}
	b, err := m.Encode()
	if err != nil {
		return nil, err
	}
	// A name section naming the module, so that the listener factory,
	// which sees only function definitions, can tell its function from
	// the program's.
	name := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	mod := name(ImportModule)
	sub := append([]byte{0, byte(len(mod))}, mod...)
	payload := append(name("name"), sub...)
	return append(append(b, 0, byte(len(payload))), payload...), nil
}

var bufferWasm = sync.OnceValues(bufferModule)

// hostModules defines the flush function the buffer module calls.
func (st *state) hostModules(ctx context.Context, r wazero.Runtime) ([]wazero.CompiledModule, error) {
	st.rt = r
	c, err := r.NewHostModuleBuilder(flushModule).
		NewFunctionBuilder().
		WithGoFunction(api.GoFunc(func(context.Context, []uint64) {
			st.drain()
			if st.err != nil {
				panic(st.err) // stop the program: the trace is already wrong
			}
		}), nil, nil).
		Export("flush").
		Compile(ctx)
	if err != nil {
		return nil, err
	}
	return []wazero.CompiledModule{c}, nil
}

// drain hands the buffered block events to block and empties the buffer.
func (st *state) drain() {
	if st.pos == nil {
		m := st.rt.Module(ImportModule)
		if m == nil {
			return // not instantiated yet: no events either
		}
		st.mem = m.ExportedMemory("buf")
		st.pos, _ = m.ExportedGlobal("pos").(api.MutableGlobal)
		if st.mem == nil || st.pos == nil {
			st.fail("the buffer module exports no memory or mutable position")
			return
		}
	}
	n := uint32(st.pos.Get())
	if n == 0 {
		return
	}
	buf, ok := st.mem.Read(0, n)
	if !ok || n%8 != 0 {
		st.fail("buffer position %d out of range", n)
		return
	}
	for i := 0; i < len(buf) && st.err == nil; i += 8 {
		st.block(binary.LittleEndian.Uint32(buf[i:]), binary.LittleEndian.Uint32(buf[i+4:]))
	}
	st.pos.Set(0)
}
