package wasm

// This file holds the function section, each defined function's type
// index, and the start section, the function run at instantiation.

func (m *Module) decodeFunctions(d *decoder) error {
	cnt, err := d.count("function", 1)
	if err != nil {
		return err
	}
	m.Funcs = make([]uint32, cnt)
	for i := range m.Funcs {
		if m.Funcs[i], err = d.u32("function type index"); err != nil {
			return err
		}
	}
	return nil
}

func (m *Module) encodeFunctions() []byte {
	b := appendU(nil, uint64(len(m.Funcs)))
	for _, f := range m.Funcs {
		b = appendU(b, uint64(f))
	}
	return b
}

func (m *Module) decodeStart(d *decoder) error {
	var err error
	m.Start, err = d.u32("start function")
	m.HasStart = true
	return err
}

func (m *Module) encodeStart() []byte {
	return appendU(nil, uint64(m.Start))
}
