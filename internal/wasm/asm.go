package wasm

// This file holds Asm, which writes instructions for code that is
// generated rather than decoded.

// Asm appends instructions to a byte slice: the instrumenter and the
// generated counter module write code with it.
type Asm struct {
	B []byte
}

// Op appends an instruction without immediates.
func (a *Asm) Op(op Op) *Asm {
	a.B = AppendInstr(a.B, &Instr{Op: op})
	return a
}

// Idx appends an instruction with one index immediate (local.get, call, br, ...).
func (a *Asm) Idx(op Op, idx uint32) *Asm {
	a.B = AppendInstr(a.B, &Instr{Op: op, A: idx})
	return a
}

// I32 appends i32.const v.
func (a *Asm) I32(v int32) *Asm {
	a.B = AppendInstr(a.B, &Instr{Op: OpI32Const, Const: uint64(v)})
	return a
}

// I64 appends i64.const v.
func (a *Asm) I64(v int64) *Asm {
	a.B = AppendInstr(a.B, &Instr{Op: OpI64Const, Const: uint64(v)})
	return a
}

// AddI64 appends what adds v to the i64 on the stack: i64.add of v, or
// i64.sub of -v where v is negative. Engines take a small positive
// constant as an immediate, where a negative 64-bit one is often first
// loaded into a register (wazero on x86-64 loads any 64-bit constant
// outside 0..2^31-1 with a movabs).
func (a *Asm) AddI64(v int64) *Asm {
	if v < 0 && v != -v {
		return a.I64(-v).Op(OpI64Sub)
	}
	return a.I64(v).Op(OpI64Add)
}

// Mem appends a load or store with the given alignment exponent and offset.
func (a *Asm) Mem(op Op, align uint32, offset uint64) *Asm {
	a.B = AppendInstr(a.B, &Instr{Op: op, A: align, Offset: offset})
	return a
}

// Block appends block, loop or if with an empty block type.
func (a *Asm) Block(op Op) *Asm {
	a.B = AppendInstr(a.B, &Instr{Op: op})
	return a
}

// BlockT appends block, loop or if with a type-index block type.
func (a *Asm) BlockT(op Op, typeIdx uint32) *Asm {
	a.B = AppendInstr(a.B, &Instr{Op: op, Block: BlockType{Kind: BlockTypeIndex, Type: typeIdx}})
	return a
}

// BrTable appends br_table with the labels, the default last.
func (a *Asm) BrTable(labels []uint32) *Asm {
	a.B = AppendInstr(a.B, &Instr{Op: OpBrTable, Labels: labels})
	return a
}

// Opcodes used by generated code, beyond those named in instr.go.
const (
	OpI32Load   Op = 0x28
	OpI64Load   Op = 0x29
	OpI32Store  Op = 0x36
	OpI64Store  Op = 0x37
	OpMemSize   Op = 0x3F
	OpMemGrow   Op = 0x40
	OpI32Eqz    Op = 0x45
	OpI32Eq     Op = 0x46
	OpI32Ne     Op = 0x47
	OpI32LtS    Op = 0x48
	OpI32LtU    Op = 0x49
	OpI32GtS    Op = 0x4A
	OpI32GtU    Op = 0x4B
	OpI32LeU    Op = 0x4D
	OpI32GeU    Op = 0x4F
	OpI64Eqz    Op = 0x50
	OpI64Eq     Op = 0x51
	OpI64LtS    Op = 0x53
	OpI64GtU    Op = 0x56
	OpI64GeU    Op = 0x5A
	OpI32DivU   Op = 0x6E
	OpI32RemU   Op = 0x70
	OpI32And    Op = 0x71
	OpI32Or     Op = 0x72
	OpI32Shl    Op = 0x74
	OpI32ShrU   Op = 0x76
	OpI64Ctz    Op = 0x7A
	OpI64RemU   Op = 0x82
	OpI64And    Op = 0x83
	OpI64Or     Op = 0x84
	OpI64Xor    Op = 0x85
	OpI64Shl    Op = 0x86
	OpI64ShrU   Op = 0x88
	OpI64Rotr   Op = 0x8A
	OpI32Wrap   Op = 0xA7
	OpI64ExtU   Op = 0xAD
	OpRefIsNull Op = 0xD1
	OpMemCopy   Op = 0xFC<<16 | 10
	OpMemFill   Op = 0xFC<<16 | 11
)
