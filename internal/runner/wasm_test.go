package runner_test

// A minimal WebAssembly encoder for the handful of modules the tests need,
// so they do not depend on external tools; its integers are written by the
// wasm package's LEB128 encoder.

import "github.com/pathprof/pathprof/internal/wasm"

const (
	secType     = 1
	secImport   = 2
	secFunction = 3
	secGlobal   = 6
	secExport   = 7
	secCode     = 10

	kindFunc   = 0
	kindGlobal = 3

	i32 = 0x7f
)

func uleb(n int) []byte { return wasm.AppendULEB128(nil, uint64(n)) }

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func vec(items ...[]byte) []byte { return cat(uleb(len(items)), cat(items...)) }

func str(s string) []byte { return cat(uleb(len(s)), []byte(s)) }

func section(id byte, items ...[]byte) []byte {
	body := vec(items...)
	return cat([]byte{id}, uleb(len(body)), body)
}

func module(sections ...[]byte) []byte {
	return cat([]byte("\x00asm\x01\x00\x00\x00"), cat(sections...))
}

// funcType encodes a function type with no parameters and no results.
func funcType() []byte { return []byte{0x60, 0, 0} }

func export(name string, kind byte, index int) []byte {
	return cat(str(name), []byte{kind}, uleb(index))
}

func importFunc(module, name string, typeIndex int) []byte {
	return cat(str(module), str(name), []byte{kindFunc}, uleb(typeIndex))
}

// body encodes a function body without locals; code must not include the
// final end.
func body(code ...byte) []byte {
	b := cat([]byte{0}, code, []byte{0x0b})
	return cat(uleb(len(b)), b)
}

const (
	opUnreachable = 0x00
	opLoop        = 0x03
	opEnd         = 0x0b
	opBr          = 0x0c
	opCall        = 0x10
	opGlobalGet   = 0x23
	opGlobalSet   = 0x24
	opI32Const    = 0x41
	opI32Add      = 0x6a
	blockVoid     = 0x40
)

// command returns a module whose _start runs code, importing the given
// functions first (all of type [] -> []).
func command(imports [][]byte, code ...byte) []byte {
	return module(
		section(secType, funcType()),
		section(secImport, imports...),
		section(secFunction, uleb(0)),
		section(secExport, export("_start", kindFunc, len(imports))),
		section(secCode, body(code...)),
	)
}

// counterModule exports a mutable i32 global "count" and a function "inc"
// that increments it: the shape of the module instrumented programs import.
func counterModule() []byte {
	return module(
		section(secType, funcType()),
		section(secFunction, uleb(0)),
		section(secGlobal, []byte{i32, 1, opI32Const, 0, opEnd}),
		section(secExport, export("inc", kindFunc, 0), export("count", kindGlobal, 0)),
		section(secCode, body(opGlobalGet, 0, opI32Const, 1, opI32Add, opGlobalSet, 0)),
	)
}
