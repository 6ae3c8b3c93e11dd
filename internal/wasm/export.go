package wasm

// This file holds the export section.

// Export is one export.
type Export struct {
	Name  string
	Kind  byte
	Index uint32
}

func (m *Module) decodeExports(d *decoder) error {
	cnt, err := d.count("export", 3)
	if err != nil {
		return err
	}
	m.Exports = make([]Export, 0, cnt)
	seen := make(map[string]bool, cnt)
	for i := uint32(0); i < cnt; i++ {
		var e Export
		at := d.pos
		if e.Name, err = d.name("export name"); err != nil {
			return err
		}
		if seen[e.Name] {
			return d.errf(at, "duplicate export name %q", e.Name)
		}
		seen[e.Name] = true
		kat := d.pos
		if e.Kind, err = d.byte1("export kind"); err != nil {
			return err
		}
		if e.Kind > KindTag {
			return d.errf(kat, "malformed export kind 0x%02x", e.Kind)
		}
		if e.Index, err = d.u32("export index"); err != nil {
			return err
		}
		m.Exports = append(m.Exports, e)
	}
	return nil
}

func (m *Module) encodeExports() []byte {
	b := appendU(nil, uint64(len(m.Exports)))
	for _, e := range m.Exports {
		b = appendName(b, e.Name)
		b = append(b, e.Kind)
		b = appendU(b, uint64(e.Index))
	}
	return b
}
