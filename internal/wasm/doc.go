// Package wasm reads, edits and writes WebAssembly binary modules.
//
// Decoding keeps every section's original bytes next to its decoded form, and
// encoding copies a section that was not edited byte for byte, so an
// unmodified module re-encodes to exactly the input, whatever LEB128 padding
// its producer chose (Go and wasm-ld both pad). Edited sections are encoded
// afresh. Function bodies stay as bytes and are decoded on demand with a
// Reader: holding every instruction of a 16 MB module as structs would cost
// many times the module's size.
package wasm
