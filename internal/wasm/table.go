package wasm

// This file holds the table section and table types.

// Table is a table definition.
type Table struct {
	Type   ValType
	Limits Limits
	Init   []byte // constant expression (with its end) when the table has an initializer
}

func (m *Module) decodeTables(d *decoder) error {
	return vec(d, &m.Tables, "table", 3, (*decoder).table)
}

func (m *Module) encodeTables() []byte { return appendVec(nil, m.Tables, appendTable) }

// table reads a table definition: its type, after 0x40 0x00 and followed
// by its initializer when it has one.
func (d *decoder) table() (Table, error) {
	if d.pos+1 < len(d.buf) && d.buf[d.pos] == 0x40 {
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

func (d *decoder) tableType() (Table, error) {
	t, err := d.refType()
	if err != nil {
		return Table{}, err
	}
	l, err := d.limits("table")
	return Table{Type: t, Limits: l}, err
}

func appendTable(b []byte, t Table) []byte {
	if t.Init != nil {
		b = append(b, 0x40, 0x00)
	}
	b = appendTableType(b, t)
	return append(b, t.Init...)
}

func appendTableType(b []byte, t Table) []byte {
	b = appendValType(b, t.Type)
	return appendLimits(b, t.Limits)
}
