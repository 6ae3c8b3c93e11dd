package wasm

// This file holds the function section, each defined function's type
// index, and the start section, the function run at instantiation.

func (m *Module) decodeFunctions(d *decoder) (err error) {
	m.Funcs, err = d.u32s("function", "function type index")
	return err
}

func (m *Module) encodeFunctions() []byte { return appendVec(nil, m.Funcs, appendU32) }

func (m *Module) decodeStart(d *decoder) error {
	var err error
	m.Start, err = d.u32("start function")
	m.HasStart = true
	return err
}

func (m *Module) encodeStart() []byte {
	return appendU(nil, uint64(m.Start))
}
