package tracer_test

import (
	"testing"

	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
)

// fn is a function to put in a test module: its type, i32 locals beyond the
// parameters, and its instructions (the final end included).
type fn struct {
	typ    uint32
	locals uint32
	code   []byte
}

// testModule holds the parts of a module built for a test.
type testModule struct {
	types   []wasm.FuncType
	imports []wasm.Import
	funcs   []fn
	tags    []wasm.Tag
	exports []wasm.Export
}

// encode builds the module with the wasm package's encoder.
func (tm testModule) encode(t testing.TB) []byte {
	t.Helper()
	m := &wasm.Module{Version: 1, Types: tm.types, Imports: tm.imports, Tags: tm.tags, Exports: tm.exports}
	for _, f := range tm.funcs {
		m.Funcs = append(m.Funcs, f.typ)
		body := []byte{0}
		if f.locals > 0 {
			body = append(wasm.AppendULEB128([]byte{1}, uint64(f.locals)), wasm.I32)
		}
		exprOff := len(body)
		body = append(body, f.code...)
		m.Code = append(m.Code, wasm.Code{Body: body, ExprOff: uint32(exprOff)})
	}
	for _, id := range []byte{wasm.SecType, wasm.SecImport, wasm.SecFunction, wasm.SecTag, wasm.SecExport, wasm.SecCode} {
		if id == wasm.SecTag && len(tm.tags) == 0 || id == wasm.SecImport && len(tm.imports) == 0 {
			continue
		}
		m.Touch(id)
	}
	b := wasmtest.Encode(t, m)
	if _, err := wasm.Decode(b); err != nil {
		t.Fatalf("the test module does not decode: %v", err)
	}
	return b
}

// code assembles instructions.
func code(ins ...wasm.Instr) []byte {
	var b []byte
	for i := range ins {
		b = wasm.AppendInstr(b, &ins[i])
	}
	return b
}

func op(o wasm.Op) wasm.Instr             { return wasm.Instr{Op: o} }
func opA(o wasm.Op, a uint32) wasm.Instr  { return wasm.Instr{Op: o, A: a} }
func i32(v int32) wasm.Instr              { return wasm.Instr{Op: wasm.OpI32Const, Const: uint64(v)} }
func blk(o wasm.Op) wasm.Instr            { return wasm.Instr{Op: o} }
func tryTable(c ...wasm.Catch) wasm.Instr { return wasm.Instr{Op: wasm.OpTryTable, Catches: c} }
