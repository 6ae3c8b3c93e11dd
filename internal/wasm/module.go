// Package wasm reads, edits and writes WebAssembly binary modules.
//
// Decoding keeps every section's original bytes next to its decoded form, and
// encoding copies a section that was not edited byte for byte, so an
// unmodified module re-encodes to exactly the input, whatever LEB128 padding
// its producer chose (Go and wasm-ld both pad). Edited sections are encoded
// afresh. Function bodies stay as bytes and are decoded on demand with a
// Reader: holding every instruction of a 16 MB module as structs would cost
// many times the module's size.
package wasm

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// Section ids.
const (
	SecCustom    byte = 0
	SecType      byte = 1
	SecImport    byte = 2
	SecFunction  byte = 3
	SecTable     byte = 4
	SecMemory    byte = 5
	SecGlobal    byte = 6
	SecExport    byte = 7
	SecStart     byte = 8
	SecElement   byte = 9
	SecCode      byte = 10
	SecData      byte = 11
	SecDataCount byte = 12
	SecTag       byte = 13
)

var sectionNames = [...]string{"custom", "type", "import", "function", "table", "memory",
	"global", "export", "start", "element", "code", "data", "datacount", "tag"}

// SectionName returns the name of a section id.
func SectionName(id byte) string {
	if int(id) < len(sectionNames) {
		return sectionNames[id]
	}
	return fmt.Sprintf("section %d", id)
}

// sectionRank gives the order known sections must appear in.
func sectionRank(id byte) int {
	switch id {
	case SecType:
		return 1
	case SecImport:
		return 2
	case SecFunction:
		return 3
	case SecTable:
		return 4
	case SecMemory:
		return 5
	case SecTag:
		return 6
	case SecGlobal:
		return 7
	case SecExport:
		return 8
	case SecStart:
		return 9
	case SecElement:
		return 10
	case SecDataCount:
		return 11
	case SecCode:
		return 12
	case SecData:
		return 13
	}
	return 0
}

// External kinds of imports and exports.
const (
	KindFunc   byte = 0
	KindTable  byte = 1
	KindMemory byte = 2
	KindGlobal byte = 3
	KindTag    byte = 4
)

// Section is one section as it appeared in the module (or was added).
type Section struct {
	ID      byte
	Name    string // custom sections only
	Off     int    // offset of the id byte in the original module; -1 if added
	Payload []byte // the payload as read (after the custom section name for custom sections)
	raw     []byte // id, size and payload exactly as read
	dirty   bool
}

// Import is one import.
type Import struct {
	Module, Name string
	Kind         byte
	Type         uint32 // function or tag type index
	Table        Table
	Memory       Limits
	Global       GlobalType
	TagAttr      byte
}

// GlobalType is a global's value type and mutability.
type GlobalType struct {
	Type    ValType
	Mutable bool
}

// Table is a table definition.
type Table struct {
	Type   ValType
	Limits Limits
	Init   []byte // constant expression (with its end) when the table has an initializer
}

// Global is a defined global.
type Global struct {
	GlobalType
	Init []byte // constant expression, with its end
}

// Export is one export.
type Export struct {
	Name  string
	Kind  byte
	Index uint32
}

// Element is an element segment.
type Element struct {
	Flags  uint32 // the segment's encoding, 0..7
	Table  uint32
	Offset []byte // constant expression, for active segments
	// Kind is the elemkind byte (flags 1-3) or the reference type (flags 5-7).
	Kind    byte
	RefType ValType
	Funcs   []uint32 // flags 0-3: function indices
	Exprs   [][]byte // flags 4-7: constant expressions
}

// Data is a data segment.
type Data struct {
	Flags  uint32 // 0 active memory 0, 1 passive, 2 active with memory index
	Memory uint32
	Offset []byte
	Init   []byte
}

// Tag is an exception tag.
type Tag struct {
	Attr byte
	Type uint32
}

// LocalDecl is a run of locals of one type.
type LocalDecl struct {
	Count uint32
	Type  ValType
}

// Code is one function body.
type Code struct {
	// Body holds the locals declarations followed by the instructions.
	Body   []byte
	Locals []LocalDecl
	// ExprOff is the offset in Body of the first instruction.
	ExprOff uint32
	// OrigOff is the absolute offset in the original module of the
	// original body; Map translates offsets of Body back to offsets of
	// that original body (nil while the body is unchanged).
	OrigOff int
	Map     *OffsetMap

	reencode bool // encode afresh (canonical mode)
}

// NumLocals is the number of declared locals (parameters not included).
func (c *Code) NumLocals() uint64 {
	var n uint64
	for _, l := range c.Locals {
		n += uint64(l.Count)
	}
	return n
}

// Module is a decoded module.
type Module struct {
	Version  uint32
	Sections []*Section

	Types        []FuncType
	Imports      []Import
	Funcs        []uint32 // type index of each defined function
	Tables       []Table
	Memories     []Limits
	Tags         []Tag
	Globals      []Global
	Exports      []Export
	Start        uint32
	HasStart     bool
	Elements     []Element
	DataCount    uint32
	HasDataCount bool
	Code         []Code
	Data         []Data
	Names        *Names // nil when the module has no (readable) name section

	NumImportedFuncs, NumImportedTables, NumImportedMemories, NumImportedGlobals, NumImportedTags uint32

	// codeSectionPayload is the absolute offset of the original code section's payload.
	CodePayloadOff int
}

// NumFuncs is the number of functions, imported and defined.
func (m *Module) NumFuncs() uint32 { return m.NumImportedFuncs + uint32(len(m.Funcs)) }

// FuncType returns the signature of function idx (imported or defined).
func (m *Module) FuncType(idx uint32) (FuncType, bool) {
	var t uint32
	if idx < m.NumImportedFuncs {
		n := uint32(0)
		for _, im := range m.Imports {
			if im.Kind != KindFunc {
				continue
			}
			if n == idx {
				t = im.Type
				break
			}
			n++
		}
	} else if int(idx-m.NumImportedFuncs) < len(m.Funcs) {
		t = m.Funcs[idx-m.NumImportedFuncs]
	} else {
		return FuncType{}, false
	}
	if int(t) >= len(m.Types) {
		return FuncType{}, false
	}
	return m.Types[t], true
}

// FuncName returns the name-section name of function idx, or "".
func (m *Module) FuncName(idx uint32) string {
	if m.Names == nil {
		return ""
	}
	return m.Names.Funcs[idx]
}

// ImportedFunc returns the import that defines function idx, if imported.
func (m *Module) ImportedFunc(idx uint32) (Import, bool) {
	if idx >= m.NumImportedFuncs {
		return Import{}, false
	}
	n := uint32(0)
	for _, im := range m.Imports {
		if im.Kind == KindFunc {
			if n == idx {
				return im, true
			}
			n++
		}
	}
	return Import{}, false
}

// section returns the first section with the id, or nil.
func (m *Module) section(id byte) *Section {
	for _, s := range m.Sections {
		if s.ID == id && id != SecCustom {
			return s
		}
	}
	return nil
}

// customSection returns the first custom section with the name, or nil.
func (m *Module) customSection(name string) *Section {
	for _, s := range m.Sections {
		if s.ID == SecCustom && s.Name == name {
			return s
		}
	}
	return nil
}

// CustomSections returns the custom sections in module order.
func (m *Module) CustomSections() []*Section {
	var out []*Section
	for _, s := range m.Sections {
		if s.ID == SecCustom {
			out = append(out, s)
		}
	}
	return out
}

// decoder reads one section's payload.
type decoder struct {
	b    []byte
	pos  int
	base int // absolute offset of b[0]
	sect string
	r    Reader
}

func (d *decoder) errf(at int, format string, args ...any) error {
	return &DecodeError{Section: d.sect, Offset: d.base + at, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) u32(what string) (uint32, error) {
	v, n, err := readU(d.b[d.pos:], 32)
	if err != nil {
		return 0, d.errf(d.pos, "%s: %v", what, err)
	}
	d.pos += n
	return uint32(v), nil
}

func (d *decoder) u64(what string) (uint64, error) {
	v, n, err := readU(d.b[d.pos:], 64)
	if err != nil {
		return 0, d.errf(d.pos, "%s: %v", what, err)
	}
	d.pos += n
	return v, nil
}

func (d *decoder) byte1(what string) (byte, error) {
	if d.pos >= len(d.b) {
		return 0, d.errf(d.pos, "%s: unexpected end", what)
	}
	c := d.b[d.pos]
	d.pos++
	return c, nil
}

func (d *decoder) bytes(n uint32, what string) ([]byte, error) {
	if uint64(n) > uint64(len(d.b)-d.pos) {
		return nil, d.errf(d.pos, "%s: length %d out of bounds", what, n)
	}
	b := d.b[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return b, nil
}

func (d *decoder) name(what string) (string, error) {
	at := d.pos
	n, err := d.u32(what + " length")
	if err != nil {
		return "", err
	}
	b, err := d.bytes(n, what)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", d.errf(at, "%s: malformed UTF-8 encoding", what)
	}
	return string(b), nil
}

// count reads a vector length, refusing lengths that cannot fit in the
// rest of the payload (each element takes at least min bytes) so that a
// hostile length never causes a huge allocation.
func (d *decoder) count(what string, min int) (uint32, error) {
	at := d.pos
	n, err := d.u32(what + " count")
	if err != nil {
		return 0, err
	}
	if uint64(n)*uint64(min) > uint64(len(d.b)-d.pos) {
		return 0, d.errf(at, "%s count %d: too large for the section", what, n)
	}
	return n, nil
}

func (d *decoder) valType() (ValType, error) {
	d.r.Reset(d.b, d.base)
	d.r.sect = d.sect
	d.r.pos = d.pos
	t, err := d.r.valType()
	d.pos = d.r.pos
	return t, err
}

func (d *decoder) refType() (ValType, error) {
	at := d.pos
	t, err := d.valType()
	if err != nil {
		return t, err
	}
	switch t.Code {
	case FuncRef, ExternRef, ExnRef, Ref, RefNull:
		return t, nil
	}
	return t, d.errf(at, "malformed reference type %s", t)
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
	v, n, err := readU(d.b[d.pos:], bits)
	if err != nil {
		return l, d.errf(d.pos, "%s limits minimum: %v", what, err)
	}
	d.pos += n
	l.Min = v
	if f&1 != 0 {
		v, n, err := readU(d.b[d.pos:], bits)
		if err != nil {
			return l, d.errf(d.pos, "%s limits maximum: %v", what, err)
		}
		d.pos += n
		l.Max = v
	}
	return l, nil
}

func (d *decoder) globalType() (GlobalType, error) {
	t, err := d.valType()
	if err != nil {
		return GlobalType{}, err
	}
	at := d.pos
	m, err := d.byte1("global mutability")
	if err != nil {
		return GlobalType{}, err
	}
	if m > 1 {
		return GlobalType{}, d.errf(at, "malformed mutability 0x%02x", m)
	}
	return GlobalType{Type: t, Mutable: m == 1}, nil
}

func (d *decoder) tableType() (Table, error) {
	t, err := d.refType()
	if err != nil {
		return Table{}, err
	}
	l, err := d.limits("table")
	return Table{Type: t, Limits: l}, err
}

// constExpr reads a constant expression up to and including its end.
func (d *decoder) constExpr(what string) ([]byte, error) {
	start := d.pos
	d.r.Reset(d.b, d.base)
	d.r.sect = d.sect
	d.r.pos = d.pos
	var in Instr
	depth := 0
	for {
		if d.r.pos >= len(d.b) {
			return nil, d.errf(d.r.pos, "%s: unexpected end of constant expression", what)
		}
		if err := d.r.Next(&in); err != nil {
			return nil, err
		}
		switch in.Op {
		case OpBlock, OpLoop, OpIf, OpTry, OpTryTable:
			depth++
		case OpEnd:
			if depth == 0 {
				d.pos = d.r.pos
				return d.b[start:d.pos], nil
			}
			depth--
		}
	}
}

// Decode decodes a binary module. The module keeps references into b.
func Decode(b []byte) (*Module, error) {
	if len(b) < 4 || !bytes.Equal(b[:4], []byte{0, 'a', 's', 'm'}) {
		return nil, &DecodeError{Section: "header", Offset: 0, Msg: "magic header not detected"}
	}
	if len(b) < 8 {
		return nil, &DecodeError{Section: "header", Offset: 4, Msg: "unexpected end: missing version"}
	}
	m := &Module{Version: uint32(b[4]) | uint32(b[5])<<8 | uint32(b[6])<<16 | uint32(b[7])<<24}
	if m.Version != 1 {
		return nil, &DecodeError{Section: "header", Offset: 4, Msg: fmt.Sprintf("unknown binary version %d", m.Version)}
	}
	pos := 8
	lastRank := 0
	funcCount := -1
	for pos < len(b) {
		start := pos
		id := b[pos]
		pos++
		size, n, err := readU(b[pos:], 32)
		if err != nil {
			return nil, &DecodeError{Section: SectionName(id), Offset: pos, Msg: fmt.Sprintf("section size: %v", err)}
		}
		pos += n
		if size > uint64(len(b)-pos) {
			return nil, &DecodeError{Section: SectionName(id), Offset: pos, Msg: fmt.Sprintf("section size %d: length out of bounds (%d bytes left)", size, len(b)-pos)}
		}
		payload := b[pos : pos+int(size)]
		s := &Section{ID: id, Off: start, Payload: payload, raw: b[start : pos+int(size)]}
		d := &decoder{b: payload, base: pos, sect: SectionName(id)}
		pos += int(size)
		if id > SecTag {
			return nil, &DecodeError{Section: "module", Offset: start, Msg: fmt.Sprintf("malformed section id %d", id)}
		}
		if id != SecCustom {
			r := sectionRank(id)
			if r <= lastRank {
				return nil, &DecodeError{Section: SectionName(id), Offset: start, Msg: "unexpected section: out of order or duplicate"}
			}
			lastRank = r
		}
		m.Sections = append(m.Sections, s)
		switch id {
		case SecCustom:
			nm, err := d.name("custom section name")
			if err != nil {
				return nil, err
			}
			s.Name = nm
			s.Payload = payload[d.pos:]
			if nm == "name" {
				// A broken name section is kept as raw bytes: engines ignore
				// custom sections they cannot read, and so does the codec.
				if names, err := decodeNames(s.Payload, pos-len(s.Payload)); err == nil {
					m.Names = names
				}
			}
			continue
		case SecType:
			err = m.decodeTypes(d)
		case SecImport:
			err = m.decodeImports(d)
		case SecFunction:
			var cnt uint32
			if cnt, err = d.count("function", 1); err == nil {
				m.Funcs = make([]uint32, cnt)
				for i := range m.Funcs {
					if m.Funcs[i], err = d.u32("function type index"); err != nil {
						break
					}
				}
				funcCount = int(cnt)
			}
		case SecTable:
			var cnt uint32
			if cnt, err = d.count("table", 3); err == nil {
				for i := uint32(0); i < cnt && err == nil; i++ {
					var t Table
					t, err = m.decodeTable(d)
					m.Tables = append(m.Tables, t)
				}
			}
		case SecMemory:
			var cnt uint32
			if cnt, err = d.count("memory", 2); err == nil {
				for i := uint32(0); i < cnt && err == nil; i++ {
					var l Limits
					l, err = d.limits("memory")
					m.Memories = append(m.Memories, l)
				}
			}
		case SecTag:
			var cnt uint32
			if cnt, err = d.count("tag", 2); err == nil {
				for i := uint32(0); i < cnt && err == nil; i++ {
					var t Tag
					at := d.pos
					if t.Attr, err = d.byte1("tag attribute"); err == nil {
						if t.Attr != 0 {
							err = d.errf(at, "malformed tag attribute 0x%02x", t.Attr)
						} else {
							t.Type, err = d.u32("tag type index")
						}
					}
					m.Tags = append(m.Tags, t)
				}
			}
		case SecGlobal:
			var cnt uint32
			if cnt, err = d.count("global", 3); err == nil {
				for i := uint32(0); i < cnt && err == nil; i++ {
					var g Global
					if g.GlobalType, err = d.globalType(); err == nil {
						g.Init, err = d.constExpr("global initializer")
					}
					m.Globals = append(m.Globals, g)
				}
			}
		case SecExport:
			err = m.decodeExports(d)
		case SecStart:
			m.Start, err = d.u32("start function")
			m.HasStart = true
		case SecElement:
			err = m.decodeElements(d)
		case SecDataCount:
			m.DataCount, err = d.u32("data count")
			m.HasDataCount = true
		case SecCode:
			m.CodePayloadOff = d.base
			err = m.decodeCode(d)
			if err == nil && funcCount < 0 && len(m.Code) > 0 || err == nil && funcCount >= 0 && funcCount != len(m.Code) {
				err = d.errf(0, "function and code section have inconsistent lengths (%d functions, %d bodies)", max(funcCount, 0), len(m.Code))
			}
		case SecData:
			err = m.decodeData(d)
		}
		if err != nil {
			return nil, err
		}
		if d.pos != len(d.b) {
			return nil, d.errf(d.pos, "section size mismatch: %d bytes left over", len(d.b)-d.pos)
		}
	}
	if funcCount > 0 && m.section(SecCode) == nil {
		return nil, &DecodeError{Section: "module", Offset: len(b), Msg: fmt.Sprintf("function and code section have inconsistent lengths (%d functions, no code section)", funcCount)}
	}
	if m.HasDataCount && int(m.DataCount) != len(m.Data) {
		return nil, &DecodeError{Section: "data", Offset: len(b), Msg: fmt.Sprintf("data count and data section have inconsistent lengths (%d, %d)", m.DataCount, len(m.Data))}
	}
	return m, nil
}

func (m *Module) decodeTypes(d *decoder) error {
	cnt, err := d.count("type", 3)
	if err != nil {
		return err
	}
	m.Types = make([]FuncType, 0, cnt)
	for i := uint32(0); i < cnt; i++ {
		if d.pos < len(d.b) && d.b[d.pos] == 0x4E {
			d.pos++
			n, err := d.count("recursive type group", 3)
			if err != nil {
				return err
			}
			for j := uint32(0); j < n; j++ {
				ft, err := d.funcType()
				if err != nil {
					return err
				}
				ft.InRec = true
				if j == 0 {
					ft.RecGroup = n
				}
				m.Types = append(m.Types, ft)
			}
			continue
		}
		ft, err := d.funcType()
		if err != nil {
			return err
		}
		m.Types = append(m.Types, ft)
	}
	return nil
}

func (d *decoder) funcType() (FuncType, error) {
	var ft FuncType
	at := d.pos
	form, err := d.byte1("type form")
	if err != nil {
		return ft, err
	}
	if form != 0x60 {
		return ft, d.errf(at, "unsupported type form 0x%02x (only function types are known)", form)
	}
	for k := 0; k < 2; k++ {
		n, err := d.count("type parameter", 1)
		if err != nil {
			return ft, err
		}
		ts := make([]ValType, n)
		for j := range ts {
			if ts[j], err = d.valType(); err != nil {
				return ft, err
			}
		}
		if k == 0 {
			ft.Params = ts
		} else {
			ft.Results = ts
		}
	}
	return ft, nil
}

func (m *Module) decodeImports(d *decoder) error {
	cnt, err := d.count("import", 4)
	if err != nil {
		return err
	}
	m.Imports = make([]Import, 0, cnt)
	for i := uint32(0); i < cnt; i++ {
		var im Import
		if im.Module, err = d.name("import module name"); err != nil {
			return err
		}
		if im.Name, err = d.name("import field name"); err != nil {
			return err
		}
		at := d.pos
		if im.Kind, err = d.byte1("import kind"); err != nil {
			return err
		}
		switch im.Kind {
		case KindFunc:
			im.Type, err = d.u32("import function type")
			m.NumImportedFuncs++
		case KindTable:
			im.Table, err = d.tableType()
			m.NumImportedTables++
		case KindMemory:
			im.Memory, err = d.limits("memory")
			m.NumImportedMemories++
		case KindGlobal:
			im.Global, err = d.globalType()
			m.NumImportedGlobals++
		case KindTag:
			at2 := d.pos
			if im.TagAttr, err = d.byte1("tag attribute"); err == nil {
				if im.TagAttr != 0 {
					err = d.errf(at2, "malformed tag attribute 0x%02x", im.TagAttr)
				} else {
					im.Type, err = d.u32("tag type index")
				}
			}
			m.NumImportedTags++
		default:
			return d.errf(at, "malformed import kind 0x%02x", im.Kind)
		}
		if err != nil {
			return err
		}
		m.Imports = append(m.Imports, im)
	}
	return nil
}

func (m *Module) decodeTable(d *decoder) (Table, error) {
	if d.pos+1 < len(d.b) && d.b[d.pos] == 0x40 {
		at := d.pos
		d.pos++
		if z, _ := d.byte1("table"); z != 0 {
			return Table{}, d.errf(at+1, "malformed table: 0x00 expected after 0x40")
		}
		t, err := d.tableType()
		if err != nil {
			return t, err
		}
		t.Init, err = d.constExpr("table initializer")
		return t, err
	}
	return d.tableType()
}

func (m *Module) decodeExports(d *decoder) error {
	cnt, err := d.count("export", 3)
	if err != nil {
		return err
	}
	m.Exports = make([]Export, 0, cnt)
	seen := make(map[string]bool, cnt)
	for i := uint32(0); i < cnt; i++ {
		var e Export
		at := d.pos
		if e.Name, err = d.name("export name"); err != nil {
			return err
		}
		if seen[e.Name] {
			return d.errf(at, "duplicate export name %q", e.Name)
		}
		seen[e.Name] = true
		kat := d.pos
		if e.Kind, err = d.byte1("export kind"); err != nil {
			return err
		}
		if e.Kind > KindTag {
			return d.errf(kat, "malformed export kind 0x%02x", e.Kind)
		}
		if e.Index, err = d.u32("export index"); err != nil {
			return err
		}
		m.Exports = append(m.Exports, e)
	}
	return nil
}

func (m *Module) decodeElements(d *decoder) error {
	cnt, err := d.count("element segment", 2)
	if err != nil {
		return err
	}
	m.Elements = make([]Element, 0, cnt)
	for i := uint32(0); i < cnt; i++ {
		var e Element
		at := d.pos
		if e.Flags, err = d.u32("element segment flags"); err != nil {
			return err
		}
		if e.Flags > 7 {
			return d.errf(at, "malformed element segment flags %d", e.Flags)
		}
		active := e.Flags&1 == 0
		explicitTable := e.Flags&2 != 0
		exprs := e.Flags&4 != 0
		if active && explicitTable {
			if e.Table, err = d.u32("element table index"); err != nil {
				return err
			}
		}
		if active {
			if e.Offset, err = d.constExpr("element offset"); err != nil {
				return err
			}
		}
		if e.Flags != 0 && e.Flags != 4 {
			if exprs {
				if e.RefType, err = d.refType(); err != nil {
					return err
				}
			} else {
				kat := d.pos
				if e.Kind, err = d.byte1("element kind"); err != nil {
					return err
				}
				if e.Kind != 0 {
					return d.errf(kat, "malformed element kind 0x%02x", e.Kind)
				}
			}
		}
		if exprs {
			n, err := d.count("element expression", 2)
			if err != nil {
				return err
			}
			e.Exprs = make([][]byte, n)
			for j := range e.Exprs {
				if e.Exprs[j], err = d.constExpr("element expression"); err != nil {
					return err
				}
			}
		} else {
			n, err := d.count("element function", 1)
			if err != nil {
				return err
			}
			e.Funcs = make([]uint32, n)
			for j := range e.Funcs {
				if e.Funcs[j], err = d.u32("element function index"); err != nil {
					return err
				}
			}
		}
		m.Elements = append(m.Elements, e)
	}
	return nil
}

func (m *Module) decodeData(d *decoder) error {
	cnt, err := d.count("data segment", 2)
	if err != nil {
		return err
	}
	m.Data = make([]Data, 0, cnt)
	for i := uint32(0); i < cnt; i++ {
		var s Data
		at := d.pos
		if s.Flags, err = d.u32("data segment flags"); err != nil {
			return err
		}
		switch s.Flags {
		case 0:
		case 1:
		case 2:
			if s.Memory, err = d.u32("data memory index"); err != nil {
				return err
			}
		default:
			return d.errf(at, "malformed data segment flags %d", s.Flags)
		}
		if s.Flags != 1 {
			if s.Offset, err = d.constExpr("data offset"); err != nil {
				return err
			}
		}
		n, err := d.u32("data segment length")
		if err != nil {
			return err
		}
		if s.Init, err = d.bytes(n, "data segment"); err != nil {
			return err
		}
		m.Data = append(m.Data, s)
	}
	return nil
}

func (m *Module) decodeCode(d *decoder) error {
	cnt, err := d.count("code", 2)
	if err != nil {
		return err
	}
	m.Code = make([]Code, cnt)
	r := NewReader(nil, 0, "code")
	for i := range m.Code {
		size, err := d.u32("function body size")
		if err != nil {
			return err
		}
		bodyAt := d.pos
		body, err := d.bytes(size, "function body")
		if err != nil {
			return err
		}
		c := &m.Code[i]
		c.Body = body
		c.OrigOff = d.base + bodyAt
		if err := c.decodeLocals(d.base + bodyAt); err != nil {
			return err
		}
		if err := checkBody(r, c, m.HasDataCount); err != nil {
			return fmt.Errorf("function %d: %w", m.NumImportedFuncs+uint32(i), err)
		}
	}
	return nil
}

func (c *Code) decodeLocals(base int) error {
	d := &decoder{b: c.Body, base: base, sect: "code"}
	n, err := d.count("local declaration", 2)
	if err != nil {
		return err
	}
	c.Locals = make([]LocalDecl, n)
	var total uint64
	for i := range c.Locals {
		if c.Locals[i].Count, err = d.u32("local count"); err != nil {
			return err
		}
		total += uint64(c.Locals[i].Count)
		if total > 1<<32-1 {
			return d.errf(d.pos, "too many locals")
		}
		if c.Locals[i].Type, err = d.valType(); err != nil {
			return err
		}
	}
	c.ExprOff = uint32(d.pos)
	return nil
}

// checkBody decodes every instruction of a body once, so that a malformed
// body is reported at decode time with its offset, and checks that the
// structure nests and ends exactly at the end of the body.
func checkBody(r *Reader, c *Code, hasDataCount bool) error {
	r.Reset(c.Body, c.OrigOff)
	r.pos = int(c.ExprOff)
	var in Instr
	depth := 0
	for {
		if r.Done() {
			return r.errf(r.pos, "unexpected end of function body: END opcode expected")
		}
		if err := r.Next(&in); err != nil {
			return err
		}
		switch in.Op {
		case OpBlock, OpLoop, OpIf, OpTry, OpTryTable:
			depth++
		case OpEnd, OpDelegate:
			if depth == 0 {
				if in.Op == OpDelegate {
					return r.errf(int(in.Off), "delegate outside a try")
				}
				if !r.Done() {
					return r.errf(r.pos, "section size mismatch: %d bytes after the function's final end", len(r.buf)-r.pos)
				}
				return nil
			}
			depth--
		case 0xFC0008, 0xFC0009: // memory.init, data.drop
			if !hasDataCount {
				return r.errf(int(in.Off), "data count section required for %s", in.Op)
			}
		}
	}
}
