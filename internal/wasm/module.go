package wasm

// This file defines Module and Section, and the section ids with their
// names, order and codecs.

import "fmt"

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

// sectionKinds describes each section id: its name, its rank in the order
// known sections must appear in (0 for custom sections, which may appear
// anywhere), and the decoder and encoder of its payload. A custom section's
// payload starts with its name, and the name section among them is decoded,
// so custom sections have codecs of their own (decodeCustom, encodeCustom).
var sectionKinds = [...]struct {
	name   string
	rank   int
	decode func(*Module, *decoder) error
	encode func(*Module) []byte
}{
	SecCustom:    {name: "custom"},
	SecType:      {"type", 1, (*Module).decodeTypes, (*Module).encodeTypes},
	SecImport:    {"import", 2, (*Module).decodeImports, (*Module).encodeImports},
	SecFunction:  {"function", 3, (*Module).decodeFunctions, (*Module).encodeFunctions},
	SecTable:     {"table", 4, (*Module).decodeTables, (*Module).encodeTables},
	SecMemory:    {"memory", 5, (*Module).decodeMemories, (*Module).encodeMemories},
	SecTag:       {"tag", 6, (*Module).decodeTags, (*Module).encodeTags},
	SecGlobal:    {"global", 7, (*Module).decodeGlobals, (*Module).encodeGlobals},
	SecExport:    {"export", 8, (*Module).decodeExports, (*Module).encodeExports},
	SecStart:     {"start", 9, (*Module).decodeStart, (*Module).encodeStart},
	SecElement:   {"element", 10, (*Module).decodeElements, (*Module).encodeElements},
	SecDataCount: {"datacount", 11, (*Module).decodeDataCount, (*Module).encodeDataCount},
	SecCode:      {"code", 12, (*Module).decodeCode, (*Module).encodeCode},
	SecData:      {"data", 13, (*Module).decodeData, (*Module).encodeData},
}

// SectionName returns the name of a section id.
func SectionName(id byte) string {
	if int(id) < len(sectionKinds) {
		return sectionKinds[id].name
	}
	return fmt.Sprintf("section %d", id)
}

// sectionRank gives the order known sections must appear in.
func sectionRank(id byte) int {
	if int(id) < len(sectionKinds) {
		return sectionKinds[id].rank
	}
	return 0
}

// Section is one section as it appeared in the module (or was added).
type Section struct {
	ID      byte
	Name    string // custom sections only
	Off     int    // offset of the id byte in the original module; -1 if added
	Payload []byte // the payload as read (after the custom section name for custom sections)
	raw     []byte // id, size and payload exactly as read
	dirty   bool
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
	// DebugNames names functions the name section and exports do not,
	// from DWARF subprograms; the decoder leaves it nil (srcmap.AddNames).
	DebugNames map[uint32]string
	// exportNames is each exported function's first export name, as
	// decoded and renumbered by RemapFuncs: FuncName looks it up in
	// constant time, since callers ask for every function.
	exportNames map[uint32]string

	NumImportedFuncs, NumImportedTables, NumImportedMemories, NumImportedGlobals, NumImportedTags uint32

	// codeSectionPayload is the absolute offset of the original code section's payload.
	CodePayloadOff int
	// bodiesChecked skips the check of the bodies' instructions
	// (DecodeChecked).
	bodiesChecked bool
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

// FuncName returns the name of function idx: its name-section name, else
// (reactors and stripped builds have no name section) its first export
// name, else DebugNames' (which package srcmap fills from DWARF), else "".
func (m *Module) FuncName(idx uint32) string {
	if m.Names != nil {
		if n := m.Names.Funcs[idx]; n != "" {
			return n
		}
	}
	if n := m.exportNames[idx]; n != "" {
		return n
	}
	return m.DebugNames[idx]
}

// FuncNames returns FuncName of every function that has a name.
func (m *Module) FuncNames() map[uint32]string {
	out := map[uint32]string{}
	for i := range m.NumImportedFuncs + uint32(len(m.Code)) {
		if n := m.FuncName(i); n != "" {
			out[i] = n
		}
	}
	return out
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
