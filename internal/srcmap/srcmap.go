// Package srcmap maps code offsets of a WebAssembly module to source lines
// through the DWARF line tables that compilers such as clang put in the
// module's .debug_* custom sections, so that reports can name the source
// of a basic block.
//
// In WebAssembly DWARF an address is an offset from the start of the code
// section's payload (the byte after the section's size), not a file offset
// or a linear-memory address; Lookup takes file offsets and converts.
package srcmap

import (
	"debug/dwarf"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/pathprof/pathprof/internal/wasm"
)

// Map answers source lookups for one module. The zero Map and a nil *Map
// know no lines.
type Map struct {
	codeOff int
	seqs    []sequence // by start address
	// maxEnd[i] is the greatest end among seqs[:i+1]; it stops the search
	// for an address that no sequence holds.
	maxEnd []uint64
}

// sequence is one DWARF line sequence: rows for a contiguous address range.
type sequence struct {
	start, end uint64 // [start, end)
	rows       []row  // by address, as the line program emitted them
}

type row struct {
	addr      uint64
	file      string
	line, col int
}

// New decodes module and reads its line tables. It returns a nil Map and
// no error when the module has no DWARF line information; an error means
// the module or its DWARF is malformed.
func New(module []byte) (*Map, error) {
	m, err := wasm.Decode(module)
	if err != nil {
		return nil, err
	}
	return FromModule(m)
}

// dwarfOf reads the module's DWARF, nil when it has no line information,
// and the size of its code section's payload.
func dwarfOf(m *wasm.Module) (d *dwarf.Data, codeSize uint64, err error) {
	sections := map[string][]byte{}
	for _, s := range m.Sections {
		switch {
		case s.ID == wasm.SecCustom && strings.HasPrefix(s.Name, ".debug_"):
			if _, dup := sections[s.Name]; !dup {
				sections[s.Name] = s.Payload
			}
		case s.ID == wasm.SecCode:
			codeSize = uint64(len(s.Payload))
		}
	}
	if sections[".debug_info"] == nil || sections[".debug_line"] == nil {
		return nil, 0, nil
	}
	// debug/dwarf is not hardened against malformed input, and a module is
	// untrusted; a panic in it means bad DWARF, which is an error here.
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("DWARF: malformed debug sections (%v)", r)
		}
	}()
	d, err = dwarf.New(sections[".debug_abbrev"], sections[".debug_aranges"], nil,
		sections[".debug_info"], sections[".debug_line"], nil,
		sections[".debug_ranges"], sections[".debug_str"])
	if err != nil {
		return nil, 0, fmt.Errorf("DWARF: %v", err)
	}
	for _, name := range []string{".debug_addr", ".debug_line_str", ".debug_str_offsets", ".debug_rnglists"} {
		if b := sections[name]; b != nil {
			if err := d.AddSection(name, b); err != nil {
				return nil, 0, fmt.Errorf("DWARF %s: %v", name, err)
			}
		}
	}
	return d, codeSize, nil
}

// AddNames names, in m.DebugNames, the defined functions that neither the
// name section nor an export names, by the DWARF subprogram whose low_pc
// is the function's body (reactors and stripped builds have no name
// section). Malformed DWARF leaves the names as they were: names are not
// worth refusing a module for.
func AddNames(m *wasm.Module) {
	need := false
	for i := range m.Code {
		need = need || m.FuncName(m.NumImportedFuncs+uint32(i)) == ""
	}
	if !need {
		return
	}
	d, _, err := dwarfOf(m)
	if d == nil || err != nil {
		return
	}
	defer func() { recover() }() // see dwarfOf
	byStart := map[uint64]uint32{}
	for i, c := range m.Code {
		byStart[uint64(c.OrigOff-m.CodePayloadOff)] = m.NumImportedFuncs + uint32(i)
	}
	// A concrete subprogram of a function also inlined elsewhere names
	// itself through its abstract origin (or specification).
	named := map[dwarf.Offset]string{}
	origin := map[uint32]dwarf.Offset{}
	names := map[uint32]string{}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagSubprogram {
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		if name != "" {
			named[e.Offset] = name
		}
		low, ok := e.Val(dwarf.AttrLowpc).(uint64)
		idx, found := byStart[low]
		if !ok || !found || m.FuncName(idx) != "" {
			continue
		}
		switch {
		case name != "":
			names[idx] = name
		case e.Val(dwarf.AttrAbstractOrigin) != nil:
			origin[idx], _ = e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		case e.Val(dwarf.AttrSpecification) != nil:
			origin[idx], _ = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		}
	}
	for idx, off := range origin {
		if n := named[off]; n != "" {
			names[idx] = n
		}
	}
	if len(names) > 0 {
		m.DebugNames = names
	}
}

// FromModule is New for a module already decoded from its original bytes
// (the code section must be the original one, since DWARF addresses count
// from its payload).
func FromModule(m *wasm.Module) (mp *Map, err error) {
	d, codeSize, err := dwarfOf(m)
	if d == nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			mp, err = nil, fmt.Errorf("DWARF: malformed debug sections (%v)", r)
		}
	}()
	mp = &Map{codeOff: m.CodePayloadOff}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("DWARF: %v", err)
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit && e.Tag != dwarf.TagPartialUnit {
			r.SkipChildren()
			continue
		}
		r.SkipChildren()
		lr, err := d.LineReader(e)
		if err != nil {
			return nil, fmt.Errorf("DWARF line table: %v", err)
		}
		if lr == nil {
			continue
		}
		if err := mp.addUnit(lr, codeSize); err != nil {
			return nil, fmt.Errorf("DWARF line table: %v", err)
		}
	}
	if len(mp.seqs) == 0 {
		return nil, nil
	}
	slices.SortStableFunc(mp.seqs, func(a, b sequence) int {
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
	mp.maxEnd = make([]uint64, len(mp.seqs))
	var hi uint64
	for i, s := range mp.seqs {
		hi = max(hi, s.end)
		mp.maxEnd[i] = hi
	}
	return mp, nil
}

// addUnit adds one compile unit's sequences. Sequences outside the code
// section are dropped: the linker moves the line tables of functions it
// discarded to a tombstone address (0xFFFFFFFF for wasm-ld) rather than
// deleting them.
func (mp *Map) addUnit(lr *dwarf.LineReader, codeSize uint64) error {
	var cur sequence
	var e dwarf.LineEntry
	for {
		err := lr.Next(&e)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if e.EndSequence {
			if len(cur.rows) > 0 && cur.start < codeSize && e.Address > cur.start {
				cur.end = e.Address
				mp.seqs = append(mp.seqs, cur)
			}
			cur = sequence{}
			continue
		}
		if len(cur.rows) == 0 {
			cur.start = e.Address
		} else if e.Address < cur.rows[len(cur.rows)-1].addr {
			// Addresses only grow within a sequence; a line program that
			// goes back is broken, and this sequence cannot be searched.
			return fmt.Errorf("address 0x%x after 0x%x in one sequence", e.Address, cur.rows[len(cur.rows)-1].addr)
		}
		name := ""
		if e.File != nil {
			name = cleanName(e.File.Name)
		}
		cur.rows = append(cur.rows, row{addr: e.Address, file: name, line: e.Line, col: e.Column})
	}
}

// cleanName drops the "./" that clang's relative compilation directories
// (and -fdebug-prefix-map=DIR=.) leave in front of file names.
func cleanName(name string) string {
	if name == "" {
		return ""
	}
	c := path.Clean(name)
	if strings.HasPrefix(name, "/") || c == "." {
		return c
	}
	return strings.TrimPrefix(c, "./")
}

// Lookup returns the source file and line of the code at fileOffset, an
// offset in the module file. The row chosen is the one with the greatest
// address not above the code's, within the sequence that holds the code.
// A row with line 0 (code the compiler could not attribute, such as a join
// point after a branch) takes the line of the nearest row before it in the
// sequence, so that a block is named by the source it follows rather than
// not at all. ok is false when no sequence holds the address.
func (m *Map) Lookup(fileOffset int) (file string, line int, ok bool) {
	file, line, _, ok = m.LookupColumn(fileOffset)
	return file, line, ok
}

// LookupColumn is Lookup with the row's column too: 0 where DWARF gives
// none. Blocks that start on one line are told apart by it.
func (m *Map) LookupColumn(fileOffset int) (file string, line, col int, ok bool) {
	return m.lookup(fileOffset, true)
}

// Attributed is Lookup without the fallback for line-0 rows: the code at
// fileOffset counts as no line's when the compiler attributed it to none.
// Line coverage counts a line as run only by code of its own.
func (m *Map) Attributed(fileOffset int) (file string, line int, ok bool) {
	file, line, _, ok = m.lookup(fileOffset, false)
	return file, line, ok
}

func (m *Map) lookup(fileOffset int, fallBack bool) (file string, line, col int, ok bool) {
	if m == nil || fileOffset < m.codeOff {
		return "", 0, 0, false
	}
	addr := uint64(fileOffset - m.codeOff)
	// Sequences do not overlap in a well-formed table, but a table with
	// overlaps still gets an answer: the latest-starting sequence that
	// holds the address.
	i := sort.Search(len(m.seqs), func(i int) bool { return m.seqs[i].start > addr })
	for i--; i >= 0 && m.maxEnd[i] > addr; i-- {
		s := &m.seqs[i]
		if addr >= s.end {
			continue
		}
		j := sort.Search(len(s.rows), func(j int) bool { return s.rows[j].addr > addr }) - 1
		for ; j >= 0; j-- {
			if r := &s.rows[j]; r.line != 0 {
				return r.file, r.line, r.col, true
			}
			if !fallBack {
				break
			}
		}
		return "", 0, 0, false
	}
	return "", 0, 0, false
}
