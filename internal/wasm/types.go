package wasm

// This file defines the binary format's types: value, function and block
// types, and limits.

import (
	"fmt"
	"strings"
)

// Value type codes as they appear in the binary format.
const (
	I32       byte = 0x7F
	I64       byte = 0x7E
	F32       byte = 0x7D
	F64       byte = 0x7C
	V128      byte = 0x7B
	FuncRef   byte = 0x70
	ExternRef byte = 0x6F
	ExnRef    byte = 0x69
	RefNull   byte = 0x63 // (ref null ht)
	Ref       byte = 0x64 // (ref ht)
)

// ValType is a value type. Heap is meaningful only for Ref and RefNull: a
// type index when >= 0, an abstract heap type (as its s33 value) when < 0.
type ValType struct {
	Code byte
	Heap int64
}

// Short value types, for callers building code.
var (
	ValI32 = ValType{Code: I32}
	ValI64 = ValType{Code: I64}
	ValF32 = ValType{Code: F32}
	ValF64 = ValType{Code: F64}
)

func (t ValType) String() string {
	switch t.Code {
	case I32:
		return "i32"
	case I64:
		return "i64"
	case F32:
		return "f32"
	case F64:
		return "f64"
	case V128:
		return "v128"
	case FuncRef:
		return "funcref"
	case ExternRef:
		return "externref"
	case ExnRef:
		return "exnref"
	case RefNull, Ref:
		null := ""
		if t.Code == RefNull {
			null = "null "
		}
		return fmt.Sprintf("(ref %s%s)", null, heapTypeString(t.Heap))
	}
	return fmt.Sprintf("type(0x%02x)", t.Code)
}

func heapTypeString(h int64) string {
	if h >= 0 {
		return fmt.Sprint(h)
	}
	switch byte(h & 0x7f) {
	case FuncRef:
		return "func"
	case ExternRef:
		return "extern"
	case ExnRef:
		return "exn"
	}
	return fmt.Sprintf("heap(%d)", h)
}

func isValTypeCode(c byte) bool {
	switch c {
	case I32, I64, F32, F64, V128, FuncRef, ExternRef, ExnRef, RefNull, Ref:
		return true
	}
	return false
}

func appendValType(b []byte, t ValType) []byte {
	b = append(b, t.Code)
	if t.Code == Ref || t.Code == RefNull {
		b = appendS(b, t.Heap)
	}
	return b
}

// FuncType is a function signature.
type FuncType struct {
	Params, Results []ValType
	// RecGroup is the size of the recursive type group (0x4E) this type
	// starts; InRec marks every member of such a group, the first included.
	RecGroup uint32
	InRec    bool
}

// Equal reports whether two signatures are identical.
func (f FuncType) Equal(g FuncType) bool {
	if len(f.Params) != len(g.Params) || len(f.Results) != len(g.Results) {
		return false
	}
	for i := range f.Params {
		if f.Params[i] != g.Params[i] {
			return false
		}
	}
	for i := range f.Results {
		if f.Results[i] != g.Results[i] {
			return false
		}
	}
	return true
}

func (f FuncType) String() string {
	var sb strings.Builder
	sb.WriteString("(")
	for i, p := range f.Params {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(p.String())
	}
	sb.WriteString(") -> (")
	for i, r := range f.Results {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(r.String())
	}
	sb.WriteString(")")
	return sb.String()
}

// BlockType is the type of a block, loop, if, try or try_table: empty, one
// result value type, or a type index.
type BlockType struct {
	Kind BlockKind
	Val  ValType
	Type uint32
}

// BlockKind says which form a BlockType takes.
type BlockKind uint8

const (
	BlockEmpty BlockKind = iota
	BlockValue
	BlockTypeIndex
)

func appendBlockType(b []byte, bt BlockType) []byte {
	switch bt.Kind {
	case BlockEmpty:
		return append(b, 0x40)
	case BlockValue:
		return appendValType(b, bt.Val)
	default:
		return appendS(b, int64(bt.Type))
	}
}

// Limits are the size bounds of a memory or table.
type Limits struct {
	Flags    byte // as encoded: bit 0 max present, bit 1 shared, bit 2 64-bit
	Min, Max uint64
}

// HasMax reports whether a maximum is declared.
func (l Limits) HasMax() bool { return l.Flags&1 != 0 }

// Is64 reports whether the memory or table is indexed by i64 values.
func (l Limits) Is64() bool { return l.Flags&4 != 0 }
