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

func (m *Module) decodeImports(d *decoder) error {
	return vec(d, &m.Imports, "import", 4, m.decodeImport)
}

// decodeImport reads one import and counts it among the imports of its kind.
func (m *Module) decodeImport(d *decoder) (im Import, err error) {
	if im.Module, err = d.name("import module name"); err != nil {
		return im, err
	}
	if im.Name, err = d.name("import field name"); err != nil {
		return im, err
	}
	if im.Kind, err = d.kind("import kind", KindTag); err != nil {
		return im, err
	}
	switch im.Kind {
	case KindFunc:
		im.Type, err = d.u32("import function type")
	case KindTable:
		im.Table, err = d.tableType()
	case KindMemory:
		im.Memory, err = d.limits("memory")
	case KindGlobal:
		im.Global, err = d.globalType()
	case KindTag:
		var t Tag
		t, err = d.tag()
		im.TagAttr, im.Type = t.Attr, t.Type
	}
	imported := [...]*uint32{
		KindFunc:   &m.NumImportedFuncs,
		KindTable:  &m.NumImportedTables,
		KindMemory: &m.NumImportedMemories,
		KindGlobal: &m.NumImportedGlobals,
		KindTag:    &m.NumImportedTags,
	}
	*imported[im.Kind]++
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
