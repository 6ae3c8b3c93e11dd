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
	return vec(d, &m.Data, "data segment", 2, (*decoder).dataSegment)
}

func (m *Module) encodeData() []byte { return appendVec(nil, m.Data, appendDataSegment) }

func (d *decoder) dataSegment() (s Data, err error) {
	if s.Flags, err = d.segmentFlags("data segment", 2); err != nil {
		return s, err
	}
	if s.Flags == 2 {
		if s.Memory, err = d.u32("data memory index"); err != nil {
			return s, err
		}
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
	return d.u32Section(&m.DataCount, &m.HasDataCount, "data count")
}

func (m *Module) encodeDataCount() []byte { return appendU32(nil, m.DataCount) }
