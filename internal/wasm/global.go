package wasm

// This file holds the global section and global types.

// GlobalType is a global's value type and mutability.
type GlobalType struct {
	Type    ValType
	Mutable bool
}

// Global is a defined global.
type Global struct {
	GlobalType
	Init []byte // constant expression, with its end
}

func (m *Module) decodeGlobals(d *decoder) error {
	cnt, err := d.count("global", 3)
	if err != nil {
		return err
	}
	for range cnt {
		var g Global
		if g.GlobalType, err = d.globalType(); err != nil {
			return err
		}
		if g.Init, err = d.constExpr("global initializer"); err != nil {
			return err
		}
		m.Globals = append(m.Globals, g)
	}
	return nil
}

func (m *Module) encodeGlobals() []byte {
	b := appendU(nil, uint64(len(m.Globals)))
	for _, g := range m.Globals {
		b = appendGlobalType(b, g.GlobalType)
		b = append(b, g.Init...)
	}
	return b
}

func (d *decoder) globalType() (GlobalType, error) {
	t, err := d.valType()
	if err != nil {
		return GlobalType{}, err
	}
	at := d.pos
	m, err := d.byte1("global mutability")
	if err != nil {
		return GlobalType{}, err
	}
	if m > 1 {
		return GlobalType{}, d.errf(at, "malformed mutability 0x%02x", m)
	}
	return GlobalType{Type: t, Mutable: m == 1}, nil
}

func appendGlobalType(b []byte, g GlobalType) []byte {
	b = appendValType(b, g.Type)
	if g.Mutable {
		return append(b, 1)
	}
	return append(b, 0)
}
