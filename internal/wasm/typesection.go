package wasm

// This file holds the type section: function types, some in recursive
// groups.

func (m *Module) decodeTypes(d *decoder) error {
	cnt, err := d.count("type", 3)
	if err != nil {
		return err
	}
	m.Types = make([]FuncType, 0, cnt)
	for i := uint32(0); i < cnt; i++ {
		if d.pos < len(d.buf) && d.buf[d.pos] == 0x4E {
			d.pos++
			n, err := d.count("recursive type group", 3)
			if err != nil {
				return err
			}
			for j := uint32(0); j < n; j++ {
				ft, err := d.funcType()
				if err != nil {
					return err
				}
				ft.InRec = true
				if j == 0 {
					ft.RecGroup = n
				}
				m.Types = append(m.Types, ft)
			}
			continue
		}
		ft, err := d.funcType()
		if err != nil {
			return err
		}
		m.Types = append(m.Types, ft)
	}
	return nil
}

func (m *Module) encodeTypes() []byte {
	entries := 0
	for _, t := range m.Types {
		if !t.InRec || t.RecGroup > 0 {
			entries++
		}
	}
	b := appendU(nil, uint64(entries))
	for _, t := range m.Types {
		if t.RecGroup > 0 {
			b = append(b, 0x4E)
			b = appendU(b, uint64(t.RecGroup))
		}
		b = appendFuncType(b, t)
	}
	return b
}

func (d *decoder) funcType() (FuncType, error) {
	var ft FuncType
	at := d.pos
	form, err := d.byte1("type form")
	if err != nil {
		return ft, err
	}
	if form != 0x60 {
		return ft, d.errf(at, "unsupported type form 0x%02x (only function types are known)", form)
	}
	for k := 0; k < 2; k++ {
		n, err := d.count("type parameter", 1)
		if err != nil {
			return ft, err
		}
		ts := make([]ValType, n)
		for j := range ts {
			if ts[j], err = d.valType(); err != nil {
				return ft, err
			}
		}
		if k == 0 {
			ft.Params = ts
		} else {
			ft.Results = ts
		}
	}
	return ft, nil
}

func appendFuncType(b []byte, t FuncType) []byte {
	b = append(b, 0x60)
	b = appendU(b, uint64(len(t.Params)))
	for _, p := range t.Params {
		b = appendValType(b, p)
	}
	b = appendU(b, uint64(len(t.Results)))
	for _, r := range t.Results {
		b = appendValType(b, r)
	}
	return b
}
