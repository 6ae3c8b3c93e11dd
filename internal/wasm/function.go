package wasm

// This file holds the function section, each defined function's type
// index, and the start section, the function run at instantiation.

func (m *Module) decodeFunctions(d *decoder) error {
	return d.u32s(&m.Funcs, "function", "function type index")
}

func (m *Module) encodeFunctions() []byte { return appendVec(nil, m.Funcs, appendU32) }

func (m *Module) decodeStart(d *decoder) error {
	return d.u32Section(&m.Start, &m.HasStart, "start function")
}

func (m *Module) encodeStart() []byte { return appendU32(nil, m.Start) }
