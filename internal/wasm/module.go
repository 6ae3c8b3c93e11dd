package wasm

// This file defines Module and Section, the section ids, the order
// sections must appear in, and the table of their codecs.

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

// sectionCodecs holds, per known section id, the decoder and encoder of
// its payload. The custom section is absent: its name comes first and
// the "name" section among them has its own codec (decodeCustom).
var sectionCodecs = [...]struct {
	decode func(*Module, *decoder) error
	encode func(*Module) []byte
}{
	SecType:      {(*Module).decodeTypes, (*Module).encodeTypes},
	SecImport:    {(*Module).decodeImports, (*Module).encodeImports},
	SecFunction:  {(*Module).decodeFunctions, (*Module).encodeFunctions},
	SecTable:     {(*Module).decodeTables, (*Module).encodeTables},
	SecMemory:    {(*Module).decodeMemories, (*Module).encodeMemories},
	SecGlobal:    {(*Module).decodeGlobals, (*Module).encodeGlobals},
	SecExport:    {(*Module).decodeExports, (*Module).encodeExports},
	SecStart:     {(*Module).decodeStart, (*Module).encodeStart},
	SecElement:   {(*Module).decodeElements, (*Module).encodeElements},
	SecCode:      {(*Module).decodeCode, (*Module).encodeCode},
	SecData:      {(*Module).decodeData, (*Module).encodeData},
	SecDataCount: {(*Module).decodeDataCount, (*Module).encodeDataCount},
	SecTag:       {(*Module).decodeTags, (*Module).encodeTags},
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
