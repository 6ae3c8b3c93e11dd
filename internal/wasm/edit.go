package wasm

// This file edits a module: marking sections edited, adding types and
// function imports, and renumbering references to functions.

import "fmt"

// Touch marks a section as edited so that Encode encodes it afresh,
// adding an empty section in its place if the module lacks it.
func (m *Module) Touch(id byte) *Section {
	if s := m.section(id); s != nil {
		s.dirty = true
		return s
	}
	s := &Section{ID: id, Off: -1, dirty: true}
	at := len(m.Sections)
	for i, o := range m.Sections {
		if o.ID != SecCustom && sectionRank(o.ID) > sectionRank(id) {
			at = i
			break
		}
	}
	m.Sections = append(m.Sections, nil)
	copy(m.Sections[at+1:], m.Sections[at:])
	m.Sections[at] = s
	return s
}

// touchNames marks the name section edited, if there is a readable one.
func (m *Module) touchNames() {
	if m.Names == nil {
		return
	}
	if s := m.customSection("name"); s != nil {
		s.dirty = true
	}
}

// AddType returns the index of a function type equal to t, adding it if
// the module has none.
func (m *Module) AddType(t FuncType) uint32 {
	if i, ok := m.TypeIndex(t); ok {
		return i
	}
	t.InRec, t.RecGroup = false, 0
	m.Types = append(m.Types, t)
	m.Touch(SecType)
	return uint32(len(m.Types) - 1)
}

// TypeIndex returns the index of a type equal to t outside any
// recursion group, which AddType would return without adding one. It only
// reads the module, so goroutines may call it together.
func (m *Module) TypeIndex(t FuncType) (uint32, bool) {
	for i, u := range m.Types {
		if !u.InRec && u.Equal(t) {
			return uint32(i), true
		}
	}
	return 0, false
}

// AddFuncImport adds a function import and returns its function index. The
// new function takes the index after the existing imported functions, so
// every defined function's index grows by one: calls, ref.func, element
// segments, exports, the start function and the name section are all
// remapped, and the function bodies that change get offset maps.
func (m *Module) AddFuncImport(module, name string, typeIdx uint32) (uint32, error) {
	return m.AddFuncImports(Import{Module: module, Name: name, Kind: KindFunc, Type: typeIdx})
}

// AddFuncImports adds several function imports at once (one renumbering
// pass instead of one per import) and returns the index of the first.
func (m *Module) AddFuncImports(imps ...Import) (uint32, error) {
	for _, im := range imps {
		if im.Kind != KindFunc {
			return 0, fmt.Errorf("add import %s.%s: not a function import", im.Module, im.Name)
		}
		if int(im.Type) >= len(m.Types) {
			return 0, fmt.Errorf("add import %s.%s: type index %d out of range", im.Module, im.Name, im.Type)
		}
	}
	newIdx := m.NumImportedFuncs
	n := uint32(len(imps))
	remap := func(f uint32) uint32 {
		if f >= newIdx {
			return f + n
		}
		return f
	}
	if err := m.RemapFuncs(remap); err != nil {
		return 0, err
	}
	// Keep imports of one kind in order: insert after the last function import.
	at := 0
	for i := len(m.Imports) - 1; i >= 0; i-- {
		if m.Imports[i].Kind == KindFunc {
			at = i + 1
			break
		}
	}
	m.Imports = append(m.Imports[:at], append(append([]Import(nil), imps...), m.Imports[at:]...)...)
	m.NumImportedFuncs += n
	m.Touch(SecImport)
	return newIdx, nil
}

// RemapFuncs renumbers every reference to a function index through f.
func (m *Module) RemapFuncs(f func(uint32) uint32) error {
	for i := range m.Exports {
		if m.Exports[i].Kind == KindFunc {
			m.Exports[i].Index = f(m.Exports[i].Index)
		}
	}
	if m.exportNames != nil {
		names := make(map[uint32]string, len(m.exportNames))
		for idx, n := range m.exportNames {
			names[f(idx)] = n
		}
		m.exportNames = names
	}
	m.Touch(SecExport)
	if m.HasStart {
		m.Start = f(m.Start)
		m.Touch(SecStart)
	}
	var err error
	for i := range m.Elements {
		e := &m.Elements[i]
		for j := range e.Funcs {
			e.Funcs[j] = f(e.Funcs[j])
		}
		for j := range e.Exprs {
			if e.Exprs[j], err = remapExpr(e.Exprs[j], f); err != nil {
				return err
			}
		}
	}
	if len(m.Elements) > 0 {
		m.Touch(SecElement)
	}
	for i := range m.Globals {
		if m.Globals[i].Init, err = remapExpr(m.Globals[i].Init, f); err != nil {
			return err
		}
	}
	if len(m.Globals) > 0 {
		m.Touch(SecGlobal)
	}
	for i := range m.Tables {
		if m.Tables[i].Init != nil {
			if m.Tables[i].Init, err = remapExpr(m.Tables[i].Init, f); err != nil {
				return err
			}
			m.Touch(SecTable)
		}
	}
	r := NewReader(nil, 0, "code")
	var edits []Edit
	for i := range m.Code {
		c := &m.Code[i]
		edits, err = funcRefEdits(r, c, f, edits[:0])
		if err != nil {
			return err
		}
		if len(edits) > 0 {
			if err := c.Splice(edits); err != nil {
				return err
			}
		}
	}
	if len(m.Code) > 0 {
		m.Touch(SecCode)
	}
	if m.Names != nil {
		funcs := make(map[uint32]string, len(m.Names.Funcs))
		for k, v := range m.Names.Funcs {
			funcs[f(k)] = v
		}
		m.Names.Funcs = funcs
		locals := make(map[uint32]map[uint32]string, len(m.Names.Locals))
		for k, v := range m.Names.Locals {
			locals[f(k)] = v
		}
		m.Names.Locals = locals
		for i, s := range m.Names.Other {
			if s.ID == 3 { // label names: an indirect map keyed by function
				if p, err := remapIndirect(s.Payload, f); err == nil {
					m.Names.Other[i].Payload = p
				}
			}
		}
		m.touchNames()
	}
	return nil
}

// funcRefEdits lists the rewrites of call, return_call and ref.func
// immediates of a body. A new index is written padded to the old width
// when it fits, so that the body's offsets do not move.
func funcRefEdits(r *Reader, c *Code, f func(uint32) uint32, edits []Edit) ([]Edit, error) {
	r.Reset(c.Body, c.OrigOff)
	r.pos = int(c.ExprOff)
	var in Instr
	for !r.Done() {
		if err := r.Next(&in); err != nil {
			return nil, err
		}
		switch in.Op {
		case OpCall, OpReturnCall, OpRefFunc:
			nf := f(in.A)
			if nf == in.A {
				continue
			}
			immOff := in.Off + 1
			width := in.Len - 1
			var ins []byte
			if sizeU(uint64(nf)) <= int(width) {
				ins = appendUPadded(nil, uint64(nf), int(width))
			} else {
				ins = appendU(nil, uint64(nf))
			}
			edits = append(edits, Edit{Off: immOff, Del: width, Ins: ins})
		}
	}
	return edits, nil
}

// remapExpr rewrites ref.func in a constant expression.
func remapExpr(expr []byte, f func(uint32) uint32) ([]byte, error) {
	r := NewReader(expr, 0, "constant expression")
	var in Instr
	var out []byte
	changed := false
	for !r.Done() {
		if err := r.Next(&in); err != nil {
			return nil, err
		}
		if in.Op == OpRefFunc && f(in.A) != in.A {
			changed = true
			in.A = f(in.A)
		}
		out = AppendInstr(out, &in)
	}
	if !changed {
		return expr, nil
	}
	return out, nil
}

func remapIndirect(p []byte, f func(uint32) uint32) ([]byte, error) {
	d := newDecoder(p, 0, "name")
	cnt, err := d.count("indirect name map", 2)
	if err != nil {
		return nil, err
	}
	out := appendU(nil, uint64(cnt))
	for i := uint32(0); i < cnt; i++ {
		k, err := d.u32("function index")
		if err != nil {
			return nil, err
		}
		start := d.pos
		if _, err := d.nameMap(); err != nil {
			return nil, err
		}
		out = appendU(out, uint64(f(k)))
		out = append(out, p[start:d.pos]...)
	}
	return out, nil
}
