package wasm

// This file holds the memory section and limits, the type of memories and
// tables.

func (m *Module) decodeMemories(d *decoder) error {
	return vec(d, &m.Memories, "memory", 2, func(d *decoder) (Limits, error) { return d.limits("memory") })
}

func (m *Module) encodeMemories() []byte { return appendVec(nil, m.Memories, appendLimits) }

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
	if l.Min, err = d.uN(what+" limits minimum", bits); err != nil {
		return l, err
	}
	if f&1 != 0 {
		if l.Max, err = d.uN(what+" limits maximum", bits); err != nil {
			return l, err
		}
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
