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

func (m *Module) decodeData(d *decoder) (err error) {
	m.Data, err = vec(d, "data segment", 2, (*decoder).dataSegment)
	return err
}

func (m *Module) encodeData() []byte { return appendVec(nil, m.Data, appendDataSegment) }

func (d *decoder) dataSegment() (Data, error) {
	var s Data
	var err error
	at := d.pos
	if s.Flags, err = d.u32("data segment flags"); err != nil {
		return s, err
	}
	switch s.Flags {
	case 0:
	case 1:
	case 2:
		if s.Memory, err = d.u32("data memory index"); err != nil {
			return s, err
		}
	default:
		return s, d.errf(at, "malformed data segment flags %d", s.Flags)
	}
	if s.Flags != 1 {
		if s.Offset, err = d.constExpr("data offset"); err != nil {
			return s, err
		}
	}
	n, err := d.u32("data segment length")
	if err != nil {
		return s, err
	}
	s.Init, err = d.bytes(n, "data segment")
	return s, err
}

func appendDataSegment(b []byte, s Data) []byte {
	b = appendU32(b, s.Flags)
	if s.Flags == 2 {
		b = appendU32(b, s.Memory)
	}
	if s.Flags != 1 {
		b = append(b, s.Offset...)
	}
	b = appendU(b, uint64(len(s.Init)))
	return append(b, s.Init...)
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
