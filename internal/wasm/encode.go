package wasm

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

func (m *Module) encodeSection(s *Section) ([]byte, error) {
	var b []byte
	switch s.ID {
	case SecCustom:
		b = appendName(b, s.Name)
		if s.Name == "name" && m.Names != nil && s == m.customSection("name") {
			return append(b, m.Names.encode()...), nil
		}
		return append(b, s.Payload...), nil
	case SecType:
		entries := 0
		for _, t := range m.Types {
			if !t.InRec || t.RecGroup > 0 {
				entries++
			}
		}
		b = appendU(b, uint64(entries))
		for _, t := range m.Types {
			if t.RecGroup > 0 {
				b = append(b, 0x4E)
				b = appendU(b, uint64(t.RecGroup))
			}
			b = append(b, 0x60)
			b = appendU(b, uint64(len(t.Params)))
			for _, p := range t.Params {
				b = appendValType(b, p)
			}
			b = appendU(b, uint64(len(t.Results)))
			for _, r := range t.Results {
				b = appendValType(b, r)
			}
		}
	case SecImport:
		b = appendU(b, uint64(len(m.Imports)))
		for _, im := range m.Imports {
			b = appendName(b, im.Module)
			b = appendName(b, im.Name)
			b = append(b, im.Kind)
			switch im.Kind {
			case KindFunc:
				b = appendU(b, uint64(im.Type))
			case KindTable:
				b = appendTableType(b, im.Table)
			case KindMemory:
				b = appendLimits(b, im.Memory)
			case KindGlobal:
				b = appendGlobalType(b, im.Global)
			case KindTag:
				b = append(b, im.TagAttr)
				b = appendU(b, uint64(im.Type))
			}
		}
	case SecFunction:
		b = appendU(b, uint64(len(m.Funcs)))
		for _, f := range m.Funcs {
			b = appendU(b, uint64(f))
		}
	case SecTable:
		b = appendU(b, uint64(len(m.Tables)))
		for _, t := range m.Tables {
			if t.Init != nil {
				b = append(b, 0x40, 0x00)
			}
			b = appendTableType(b, t)
			b = append(b, t.Init...)
		}
	case SecMemory:
		b = appendU(b, uint64(len(m.Memories)))
		for _, l := range m.Memories {
			b = appendLimits(b, l)
		}
	case SecTag:
		b = appendU(b, uint64(len(m.Tags)))
		for _, t := range m.Tags {
			b = append(b, t.Attr)
			b = appendU(b, uint64(t.Type))
		}
	case SecGlobal:
		b = appendU(b, uint64(len(m.Globals)))
		for _, g := range m.Globals {
			b = appendGlobalType(b, g.GlobalType)
			b = append(b, g.Init...)
		}
	case SecExport:
		b = appendU(b, uint64(len(m.Exports)))
		for _, e := range m.Exports {
			b = appendName(b, e.Name)
			b = append(b, e.Kind)
			b = appendU(b, uint64(e.Index))
		}
	case SecStart:
		b = appendU(b, uint64(m.Start))
	case SecElement:
		b = appendU(b, uint64(len(m.Elements)))
		for _, e := range m.Elements {
			b = appendU(b, uint64(e.Flags))
			active := e.Flags&1 == 0
			if active && e.Flags&2 != 0 {
				b = appendU(b, uint64(e.Table))
			}
			if active {
				b = append(b, e.Offset...)
			}
			if e.Flags != 0 && e.Flags != 4 {
				if e.Flags&4 != 0 {
					b = appendValType(b, e.RefType)
				} else {
					b = append(b, e.Kind)
				}
			}
			if e.Flags&4 != 0 {
				b = appendU(b, uint64(len(e.Exprs)))
				for _, x := range e.Exprs {
					b = append(b, x...)
				}
			} else {
				b = appendU(b, uint64(len(e.Funcs)))
				for _, f := range e.Funcs {
					b = appendU(b, uint64(f))
				}
			}
		}
	case SecDataCount:
		b = appendU(b, uint64(m.DataCount))
	case SecCode:
		size := 5
		for i := range m.Code {
			size += len(m.Code[i].Body) + 5
		}
		b = make([]byte, 0, size)
		b = appendU(b, uint64(len(m.Code)))
		for i := range m.Code {
			body := m.Code[i].encodeBody()
			b = appendU(b, uint64(len(body)))
			b = append(b, body...)
		}
	case SecData:
		b = appendU(b, uint64(len(m.Data)))
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
	default:
		return nil, fmt.Errorf("cannot encode section id %d", s.ID)
	}
	return b, nil
}

// encodeBody returns the body bytes; in canonical mode the locals and
// every instruction are encoded afresh.
func (c *Code) encodeBody() []byte {
	if !c.reencode {
		return c.Body
	}
	b := appendLocals(nil, c.Locals)
	r := NewReader(c.Body, 0, "code")
	r.pos = int(c.ExprOff)
	var in Instr
	for !r.Done() {
		if err := r.Next(&in); err != nil {
			// The body was checked at decode time.
			panic(err)
		}
		b = AppendInstr(b, &in)
	}
	return b
}

func appendLocals(b []byte, ls []LocalDecl) []byte {
	b = appendU(b, uint64(len(ls)))
	for _, l := range ls {
		b = appendU(b, uint64(l.Count))
		b = appendValType(b, l.Type)
	}
	return b
}

func appendLimits(b []byte, l Limits) []byte {
	b = append(b, l.Flags)
	b = appendU(b, l.Min)
	if l.HasMax() {
		b = appendU(b, l.Max)
	}
	return b
}

func appendTableType(b []byte, t Table) []byte {
	b = appendValType(b, t.Type)
	return appendLimits(b, t.Limits)
}

func appendGlobalType(b []byte, g GlobalType) []byte {
	b = appendValType(b, g.Type)
	if g.Mutable {
		return append(b, 1)
	}
	return append(b, 0)
}

func (m *Module) codeEdited() bool {
	for i := range m.Code {
		if m.Code[i].Map != nil {
			return true
		}
	}
	return false
}
