package wasm

// This file holds the custom sections' codec: a name, then bytes kept as
// they are, but for the name section (names.go).

// decodeCustom reads a custom section's name and takes the rest as its
// payload; the "name" section is also decoded into m.Names.
func (m *Module) decodeCustom(s *Section, d *decoder) error {
	nm, err := d.name("custom section name")
	if err != nil {
		return err
	}
	s.Name = nm
	s.Payload = d.buf[d.pos:]
	if nm == "name" {
		// A broken name section is kept as raw bytes: engines ignore
		// custom sections they cannot read, and so does the codec.
		if names, err := decodeNames(s.Payload, d.base+d.pos); err == nil {
			m.Names = names
		}
	}
	d.pos = len(d.buf)
	return nil
}

// encodeCustom writes a custom section's name and payload, the decoded
// names for the module's name section.
func (m *Module) encodeCustom(s *Section) []byte {
	b := appendName(nil, s.Name)
	if s.Name == "name" && m.Names != nil && s == m.customSection("name") {
		return append(b, m.Names.encode()...)
	}
	return append(b, s.Payload...)
}
