package wasm

// This file holds Decode, the loop over a module's sections, and the
// decoder of one section's payload with its readers of primitive values,
// vectors and constant expressions.

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// decoder reads one section's payload. It is a Reader so that both read
// integers, bytes and value types, and report errors, the same way, and a
// constant expression is read by the Reader's Next.
type decoder struct {
	Reader
}

func newDecoder(b []byte, base int, section string) *decoder {
	return &decoder{Reader{buf: b, base: base, sect: section}}
}

// uN reads an unsigned integer of at most bits bits, for the limits whose
// width (32 or 64) their flags set.
func (d *decoder) uN(what string, bits uint) (uint64, error) {
	v, n, err := readU(d.buf[d.pos:], bits)
	if err != nil {
		return 0, d.errf(d.pos, "%s: %v", what, err)
	}
	d.pos += n
	return v, nil
}

func (d *decoder) bytes(n uint32, what string) ([]byte, error) {
	if uint64(n) > uint64(len(d.buf)-d.pos) {
		return nil, d.errf(d.pos, "%s: length %d out of bounds", what, n)
	}
	b := d.buf[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return b, nil
}

func (d *decoder) name(what string) (string, error) {
	at := d.pos
	n, err := d.u32(what + " length")
	if err != nil {
		return "", err
	}
	b, err := d.bytes(n, what)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", d.errf(at, "%s: malformed UTF-8 encoding", what)
	}
	return string(b), nil
}

// count reads a vector length, refusing lengths that cannot fit in the
// rest of the payload (each element takes at least min bytes) so that a
// hostile length never causes a huge allocation.
func (d *decoder) count(what string, min int) (uint32, error) {
	at := d.pos
	n, err := d.u32(what + " count")
	if err != nil {
		return 0, err
	}
	if uint64(n)*uint64(min) > uint64(len(d.buf)-d.pos) {
		return 0, d.errf(at, "%s count %d: too large for the section", what, n)
	}
	return n, nil
}

// kind reads a byte that takes the values 0 to max (a kind, an attribute),
// refusing others as malformed: export, import, element and tag entries
// each hold one.
func (d *decoder) kind(what string, max byte) (byte, error) {
	c, err := d.byte1(what)
	if err == nil && c > max {
		return c, d.errf(d.pos-1, "malformed %s 0x%02x", what, c)
	}
	return c, err
}

// segmentFlags reads the flags of a data or element segment, which take
// the values 0 to max, refusing others as malformed.
func (d *decoder) segmentFlags(what string, max uint32) (uint32, error) {
	at := d.pos
	f, err := d.u32(what + " flags")
	if err == nil && f > max {
		err = d.errf(at, "malformed %s flags %d", what, f)
	}
	return f, err
}

// vec reads a vector into *s: its count, refused as count refuses one when
// count items of min bytes cannot fit, then each item with item. Sections
// and the vectors inside them are read this way, so that each writes only
// its item's decoder.
func vec[T any](d *decoder, s *[]T, what string, min int, item func(*decoder) (T, error)) error {
	n, err := d.count(what, min)
	if err != nil {
		return err
	}
	v := make([]T, n)
	for i := range v {
		if v[i], err = item(d); err != nil {
			return err
		}
	}
	*s = v
	return nil
}

// u32s reads a vector of u32 values (function and type indices) into *s,
// each named item in errors.
func (d *decoder) u32s(s *[]uint32, what, item string) error {
	return vec(d, s, what, 1, func(d *decoder) (uint32, error) { return d.u32(item) })
}

// u32Section reads a section that holds one u32 (start, data count) into
// *v and records in *has that the module has the section.
func (d *decoder) u32Section(v *uint32, has *bool, what string) (err error) {
	*v, err = d.u32(what)
	*has = true
	return err
}

func (d *decoder) refType() (ValType, error) {
	at := d.pos
	t, err := d.valType()
	if err != nil {
		return t, err
	}
	switch t.Code {
	case FuncRef, ExternRef, ExnRef, Ref, RefNull:
		return t, nil
	}
	return t, d.errf(at, "malformed reference type %s", t)
}

// constExpr reads a constant expression up to and including its end.
func (d *decoder) constExpr(what string) ([]byte, error) {
	start := d.pos
	var in Instr
	depth := 0
	for {
		if d.pos >= len(d.buf) {
			return nil, d.errf(d.pos, "%s: unexpected end of constant expression", what)
		}
		if err := d.Next(&in); err != nil {
			return nil, err
		}
		switch in.Op {
		case OpBlock, OpLoop, OpIf, OpTry, OpTryTable:
			depth++
		case OpEnd:
			if depth == 0 {
				return d.buf[start:d.pos], nil
			}
			depth--
		}
	}
}

// Decode decodes a binary module. The module keeps references into b.
func Decode(b []byte) (*Module, error) { return decode(b, true) }

// DecodeChecked is Decode for bytes that Decode has accepted before: the
// bodies are framed and their locals read, but their instructions are not
// checked again, which is most of what decoding a big module costs.
func DecodeChecked(b []byte) (*Module, error) { return decode(b, false) }

func decode(b []byte, checkBodies bool) (*Module, error) {
	if len(b) < 4 || !bytes.Equal(b[:4], []byte{0, 'a', 's', 'm'}) {
		return nil, &DecodeError{Section: "header", Offset: 0, Msg: "magic header not detected"}
	}
	if len(b) < 8 {
		return nil, &DecodeError{Section: "header", Offset: 4, Msg: "unexpected end: missing version"}
	}
	m := &Module{Version: uint32(b[4]) | uint32(b[5])<<8 | uint32(b[6])<<16 | uint32(b[7])<<24, bodiesChecked: !checkBodies}
	if m.Version == componentVersion {
		return nil, &DecodeError{Section: "header", Offset: 4, Msg: componentMsg()}
	}
	if m.Version != 1 {
		return nil, &DecodeError{Section: "header", Offset: 4, Msg: fmt.Sprintf("unknown binary version %d", m.Version)}
	}
	pos := 8
	lastRank := 0
	for pos < len(b) {
		start := pos
		id := b[pos]
		pos++
		size, n, err := readU(b[pos:], 32)
		if err != nil {
			return nil, &DecodeError{Section: SectionName(id), Offset: pos, Msg: fmt.Sprintf("section size: %v", err)}
		}
		pos += n
		if size > uint64(len(b)-pos) {
			return nil, &DecodeError{Section: SectionName(id), Offset: pos, Msg: fmt.Sprintf("section size %d: length out of bounds (%d bytes left)", size, len(b)-pos)}
		}
		payload := b[pos : pos+int(size)]
		s := &Section{ID: id, Off: start, Payload: payload, raw: b[start : pos+int(size)]}
		d := newDecoder(payload, pos, SectionName(id))
		pos += int(size)
		if id > SecTag {
			return nil, &DecodeError{Section: "module", Offset: start, Msg: fmt.Sprintf("malformed section id %d", id)}
		}
		if id != SecCustom {
			r := sectionRank(id)
			if r <= lastRank {
				return nil, &DecodeError{Section: SectionName(id), Offset: start, Msg: "unexpected section: out of order or duplicate"}
			}
			lastRank = r
		}
		m.Sections = append(m.Sections, s)
		if id == SecCustom {
			err = m.decodeCustom(s, d)
		} else {
			err = sectionKinds[id].decode(m, d)
		}
		if err != nil {
			return nil, err
		}
		if d.pos != len(d.buf) {
			return nil, d.errf(d.pos, "section size mismatch: %d bytes left over", len(d.buf)-d.pos)
		}
	}
	if len(m.Funcs) > 0 && m.section(SecCode) == nil {
		return nil, &DecodeError{Section: "module", Offset: len(b), Msg: fmt.Sprintf("function and code section have inconsistent lengths (%d functions, no code section)", len(m.Funcs))}
	}
	if m.HasDataCount && int(m.DataCount) != len(m.Data) {
		return nil, &DecodeError{Section: "data", Offset: len(b), Msg: fmt.Sprintf("data count and data section have inconsistent lengths (%d, %d)", m.DataCount, len(m.Data))}
	}
	return m, nil
}
