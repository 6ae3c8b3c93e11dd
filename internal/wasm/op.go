package wasm

// This file defines opcodes: their names, the immediates each takes, and
// the tables the decoder looks them up in (the names and immediates
// themselves are generated into opnames.go).

import "fmt"

// Op is an opcode: a single byte for the core instructions, or the prefix
// byte (0xFC, 0xFD, 0xFE) shifted left by 16 plus the sub-opcode.
type Op uint32

// Opcodes the control-flow code refers to by name.
const (
	OpUnreachable        Op = 0x00
	OpNop                Op = 0x01
	OpBlock              Op = 0x02
	OpLoop               Op = 0x03
	OpIf                 Op = 0x04
	OpElse               Op = 0x05
	OpTry                Op = 0x06 // legacy exception handling
	OpCatch              Op = 0x07 // legacy exception handling
	OpThrow              Op = 0x08
	OpRethrow            Op = 0x09 // legacy exception handling
	OpThrowRef           Op = 0x0A
	OpEnd                Op = 0x0B
	OpBr                 Op = 0x0C
	OpBrIf               Op = 0x0D
	OpBrTable            Op = 0x0E
	OpReturn             Op = 0x0F
	OpCall               Op = 0x10
	OpCallIndirect       Op = 0x11
	OpReturnCall         Op = 0x12
	OpReturnCallIndirect Op = 0x13
	OpCallRef            Op = 0x14
	OpReturnCallRef      Op = 0x15
	OpDelegate           Op = 0x18 // legacy exception handling
	OpCatchAll           Op = 0x19 // legacy exception handling
	OpDrop               Op = 0x1A
	OpSelect             Op = 0x1B
	OpSelectT            Op = 0x1C
	OpTryTable           Op = 0x1F
	OpLocalGet           Op = 0x20
	OpLocalSet           Op = 0x21
	OpLocalTee           Op = 0x22
	OpGlobalGet          Op = 0x23
	OpGlobalSet          Op = 0x24
	OpI32Const           Op = 0x41
	OpI64Const           Op = 0x42
	OpF32Const           Op = 0x43
	OpF64Const           Op = 0x44
	OpI32Add             Op = 0x6A
	OpI32Sub             Op = 0x6B
	OpI32Mul             Op = 0x6C
	OpI64Add             Op = 0x7C
	OpI64Sub             Op = 0x7D
	OpI64Mul             Op = 0x7E
	OpRefNull            Op = 0xD0
	OpRefFunc            Op = 0xD2
	OpBrOnNull           Op = 0xD5
	OpBrOnNonNull        Op = 0xD6
	OpV128Const          Op = 0xFD000C
)

type immKind uint8

const (
	immNone       immKind = iota
	immBlock              // blocktype
	immTryTable           // blocktype, vec(catch)
	immIndex              // one u32
	immIndex2             // two u32 (call_indirect: type, table; table.init: elem, table; table.copy)
	immIndexZero          // u32 then a zero byte (memory.init)
	immZero               // one zero byte (memory.size, memory.grow, memory.fill, atomic.fence)
	immZeroZero           // two zero bytes (memory.copy)
	immBrTable            // vec(u32) u32
	immSelectT            // vec(valtype)
	immI32                // s32
	immI64                // s64
	immF32                // 4 bytes
	immF64                // 8 bytes
	immHeapType           // s33 heap type (ref.null)
	immMemArg             // align u32, offset u64
	immMemArgLane         // memarg, lane byte
	immLane               // one byte
	immBytes16            // 16 bytes (v128.const, i8x16.shuffle)
)

type opInfo struct {
	name string
	imm  immKind
}

// Name returns the instruction's text-format name.
func (op Op) Name() string {
	if info, ok := opInfos[op]; ok {
		return info.name
	}
	return op.String()
}

func (op Op) String() string {
	if info, ok := opInfos[op]; ok {
		return info.name
	}
	if op > 0xFF {
		return fmt.Sprintf("0x%02X 0x%X", byte(op>>16), uint32(op&0xFFFF))
	}
	return fmt.Sprintf("0x%02X", uint32(op))
}

// The decoder looks opcodes up in dense tables built from opInfos: a map
// lookup per instruction would dominate decoding of large modules.
var (
	coreOps     [256]opInfo
	coreKnown   [256]bool
	prefixedOps [3][]opInfo // 0xFC, 0xFD, 0xFE
	prefixedOK  [3][]bool
)

func init() {
	for op, info := range opInfos {
		if op <= 0xFF {
			coreOps[op] = info
			coreKnown[op] = true
			continue
		}
		p := int(op>>16) - 0xFC
		sub := int(op & 0xFFFF)
		for len(prefixedOps[p]) <= sub {
			prefixedOps[p] = append(prefixedOps[p], opInfo{})
			prefixedOK[p] = append(prefixedOK[p], false)
		}
		prefixedOps[p][sub] = info
		prefixedOK[p][sub] = true
	}
}

func lookupOp(op Op) (opInfo, bool) {
	if op <= 0xFF {
		return coreOps[op], coreKnown[op]
	}
	p := int(op>>16) - 0xFC
	sub := int(op & 0xFFFF)
	if p < 0 || p > 2 || sub >= len(prefixedOps[p]) {
		return opInfo{}, false
	}
	return prefixedOps[p][sub], prefixedOK[p][sub]
}
