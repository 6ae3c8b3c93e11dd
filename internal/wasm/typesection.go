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
			var group []FuncType
			if err := vec(d, &group, "recursive type group", 3, (*decoder).funcType); err != nil {
				return err
			}
			for j := range group {
				group[j].InRec = true
			}
			if len(group) > 0 {
				group[0].RecGroup = uint32(len(group))
			}
			m.Types = append(m.Types, group...)
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
	if what, gc := gcTypeForms[form]; gc {
		return ft, d.errf(at, "type form 0x%02x (%s) is of %s", form, what, gcAdvice)
	}
	if form != 0x60 {
		return ft, d.errf(at, "unsupported type form 0x%02x (only function types are known)", form)
	}
	// Parameters and results are both counted as "type parameter" in errors.
	if err := vec(d, &ft.Params, "type parameter", 1, (*decoder).valType); err != nil {
		return ft, err
	}
	return ft, vec(d, &ft.Results, "type parameter", 1, (*decoder).valType)
}

func appendFuncType(b []byte, t FuncType) []byte {
	b = append(b, 0x60)
	b = appendVec(b, t.Params, appendValType)
	return appendVec(b, t.Results, appendValType)
}
