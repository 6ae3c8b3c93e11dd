package wasm

// This file holds the data section, memory's initial contents, and the data
// count section that announces the number of its segments.

// Data is a data segment.
type Data struct {
	Flags  uint32 // 0 active memory 0, 1 passive, 2 active with memory index
	Memory uint32
	Offset []byte
	Init   []byte
}

func (m *Module) decodeData(d *decoder) error {
	cnt, err := d.count("data segment", 2)
	if err != nil {
		return err
	}
	m.Data = make([]Data, 0, cnt)
	for i := uint32(0); i < cnt; i++ {
		var s Data
		at := d.pos
		if s.Flags, err = d.u32("data segment flags"); err != nil {
			return err
		}
		switch s.Flags {
		case 0:
		case 1:
		case 2:
			if s.Memory, err = d.u32("data memory index"); err != nil {
				return err
			}
		default:
			return d.errf(at, "malformed data segment flags %d", s.Flags)
		}
		if s.Flags != 1 {
			if s.Offset, err = d.constExpr("data offset"); err != nil {
				return err
			}
		}
		n, err := d.u32("data segment length")
		if err != nil {
			return err
		}
		if s.Init, err = d.bytes(n, "data segment"); err != nil {
			return err
		}
		m.Data = append(m.Data, s)
	}
	return nil
}

func (m *Module) encodeData() []byte {
	b := appendU(nil, uint64(len(m.Data)))
	for _, s := range m.Data {
		b = appendU(b, uint64(s.Flags))
		if s.Flags == 2 {
			b = appendU(b, uint64(s.Memory))
		}
		if s.Flags != 1 {
			b = append(b, s.Offset...)
		}
		b = appendU(b, uint64(len(s.Init)))
		b = append(b, s.Init...)
	}
	return b
}

func (m *Module) decodeDataCount(d *decoder) error {
	var err error
	m.DataCount, err = d.u32("data count")
	m.HasDataCount = true
	return err
}

func (m *Module) encodeDataCount() []byte {
	return appendU(nil, uint64(m.DataCount))
}
