package srcmap

import (
	"bytes"
	"debug/dwarf"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
)

// rawDWARF opens the module's DWARF directly, as an oracle independent of
// Map's search.
func rawDWARF(t *testing.T, m *wasm.Module) *dwarf.Data {
	t.Helper()
	sec := map[string][]byte{}
	for _, s := range m.CustomSections() {
		sec[s.Name] = s.Payload
	}
	d, err := dwarf.New(sec[".debug_abbrev"], nil, nil, sec[".debug_info"], sec[".debug_line"], nil, sec[".debug_ranges"], sec[".debug_str"])
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestAddressConvention checks, without Map, that a DWARF address is an
// offset from the code section's payload: every live subprogram's low_pc
// plus that payload's file offset is the start of a function body, and the
// body is the function of that name.
func TestAddressConvention(t *testing.T) {
	for _, p := range testprogs.CPrograms(t) {
		_, m := wasmtest.DecodeFile(t, p.Wasm)
		bodies := map[int]string{}
		for i, c := range m.Code {
			bodies[c.OrigOff] = m.FuncName(m.NumImportedFuncs + uint32(i))
		}
		r := rawDWARF(t, m).Reader()
		matched := 0
		for {
			e, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if e == nil {
				break
			}
			if e.Tag != dwarf.TagSubprogram {
				continue
			}
			low, ok := e.Val(dwarf.AttrLowpc).(uint64)
			name, _ := e.Val(dwarf.AttrName).(string) // "" for an out-of-line copy of an inline function
			if !ok || low >= 0xFFFFFFFE {
				continue // no code, or discarded by the linker (a tombstone address)
			}
			got, ok := bodies[int(low)+m.CodePayloadOff]
			if !ok {
				t.Errorf("%s: %s: low_pc 0x%x + code payload offset %d is not a function body start", p.Name, name, low, m.CodePayloadOff)
				continue
			}
			// clang renames a main without arguments.
			if name != "" && got != name && !(name == "main" && got == "__original_main") {
				t.Errorf("%s: low_pc 0x%x is %s's, body there is %s", p.Name, low, name, got)
			}
			matched++
		}
		if matched < 10 {
			t.Errorf("%s: only %d subprograms matched function bodies", p.Name, matched)
		}
	}
}

var defRE = regexp.MustCompile(`^[a-z_].*\b([a-z_][a-z0-9_]*)\(`)

// definitions returns the line of each function definition in a C source
// (a declarator at the start of a line, not ending in ";") and the lines.
func definitions(t *testing.T, src string) (map[string]int, []string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	defs := map[string]int{}
	for i, l := range lines {
		if m := defRE.FindStringSubmatch(l); m != nil && !strings.HasSuffix(strings.TrimSpace(l), ";") {
			defs[m[1]] = i + 1
		}
	}
	return defs, lines
}

// TestFunctionStarts checks that the start of each function body of a C
// program maps to the program's source at the function's opening brace,
// where clang puts a function's first line-table row, and that the first
// instruction maps somewhere.
func TestFunctionStarts(t *testing.T) {
	total := 0
	for _, p := range testprogs.CPrograms(t) {
		b, m := wasmtest.DecodeFile(t, p.Wasm)
		sm, err := New(b)
		if err != nil || sm == nil {
			t.Fatalf("%s: New = %v, %v", p.Name, sm, err)
		}
		defs, lines := definitions(t, p.Source)
		checked := 0
		hasMain := false
		for i := range m.Code {
			hasMain = hasMain || m.FuncName(m.NumImportedFuncs+uint32(i)) == "main"
		}
		for i, c := range m.Code {
			name := m.FuncName(m.NumImportedFuncs + uint32(i))
			if name == "__original_main" && !hasMain {
				// clang's name for a main without arguments; with
				// arguments, __original_main is wasi-libc's caller of main.
				name = "main"
			}
			def, ok := defs[name]
			if !ok {
				if strings.HasSuffix(name, ".command_export") {
					if _, _, ok := sm.Lookup(c.OrigOff + int(c.ExprOff)); ok {
						t.Errorf("%s: %s, which has no DWARF, got a line", p.Name, name)
					}
				}
				continue
			}
			brace := def
			for brace <= len(lines) && !strings.Contains(lines[brace-1], "{") {
				brace++
			}
			file, line, ok := sm.Lookup(c.OrigOff)
			if !ok || file != filepath.Base(p.Source) || line != brace {
				t.Errorf("%s: %s body start (0x%x) maps to %s:%d, %v; want %s:%d",
					p.Name, name, c.OrigOff, file, line, ok, filepath.Base(p.Source), brace)
			}
			if _, line, ok := sm.Lookup(c.OrigOff + int(c.ExprOff)); !ok || line <= 0 {
				t.Errorf("%s: %s first instruction maps to line %d, %v", p.Name, name, line, ok)
			}
			checked++
		}
		if checked == 0 {
			t.Errorf("%s: no function of %s checked", p.Name, p.Source)
		}
		total += checked
	}
	if total < 20 { // most functions are inlined at -O2; vm-O0 has them all
		t.Errorf("only %d functions checked", total)
	}
}

// TestRows compares Lookup with every row of calc.c's line table, read
// directly: at a row's address Lookup gives the last row at that address,
// between rows the row before, and a line-0 row the line of the nearest
// row before it with a line (and that row's column), which Attributed
// does not.
func TestRows(t *testing.T) {
	b, m := wasmtest.DecodeFile(t, testprogs.CProgramByName(t, "calc").Wasm)
	sm, err := New(b)
	if err != nil {
		t.Fatal(err)
	}
	d := rawDWARF(t, m)
	r := d.Reader()
	var rows []dwarf.LineEntry
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			t.Fatalf("no calc.c compile unit (%v)", err)
		}
		r.SkipChildren()
		if e.Tag == dwarf.TagCompileUnit && e.Val(dwarf.AttrName) == "calc.c" {
			lr, err := d.LineReader(e)
			if err != nil {
				t.Fatal(err)
			}
			for {
				var le dwarf.LineEntry
				if err := lr.Next(&le); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				rows = append(rows, le)
			}
			break
		}
	}
	zeros, between := 0, 0
	lastLine, lastCol, cols := 0, 0, 0
	for i, row := range rows {
		if row.EndSequence {
			lastLine = 0
			continue
		}
		if row.Line != 0 {
			lastLine, lastCol = row.Line, row.Column
		}
		next := rows[i+1]
		if next.Address == row.Address && !next.EndSequence {
			continue // the later row at an address wins
		}
		want, wantCol := row.Line, row.Column
		if want == 0 {
			want, wantCol = lastLine, lastCol
			zeros++
		}
		off := m.CodePayloadOff + int(row.Address)
		// Attributed gives a row's own line, none for a line-0 row.
		if _, aLine, aOK := sm.Attributed(off); aOK != (row.Line != 0) || aLine != row.Line {
			t.Errorf("0x%x: Attributed gives line %d %v, the row %d", row.Address, aLine, aOK, row.Line)
		}
		file, line, col, ok := sm.LookupColumn(off)
		if want == 0 {
			if ok {
				t.Errorf("0x%x: line-0 row with no line before it mapped to %s:%d", row.Address, file, line)
			}
			continue
		}
		if !ok || line != want || !strings.HasSuffix(row.File.Name, file) {
			t.Errorf("0x%x: got %s:%d %v, want %s:%d", row.Address, file, line, ok, row.File.Name, want)
		}
		if col != wantCol {
			t.Errorf("0x%x: column %d, want %d", row.Address, col, wantCol)
		}
		if col > 0 {
			cols++
		}
		if next.Address > row.Address+1 {
			between++
			if _, line2, _ := sm.Lookup(off + 1); line2 != line {
				t.Errorf("0x%x: between rows got line %d, want %d", row.Address+1, line2, line)
			}
		}
		if next.EndSequence {
			if _, _, ok := sm.Lookup(m.CodePayloadOff + int(next.Address)); ok && !containsStart(rows, next.Address) {
				t.Errorf("0x%x: end of sequence still mapped", next.Address)
			}
		}
	}
	if len(rows) < 100 || zeros == 0 || between == 0 || cols == 0 {
		t.Fatalf("calc.c has %d rows, %d line-0 rows, %d gaps, %d with columns: the test checks too little", len(rows), zeros, between, cols)
	}
	for _, off := range []int{-1, 0, m.CodePayloadOff - 1, len(b), len(b) + 1000} {
		if f, l, ok := sm.Lookup(off); ok {
			t.Errorf("Lookup(%d) = %s:%d outside the code", off, f, l)
		}
	}
}

// containsStart reports whether some sequence other than the one ending at
// addr starts there (then addr is mapped, by that sequence).
func containsStart(rows []dwarf.LineEntry, addr uint64) bool {
	start := true
	for _, r := range rows {
		if start && r.Address == addr {
			return true
		}
		start = r.EndSequence
	}
	return false
}

func TestNoDWARF(t *testing.T) {
	b, err := os.ReadFile(testprogs.GoHello(t))
	if err != nil {
		t.Fatal(err)
	}
	sm, err := New(b)
	if err != nil || sm != nil {
		t.Fatalf("Go module without DWARF: New = %v, %v; want nil, nil", sm, err)
	}
	if _, _, ok := sm.Lookup(1000); ok {
		t.Fatal("nil Map found a line")
	}
}

func TestBadInput(t *testing.T) {
	if _, err := New([]byte("not wasm")); err == nil {
		t.Fatal("no error for a non-module")
	}
	b, m := wasmtest.DecodeFile(t, testprogs.CProgramByName(t, "calc").Wasm)
	for _, name := range []string{".debug_info", ".debug_line", ".debug_abbrev"} {
		var sec *wasm.Section
		for _, s := range m.CustomSections() {
			if s.Name == name {
				sec = s
			}
		}
		bad := bytes.Clone(b)
		// The payload is the section's last bytes; garble it in place so
		// the module still decodes.
		end := sec.Off + 1
		for bad[end]&0x80 != 0 {
			end++
		}
		end++
		size := len(sec.Payload)
		payloadEnd := end + 1 + len(name) + size
		for i := payloadEnd - size; i < payloadEnd; i++ {
			bad[i] = 0xFF
		}
		sm, err := New(bad) // must not panic
		t.Logf("%s garbled: %v", name, err)
		if name == ".debug_info" && err == nil {
			t.Errorf("garbled %s: no error (map %v)", name, sm != nil)
		}
	}
}

// TestDWARF5 reads a module whose program was built with DWARF 5 (string
// and address tables in .debug_line_str, .debug_str_offsets and
// .debug_addr, 0-based file numbers) and whose wasi-libc objects have
// DWARF 4.
func TestDWARF5(t *testing.T) {
	b, m := wasmtest.DecodeFile(t, filepath.Join("testdata", "dwarf5.wasm"))
	for _, name := range []string{".debug_line_str", ".debug_str_offsets", ".debug_addr"} {
		found := false
		for _, s := range m.CustomSections() {
			found = found || s.Name == name
		}
		if !found {
			t.Fatalf("testdata/dwarf5.wasm has no %s section: not DWARF 5", name)
		}
	}
	sm, err := New(b)
	if err != nil || sm == nil {
		t.Fatalf("New = %v, %v", sm, err)
	}
	defs, lines := definitions(t, filepath.Join("testdata", "dwarf5.c"))
	// clang names a main without arguments __original_main.
	for name, wasmName := range map[string]string{"sum": "sum", "main": "__original_main"} {
		def, ok := defs[name]
		if !ok {
			t.Fatalf("no definition of %s", name)
		}
		code := &m.Code[wasmtest.DefinedFunc(t, m, wasmName)]
		if file, line, ok := sm.Lookup(code.OrigOff); !ok || file != "dwarf5.c" || line != def+1 || lines[line-1] != "{" {
			t.Errorf("%s body start maps to %s:%d, %v; want dwarf5.c:%d", name, file, line, ok, def+1)
		}
		// The first instruction is in the function's first statement.
		if file, line, ok := sm.Lookup(code.OrigOff + int(code.ExprOff)); !ok || file != "dwarf5.c" || line < def+1 || line > def+3 {
			t.Errorf("%s first instruction maps to %s:%d, %v", name, file, line, ok)
		}
	}
	// wasi-libc's start code, with DWARF 4, in the same module.
	if file, _, ok := sm.Lookup(m.Code[0].OrigOff); !ok || !strings.HasSuffix(file, "crt1-command.c") {
		t.Errorf("_start maps to %s, %v", file, ok)
	}
}
