package htmlreport

// This file formats a function's instructions for the instruction view:
// one text a line, with their offsets.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pathprof/pathprof/internal/wasm"
)

// countInstrs counts a body's instructions, to decide within the page's
// budget before formatting any.
func countInstrs(c *wasm.Code) int {
	r := wasm.NewReader(c.Body, c.OrigOff, "code")
	r.Seek(int(c.ExprOff))
	var in wasm.Instr
	n := 0
	for !r.Done() {
		if r.Next(&in) != nil {
			break
		}
		n++
	}
	return n
}

// instructions lists a body's instructions compactly: their texts, one a
// line, and their body offsets as the first offset followed by each
// instruction's length. A body the reader cannot decode ends the list
// where decoding stopped.
func instructions(m *wasm.Module, c *wasm.Code) (string, []uint32) {
	r := wasm.NewReader(c.Body, c.OrigOff, "code")
	r.Seek(int(c.ExprOff))
	var in wasm.Instr
	var text strings.Builder
	offs := []uint32{c.ExprOff}
	for !r.Done() {
		if err := r.Next(&in); err != nil {
			text.WriteString("(" + err.Error() + ")\n")
			offs = append(offs, 1)
			break
		}
		text.WriteString(formatInstr(m, &in))
		text.WriteByte('\n')
		offs = append(offs, in.Len)
	}
	return text.String(), offs
}

// opLen is the encoded length of an opcode without immediates: one byte,
// or a prefix byte and the sub-opcode's LEB128.
func opLen(op wasm.Op) uint32 {
	if op <= 0xFF {
		return 1
	}
	n := uint32(1)
	for v := uint32(op & 0xFFFF); ; v >>= 7 {
		n++
		if v < 0x80 {
			return n
		}
	}
}

// formatInstr writes an instruction as in the text format, with the
// immediates a reader of a path cares about: the callee's name, locals,
// globals and labels, constants and memory offsets. The codec does not
// say which immediates an opcode has, so they are told from its name and
// from whether its encoding is longer than the opcode.
func formatInstr(m *wasm.Module, in *wasm.Instr) string {
	name := in.Op.Name()
	if in.Len <= opLen(in.Op) {
		return name
	}
	switch {
	case name == "call" || name == "return_call" || name == "ref.func":
		if fn := m.FuncName(in.A); fn != "" {
			return fmt.Sprintf("%s %d <%s>", name, in.A, fn)
		}
		return fmt.Sprintf("%s %d", name, in.A)
	case name == "call_indirect" || name == "return_call_indirect":
		return fmt.Sprintf("%s (type %d) (table %d)", name, in.A, in.B)
	case name == "br_table":
		var b strings.Builder
		b.WriteString(name)
		for _, l := range in.Labels {
			b.WriteString(" " + strconv.FormatUint(uint64(l), 10))
		}
		return b.String()
	case name == "i32.const":
		return fmt.Sprintf("%s %d", name, int32(in.Const))
	case name == "i64.const":
		return fmt.Sprintf("%s %d", name, int64(in.Const))
	case name == "f32.const":
		return name + " " + strconv.FormatFloat(float64(math.Float32frombits(uint32(in.Const))), 'g', -1, 32)
	case name == "f64.const":
		return name + " " + strconv.FormatFloat(math.Float64frombits(in.Const), 'g', -1, 64)
	case strings.Contains(name, "load") || strings.Contains(name, "store") ||
		strings.HasPrefix(name, "i32.atomic") || strings.HasPrefix(name, "i64.atomic") ||
		strings.HasPrefix(name, "memory.atomic"):
		if in.Offset != 0 {
			return fmt.Sprintf("%s offset=%d", name, in.Offset)
		}
		return name
	case name == "block" || name == "loop" || name == "if" || name == "try" || name == "try_table" ||
		name == "v128.const" || name == "i8x16.shuffle" || name == "select" ||
		strings.HasPrefix(name, "memory.") || strings.HasSuffix(name, "_lane"):
		return name
	case strings.HasPrefix(name, "local.") || strings.HasPrefix(name, "global.") ||
		strings.HasPrefix(name, "br") || name == "throw" || name == "rethrow" || name == "delegate" ||
		strings.HasPrefix(name, "table.") || name == "call_ref" || name == "return_call_ref" ||
		name == "elem.drop" || name == "data.drop":
		return fmt.Sprintf("%s %d", name, in.A)
	}
	return name
}
