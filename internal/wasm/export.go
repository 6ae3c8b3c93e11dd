package wasm

// This file holds the export section.

// Export is one export.
type Export struct {
	Name  string
	Kind  byte
	Index uint32
}

func (m *Module) decodeExports(d *decoder) (err error) {
	seen := map[string]bool{}
	m.Exports, err = vec(d, "export", 3, func(d *decoder) (Export, error) {
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
		kat := d.pos
		if e.Kind, err = d.byte1("export kind"); err != nil {
			return e, err
		}
		if e.Kind > KindTag {
			return e, d.errf(kat, "malformed export kind 0x%02x", e.Kind)
		}
		e.Index, err = d.u32("export index")
		return e, err
	})
	return err
}

func (m *Module) encodeExports() []byte {
	return appendVec(nil, m.Exports, func(b []byte, e Export) []byte {
		b = appendName(b, e.Name)
		b = append(b, e.Kind)
		return appendU32(b, e.Index)
	})
}
