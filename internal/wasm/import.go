package wasm

// This file holds the import section and the external kinds that imports
// and exports name.

// External kinds of imports and exports.
const (
	KindFunc   byte = 0
	KindTable  byte = 1
	KindMemory byte = 2
	KindGlobal byte = 3
	KindTag    byte = 4
)

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

func (m *Module) decodeImports(d *decoder) (err error) {
	m.Imports, err = vec(d, "import", 4, m.decodeImport)
	return err
}

// decodeImport reads one import and counts it among the imports of its kind.
func (m *Module) decodeImport(d *decoder) (Import, error) {
	var im Import
	var err error
	if im.Module, err = d.name("import module name"); err != nil {
		return im, err
	}
	if im.Name, err = d.name("import field name"); err != nil {
		return im, err
	}
	at := d.pos
	if im.Kind, err = d.byte1("import kind"); err != nil {
		return im, err
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
		var t Tag
		t, err = d.tag()
		im.TagAttr, im.Type = t.Attr, t.Type
		m.NumImportedTags++
	default:
		return im, d.errf(at, "malformed import kind 0x%02x", im.Kind)
	}
	return im, err
}

func (m *Module) encodeImports() []byte { return appendVec(nil, m.Imports, appendImport) }

func appendImport(b []byte, im Import) []byte {
	b = appendName(b, im.Module)
	b = appendName(b, im.Name)
	b = append(b, im.Kind)
	switch im.Kind {
	case KindFunc:
		b = appendU32(b, im.Type)
	case KindTable:
		b = appendTableType(b, im.Table)
	case KindMemory:
		b = appendLimits(b, im.Memory)
	case KindGlobal:
		b = appendGlobalType(b, im.Global)
	case KindTag:
		b = appendTag(b, Tag{Attr: im.TagAttr, Type: im.Type})
	}
	return b
}
