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
	return vec(d, &m.Elements, "element segment", 2, (*decoder).element)
}

func (m *Module) encodeElements() []byte { return appendVec(nil, m.Elements, appendElement) }

func (d *decoder) element() (e Element, err error) {
	if e.Flags, err = d.segmentFlags("element segment", 7); err != nil {
		return e, err
	}
	active := e.Flags&1 == 0
	explicitTable := e.Flags&2 != 0
	exprs := e.Flags&4 != 0
	if active && explicitTable {
		if e.Table, err = d.u32("element table index"); err != nil {
			return e, err
		}
	}
	if active {
		if e.Offset, err = d.constExpr("element offset"); err != nil {
			return e, err
		}
	}
	if e.Flags != 0 && e.Flags != 4 {
		if exprs {
			if e.RefType, err = d.refType(); err != nil {
				return e, err
			}
		} else {
			if e.Kind, err = d.kind("element kind", 0); err != nil {
				return e, err
			}
		}
	}
	if exprs {
		err = vec(d, &e.Exprs, "element expression", 2, func(d *decoder) ([]byte, error) {
			return d.constExpr("element expression")
		})
	} else {
		err = d.u32s(&e.Funcs, "element function", "element function index")
	}
	return e, err
}

func appendElement(b []byte, e Element) []byte {
	b = appendU32(b, e.Flags)
	active := e.Flags&1 == 0
	if active && e.Flags&2 != 0 {
		b = appendU32(b, e.Table)
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
		return appendVec(b, e.Exprs, func(b, x []byte) []byte { return append(b, x...) })
	}
	return appendVec(b, e.Funcs, appendU32)
}
