package wasm

// This file holds Encode, which copies unedited sections and encodes edited
// ones, and the dispatch to each section's encoder.

import "fmt"

// Encode writes the module. Sections that were not edited are copied from
// the original bytes; edited ones are encoded from the decoded form.
func (m *Module) Encode() ([]byte, error) {
	// Encode edited sections first so that the output is allocated once:
	// growing a buffer of tens of megabytes copies it many times.
	payloads := make([][]byte, len(m.Sections))
	size := 8
	for i, s := range m.Sections {
		if !s.dirty && s.raw != nil && !(s.ID == SecCode && m.codeEdited()) {
			size += len(s.raw)
			continue
		}
		p, err := m.encodeSection(s)
		if err != nil {
			return nil, err
		}
		payloads[i] = p
		size += 1 + sizeU(uint64(len(p))) + len(p)
	}
	out := make([]byte, 0, size)
	out = append(out, 0, 'a', 's', 'm')
	out = append(out, byte(m.Version), byte(m.Version>>8), byte(m.Version>>16), byte(m.Version>>24))
	for i, s := range m.Sections {
		if payloads[i] == nil {
			out = append(out, s.raw...)
			continue
		}
		out = append(out, s.ID)
		out = appendU(out, uint64(len(payloads[i])))
		out = append(out, payloads[i]...)
	}
	return out, nil
}

// EncodeCanonical encodes every section afresh from the decoded form, with
// the shortest LEB128 encodings; it exercises the encoders on modules whose
// bytes Encode would only copy.
func (m *Module) EncodeCanonical() ([]byte, error) {
	for _, s := range m.Sections {
		s.dirty = true
	}
	for i := range m.Code {
		m.Code[i].reencode = true
	}
	defer func() {
		for i := range m.Code {
			m.Code[i].reencode = false
		}
	}()
	return m.Encode()
}

// appendVec appends a vector: its length, then each item with item.
// Sections and the vectors inside them are written this way, so that each
// writes only its item's encoder.
func appendVec[T any](b []byte, s []T, item func([]byte, T) []byte) []byte {
	b = appendU(b, uint64(len(s)))
	for _, x := range s {
		b = item(b, x)
	}
	return b
}

func (m *Module) encodeSection(s *Section) ([]byte, error) {
	if s.ID == SecCustom {
		return m.encodeCustom(s), nil
	}
	if int(s.ID) < len(sectionKinds) && sectionKinds[s.ID].encode != nil {
		return sectionKinds[s.ID].encode(m), nil
	}
	return nil, fmt.Errorf("cannot encode section id %d", s.ID)
}
