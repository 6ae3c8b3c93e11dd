package wasm

// This file holds the tag section: exception tags, and tag types as
// imports also hold them.

// Tag is an exception tag.
type Tag struct {
	Attr byte
	Type uint32
}

func (m *Module) decodeTags(d *decoder) error { return vec(d, &m.Tags, "tag", 2, (*decoder).tag) }

func (m *Module) encodeTags() []byte { return appendVec(nil, m.Tags, appendTag) }

// tag reads a tag type: its attribute, 0 (an exception) being the only
// one, and its function type index.
func (d *decoder) tag() (t Tag, err error) {
	if t.Attr, err = d.kind("tag attribute", 0); err != nil {
		return t, err
	}
	t.Type, err = d.u32("tag type index")
	return t, err
}

func appendTag(b []byte, t Tag) []byte {
	b = append(b, t.Attr)
	return appendU(b, uint64(t.Type))
}
