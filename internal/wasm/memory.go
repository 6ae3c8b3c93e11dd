package wasm

// This file holds the memory section and limits, the type of memories and
// tables.

func (m *Module) decodeMemories(d *decoder) error {
	cnt, err := d.count("memory", 2)
	if err != nil {
		return err
	}
	for range cnt {
		l, err := d.limits("memory")
		if err != nil {
			return err
		}
		m.Memories = append(m.Memories, l)
	}
	return nil
}

func (m *Module) encodeMemories() []byte {
	b := appendU(nil, uint64(len(m.Memories)))
	for _, l := range m.Memories {
		b = appendLimits(b, l)
	}
	return b
}

func (d *decoder) limits(what string) (Limits, error) {
	at := d.pos
	f, err := d.byte1(what + " limits flags")
	if err != nil {
		return Limits{}, err
	}
	if f > 7 {
		return Limits{}, d.errf(at, "%s: malformed limits flags 0x%02x", what, f)
	}
	l := Limits{Flags: f}
	bits := uint(32)
	if f&4 != 0 {
		bits = 64
	}
	v, n, err := readU(d.buf[d.pos:], bits)
	if err != nil {
		return l, d.errf(d.pos, "%s limits minimum: %v", what, err)
	}
	d.pos += n
	l.Min = v
	if f&1 != 0 {
		v, n, err := readU(d.buf[d.pos:], bits)
		if err != nil {
			return l, d.errf(d.pos, "%s limits maximum: %v", what, err)
		}
		d.pos += n
		l.Max = v
	}
	return l, nil
}

func appendLimits(b []byte, l Limits) []byte {
	b = append(b, l.Flags)
	b = appendU(b, l.Min)
	if l.HasMax() {
		b = appendU(b, l.Max)
	}
	return b
}
