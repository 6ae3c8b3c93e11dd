package wasm

// This file names the features a module may use that pathprof cannot
// run, so that a refusal says what the module uses and what would work
// instead, rather than which byte was unexpected.

import (
	"errors"
	"fmt"
)

// ErrUnsupported is wrapped by Unsupported's errors.
var ErrUnsupported = errors.New("unsupported feature")

// gcAdvice ends every refusal of the GC proposal.
const gcAdvice = "the GC proposal (managed structs and arrays, as Kotlin/Wasm and Dart emit), which wazero cannot run and pathprof cannot instrument; a build to linear memory (C, C++, Rust, Go, Zig, or Kotlin/Native and Dart compiled natively) can be profiled"

// gcValTypes are the GC proposal's value type codes: abstract heap types
// used as shorthand reference types.
var gcValTypes = map[byte]string{
	0x6e: "anyref", 0x6d: "eqref", 0x6c: "i31ref", 0x6b: "structref",
	0x6a: "arrayref", 0x71: "nullref", 0x72: "nullexternref", 0x73: "nullfuncref",
}

// gcTypeForms are the GC proposal's type section forms.
var gcTypeForms = map[byte]string{
	0x5f: "a struct type", 0x5e: "an array type", 0x4e: "a recursive type group",
	0x50: "a subtype", 0x4f: "a final subtype",
}

// componentVersion is the version field of a component (the component
// model's binary, layer 1), which shares the core module's magic.
const componentVersion = 0x0001000d

func componentMsg() string {
	return "a component (the component model's binary), not a core module: pathprof profiles core modules; build for wasm32-wasip1 (a core WASI command or reactor) rather than wasm32-wasip2"
}

// Unsupported reports the first feature the module uses that wazero
// cannot run and that the decoder accepts: 64-bit memories (memory64) and
// wasi-threads' thread-spawn.
func (m *Module) Unsupported() error {
	mem := func(l Limits) error {
		if l.Flags&4 != 0 {
			return fmt.Errorf("%w: the module uses memory64 (a memory with 64-bit addresses), which wazero cannot run; build for wasm32 (such as wasm32-wasip1) instead of wasm64", ErrUnsupported)
		}
		return nil
	}
	for _, im := range m.Imports {
		if im.Kind == KindFunc && im.Module == "wasi" && im.Name == "thread-spawn" {
			return fmt.Errorf("%w: the module imports wasi.thread-spawn (wasi-threads), which pathprof's runtime does not provide: build without threads (wasm32-wasip1, not wasm32-wasip1-threads)", ErrUnsupported)
		}
		if im.Kind == KindMemory {
			if err := mem(im.Memory); err != nil {
				return err
			}
		}
	}
	for _, l := range m.Memories {
		if err := mem(l); err != nil {
			return err
		}
	}
	return nil
}
