package wasm

// This file holds instructions: Instr, the Reader that decodes a body
// one instruction at a time, and AppendInstr, which encodes one.

import (
	"encoding/binary"
	"fmt"
)

// Catch is one clause of a try_table.
type Catch struct {
	Kind  byte // 0 catch, 1 catch_ref, 2 catch_all, 3 catch_all_ref
	Tag   uint32
	Label uint32
}

// Catch clause kinds of try_table.
const (
	CatchTag    byte = 0
	CatchRef    byte = 1
	CatchAll    byte = 2
	CatchAllRef byte = 3
)

// Instr is one decoded instruction. Slices in it point into the decoder's
// scratch space or the module's bytes and are valid until the next Next call.
type Instr struct {
	Op  Op
	Off uint32 // offset of the instruction in the decoded buffer
	Len uint32 // encoded length in bytes

	Block   BlockType // block, loop, if, try, try_table
	A, B    uint32    // index immediates; memarg alignment exponent (A)
	Offset  uint64    // memarg offset
	Const   uint64    // i32/i64 constants (as two's complement), f32/f64 bits
	Heap    int64     // ref.null heap type
	Lane    byte
	Bytes   []byte    // v128.const and i8x16.shuffle: 16 bytes
	Labels  []uint32  // br_table: the table followed by the default label
	Catches []Catch   // try_table
	Types   []ValType // select t*
}

// Reader decodes instructions one at a time without allocating.
type Reader struct {
	buf  []byte
	pos  int
	base int // absolute offset of buf[0], for error messages
	sect string

	labels  []uint32
	catches []Catch
	types   []ValType
}

// NewReader returns a Reader over buf, whose first byte is at absolute
// offset base in the module; errors name section and absolute offsets.
func NewReader(buf []byte, base int, section string) *Reader {
	return &Reader{buf: buf, base: base, sect: section}
}

// Reset makes the reader decode buf from its start, keeping its scratch space.
func (r *Reader) Reset(buf []byte, base int) {
	r.buf, r.pos, r.base = buf, 0, base
}

// Pos returns the offset of the next instruction in the buffer.
func (r *Reader) Pos() int { return r.pos }

// Seek sets the offset of the next instruction.
func (r *Reader) Seek(pos int) { r.pos = pos }

// Done reports whether the buffer is exhausted.
func (r *Reader) Done() bool { return r.pos >= len(r.buf) }

func (r *Reader) errf(at int, format string, args ...any) error {
	return &DecodeError{Section: r.sect, Offset: r.base + at, Msg: fmt.Sprintf(format, args...)}
}

func (r *Reader) u32(what string) (uint32, error) {
	// Most indices take one byte: read inline (u32 inlines).
	if p := r.pos; p < len(r.buf) && r.buf[p] < 0x80 {
		r.pos = p + 1
		return uint32(r.buf[p]), nil
	}
	return r.u32Long(what)
}

// u32Long is u32 of any encoding.
func (r *Reader) u32Long(what string) (uint32, error) {
	v, n, err := readU(r.buf[r.pos:], 32)
	if err != nil {
		return 0, r.errf(r.pos, "%s: %v", what, err)
	}
	r.pos += n
	return uint32(v), nil
}

func (r *Reader) byte1(what string) (byte, error) {
	if r.pos >= len(r.buf) {
		return 0, r.errf(r.pos, "%s: unexpected end", what)
	}
	c := r.buf[r.pos]
	r.pos++
	return c, nil
}

func (r *Reader) valType() (ValType, error) {
	at := r.pos
	c, err := r.byte1("value type")
	if err != nil {
		return ValType{}, err
	}
	if name, gc := gcValTypes[c]; gc {
		return ValType{}, r.errf(at, "value type 0x%02x (%s) is of %s", c, name, gcAdvice)
	}
	if !isValTypeCode(c) {
		return ValType{}, r.errf(at, "malformed value type 0x%02x", c)
	}
	t := ValType{Code: c}
	if c == Ref || c == RefNull {
		h, n, err := readS(r.buf[r.pos:], 33)
		if err != nil {
			return ValType{}, r.errf(r.pos, "heap type: %v", err)
		}
		r.pos += n
		t.Heap = h
	}
	return t, nil
}

func (r *Reader) blockType() (BlockType, error) {
	if r.pos >= len(r.buf) {
		return BlockType{}, r.errf(r.pos, "block type: unexpected end")
	}
	c := r.buf[r.pos]
	if c == 0x40 {
		r.pos++
		return BlockType{}, nil
	}
	if isValTypeCode(c) {
		t, err := r.valType()
		return BlockType{Kind: BlockValue, Val: t}, err
	}
	v, n, err := readS(r.buf[r.pos:], 33)
	if err != nil {
		return BlockType{}, r.errf(r.pos, "block type: %v", err)
	}
	if v < 0 {
		return BlockType{}, r.errf(r.pos, "malformed block type %d", v)
	}
	r.pos += n
	return BlockType{Kind: BlockTypeIndex, Type: uint32(v)}, nil
}

func (r *Reader) fixed(n int, what string) ([]byte, error) {
	if len(r.buf)-r.pos < n {
		return nil, r.errf(r.pos, "%s: unexpected end", what)
	}
	b := r.buf[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

func (r *Reader) zero(what string) error {
	at := r.pos
	c, err := r.byte1(what)
	if err != nil {
		return err
	}
	if c != 0 {
		return r.errf(at, "%s: zero byte expected", what)
	}
	return nil
}

// immLen reads the length of an immediate's vector (try_table's catches,
// br_table's labels, select's types), refusing more items than bytes left.
func (r *Reader) immLen(what, op, items string) (uint32, error) {
	n, err := r.u32(what)
	if err == nil && int(n) > len(r.buf)-r.pos {
		err = r.errf(r.pos, "%s: %d %s cannot fit", op, n, items)
	}
	return n, err
}

// immVec reads an immediate's n items with item into *scratch, space the
// Reader keeps from one instruction to the next so that decoding does not
// allocate.
func immVec[T any](r *Reader, scratch *[]T, n uint32, item func(*Reader) (T, error)) ([]T, error) {
	s := (*scratch)[:0]
	for range n {
		x, err := item(r)
		if err != nil {
			return nil, err
		}
		s = append(s, x)
	}
	*scratch = s
	return s, nil
}

// label and selectType are the items of br_table and select t*; they are
// small enough to inline, so that Next, with immVec inlined, calls u32 and
// valType directly.
func (r *Reader) label() (uint32, error)       { return r.u32("br_table label") }
func (r *Reader) selectType() (ValType, error) { return r.valType() }

// Next decodes the next instruction into in.
func (r *Reader) Next(in *Instr) error {
	start := r.pos
	c, err := r.byte1("opcode")
	if err != nil {
		return err
	}
	op := Op(c)
	if c == 0xFC || c == 0xFD || c == 0xFE {
		sub, err := r.u32("opcode")
		if err != nil {
			return err
		}
		if sub > 0xFFFF {
			return r.errf(start, "unknown opcode 0x%02X 0x%X", c, sub)
		}
		op = Op(c)<<16 | Op(sub)
	}
	info, ok := lookupOp(op)
	if !ok {
		return r.errf(start, "unknown opcode %s", op)
	}
	in.Op = op
	in.Off = uint32(start)
	name := info.name
	switch info.imm {
	case immNone:
	case immBlock:
		if in.Block, err = r.blockType(); err != nil {
			return err
		}
	case immTryTable:
		if in.Block, err = r.blockType(); err != nil {
			return err
		}
		n, err := r.immLen("try_table catch count", "try_table", "catch clauses")
		if err != nil {
			return err
		}
		cs := r.catches[:0]
		for i := uint32(0); i < n; i++ {
			at := r.pos
			k, err := r.byte1("catch kind")
			if err != nil {
				return err
			}
			var cl Catch
			cl.Kind = k
			switch k {
			case CatchTag, CatchRef:
				if cl.Tag, err = r.u32("catch tag"); err != nil {
					return err
				}
			case CatchAll, CatchAllRef:
			default:
				return r.errf(at, "malformed catch clause kind 0x%02x", k)
			}
			if cl.Label, err = r.u32("catch label"); err != nil {
				return err
			}
			cs = append(cs, cl)
		}
		r.catches = cs
		in.Catches = cs
	case immIndex:
		if in.A, err = r.u32(name); err != nil {
			return err
		}
	case immIndex2:
		if in.A, err = r.u32(name); err != nil {
			return err
		}
		if in.B, err = r.u32(name); err != nil {
			return err
		}
	case immIndexZero:
		if in.A, err = r.u32(name); err != nil {
			return err
		}
		if err = r.zero(name); err != nil {
			return err
		}
	case immZero:
		if err = r.zero(name); err != nil {
			return err
		}
	case immZeroZero:
		if err = r.zero(name); err != nil {
			return err
		}
		if err = r.zero(name); err != nil {
			return err
		}
	case immBrTable:
		n, err := r.immLen("br_table size", "br_table", "labels")
		if err != nil {
			return err
		}
		if in.Labels, err = immVec(r, &r.labels, n+1, (*Reader).label); err != nil {
			return err
		}
	case immSelectT:
		n, err := r.immLen("select types", "select", "types")
		if err != nil {
			return err
		}
		if in.Types, err = immVec(r, &r.types, n, (*Reader).selectType); err != nil {
			return err
		}
	case immI32, immI64:
		bits := uint(32)
		if info.imm == immI64 {
			bits = 64
		}
		v, n, err := readS(r.buf[r.pos:], bits)
		if err != nil {
			return r.errf(r.pos, "%s: %v", name, err) // i32.const or i64.const
		}
		r.pos += n
		in.Const = uint64(v)
	case immF32:
		b, err := r.fixed(4, name)
		if err != nil {
			return err
		}
		in.Const = uint64(binary.LittleEndian.Uint32(b))
	case immF64:
		b, err := r.fixed(8, name)
		if err != nil {
			return err
		}
		in.Const = binary.LittleEndian.Uint64(b)
	case immHeapType:
		v, n, err := readS(r.buf[r.pos:], 33)
		if err != nil {
			return r.errf(r.pos, "ref.null heap type: %v", err)
		}
		r.pos += n
		in.Heap = v
	case immMemArg, immMemArgLane:
		if in.A, err = r.u32("memory alignment"); err != nil {
			return err
		}
		if in.A >= 32 {
			// Bit 6 would announce a memory index (multi-memory), which
			// the runtimes this codec serves do not support.
			return r.errf(start, "%s: malformed memop flags %d", name, in.A)
		}
		v, n, err := readU(r.buf[r.pos:], 32)
		if err != nil {
			return r.errf(r.pos, "memory offset: %v", err)
		}
		r.pos += n
		in.Offset = v
		if info.imm == immMemArgLane {
			if in.Lane, err = r.byte1("lane index"); err != nil {
				return err
			}
		}
	case immLane:
		if in.Lane, err = r.byte1("lane index"); err != nil {
			return err
		}
	case immBytes16:
		if in.Bytes, err = r.fixed(16, name); err != nil {
			return err
		}
	}
	in.Len = uint32(r.pos - start)
	return nil
}

// Padded says whether in, an instruction of a one-byte opcode with index,
// constant or memory-argument immediates, is encoded in more bytes than
// AppendInstr writes: linkers leave relocated immediates (called
// functions, addresses, the stack pointer's global) padded to five bytes.
func Padded(in *Instr) bool {
	if in.Op > 0xFF || in.Len <= 2 {
		return false
	}
	n := 1
	switch coreOps[in.Op].imm {
	case immIndex:
		n += sizeU(uint64(in.A))
	case immIndex2:
		n += sizeU(uint64(in.A)) + sizeU(uint64(in.B))
	case immI32:
		n += sizeS(int64(int32(in.Const)))
	case immI64:
		n += sizeS(int64(in.Const))
	case immMemArg:
		n += sizeU(uint64(in.A)) + sizeU(in.Offset)
	default:
		return false
	}
	return uint32(n) < in.Len
}

// AppendInstr appends the shortest encoding of in to b.
func AppendInstr(b []byte, in *Instr) []byte {
	op := in.Op
	if op > 0xFF {
		b = append(b, byte(op>>16))
		b = appendU(b, uint64(op&0xFFFF))
	} else {
		b = append(b, byte(op))
	}
	info, _ := lookupOp(op)
	switch info.imm {
	case immBlock:
		b = appendBlockType(b, in.Block)
	case immTryTable:
		b = appendBlockType(b, in.Block)
		b = appendU(b, uint64(len(in.Catches)))
		for _, c := range in.Catches {
			b = append(b, c.Kind)
			if c.Kind == CatchTag || c.Kind == CatchRef {
				b = appendU(b, uint64(c.Tag))
			}
			b = appendU(b, uint64(c.Label))
		}
	case immIndex:
		b = appendU(b, uint64(in.A))
	case immIndex2:
		b = appendU(b, uint64(in.A))
		b = appendU(b, uint64(in.B))
	case immIndexZero:
		b = appendU(b, uint64(in.A))
		b = append(b, 0)
	case immZero:
		b = append(b, 0)
	case immZeroZero:
		b = append(b, 0, 0)
	case immBrTable:
		b = appendU(b, uint64(len(in.Labels)-1))
		for _, l := range in.Labels {
			b = appendU(b, uint64(l))
		}
	case immSelectT:
		b = appendU(b, uint64(len(in.Types)))
		for _, t := range in.Types {
			b = appendValType(b, t)
		}
	case immI32:
		b = appendS(b, int64(int32(in.Const)))
	case immI64:
		b = appendS(b, int64(in.Const))
	case immF32:
		b = binary.LittleEndian.AppendUint32(b, uint32(in.Const))
	case immF64:
		b = binary.LittleEndian.AppendUint64(b, in.Const)
	case immHeapType:
		b = appendS(b, in.Heap)
	case immMemArg, immMemArgLane:
		b = appendU(b, uint64(in.A))
		b = appendU(b, in.Offset)
		if info.imm == immMemArgLane {
			b = append(b, in.Lane)
		}
	case immLane:
		b = append(b, in.Lane)
	case immBytes16:
		b = append(b, in.Bytes...)
	}
	return b
}
