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
	return vec(d, &m.Globals, "global", 3, (*decoder).global)
}

func (m *Module) encodeGlobals() []byte { return appendVec(nil, m.Globals, appendGlobal) }

func (d *decoder) global() (g Global, err error) {
	if g.GlobalType, err = d.globalType(); err != nil {
		return g, err
	}
	g.Init, err = d.constExpr("global initializer")
	return g, err
}

func appendGlobal(b []byte, g Global) []byte {
	b = appendGlobalType(b, g.GlobalType)
	return append(b, g.Init...)
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
