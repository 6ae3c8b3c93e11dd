package wasm

// This file holds the element section: segments of function references
// or reference expressions.

// Element is an element segment.
type Element struct {
	Flags  uint32 // the segment's encoding, 0..7
	Table  uint32
	Offset []byte // constant expression, for active segments
	// Kind is the elemkind byte (flags 1-3) or the reference type (flags 5-7).
	Kind    byte
	RefType ValType
	Funcs   []uint32 // flags 0-3: function indices
	Exprs   [][]byte // flags 4-7: constant expressions
}

func (m *Module) decodeElements(d *decoder) error {
	cnt, err := d.count("element segment", 2)
	if err != nil {
		return err
	}
	m.Elements = make([]Element, 0, cnt)
	for i := uint32(0); i < cnt; i++ {
		var e Element
		at := d.pos
		if e.Flags, err = d.u32("element segment flags"); err != nil {
			return err
		}
		if e.Flags > 7 {
			return d.errf(at, "malformed element segment flags %d", e.Flags)
		}
		active := e.Flags&1 == 0
		explicitTable := e.Flags&2 != 0
		exprs := e.Flags&4 != 0
		if active && explicitTable {
			if e.Table, err = d.u32("element table index"); err != nil {
				return err
			}
		}
		if active {
			if e.Offset, err = d.constExpr("element offset"); err != nil {
				return err
			}
		}
		if e.Flags != 0 && e.Flags != 4 {
			if exprs {
				if e.RefType, err = d.refType(); err != nil {
					return err
				}
			} else {
				kat := d.pos
				if e.Kind, err = d.byte1("element kind"); err != nil {
					return err
				}
				if e.Kind != 0 {
					return d.errf(kat, "malformed element kind 0x%02x", e.Kind)
				}
			}
		}
		if exprs {
			n, err := d.count("element expression", 2)
			if err != nil {
				return err
			}
			e.Exprs = make([][]byte, n)
			for j := range e.Exprs {
				if e.Exprs[j], err = d.constExpr("element expression"); err != nil {
					return err
				}
			}
		} else {
			n, err := d.count("element function", 1)
			if err != nil {
				return err
			}
			e.Funcs = make([]uint32, n)
			for j := range e.Funcs {
				if e.Funcs[j], err = d.u32("element function index"); err != nil {
					return err
				}
			}
		}
		m.Elements = append(m.Elements, e)
	}
	return nil
}

func (m *Module) encodeElements() []byte {
	b := appendU(nil, uint64(len(m.Elements)))
	for _, e := range m.Elements {
		b = appendU(b, uint64(e.Flags))
		active := e.Flags&1 == 0
		if active && e.Flags&2 != 0 {
			b = appendU(b, uint64(e.Table))
		}
		if active {
			b = append(b, e.Offset...)
		}
		if e.Flags != 0 && e.Flags != 4 {
			if e.Flags&4 != 0 {
				b = appendValType(b, e.RefType)
			} else {
				b = append(b, e.Kind)
			}
		}
		if e.Flags&4 != 0 {
			b = appendU(b, uint64(len(e.Exprs)))
			for _, x := range e.Exprs {
				b = append(b, x...)
			}
		} else {
			b = appendU(b, uint64(len(e.Funcs)))
			for _, f := range e.Funcs {
				b = appendU(b, uint64(f))
			}
		}
	}
	return b
}
