package wasm

// This file holds the export section.

// Export is one export.
type Export struct {
	Name  string
	Kind  byte
	Index uint32
}

func (m *Module) decodeExports(d *decoder) error {
	seen := map[string]bool{}
	return vec(d, &m.Exports, "export", 3, func(d *decoder) (Export, error) {
		var e Export
		var err error
		at := d.pos
		if e.Name, err = d.name("export name"); err != nil {
			return e, err
		}
		if seen[e.Name] {
			return e, d.errf(at, "duplicate export name %q", e.Name)
		}
		seen[e.Name] = true
		if e.Kind, err = d.kind("export kind", KindTag); err != nil {
			return e, err
		}
		e.Index, err = d.u32("export index")
		if e.Kind == KindFunc && err == nil {
			if m.exportNames == nil {
				m.exportNames = map[uint32]string{}
			}
			if _, named := m.exportNames[e.Index]; !named {
				m.exportNames[e.Index] = e.Name
			}
		}
		return e, err
	})
}

func (m *Module) encodeExports() []byte {
	return appendVec(nil, m.Exports, func(b []byte, e Export) []byte {
		b = appendName(b, e.Name)
		b = append(b, e.Kind)
		return appendU32(b, e.Index)
	})
}
