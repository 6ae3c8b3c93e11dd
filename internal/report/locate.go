package report

// This file places a profile's blocks in the module: in their functions,
// at their instructions, and through DWARF at their source lines.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/srcmap"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// locator places block offsets in the module.
type locator struct {
	m   *wasm.Module
	src *srcmap.Map // nil without DWARF
	rd  *wasm.Reader
	// cfgOpt builds graphs as the instrumenter does; twinsOf caches twins.
	cfgOpt  cfg.Options
	twinsOf map[uint32]map[string]bool
}

// newLocator also returns a warning when the module's DWARF cannot be
// read: source lines are an extra, and without them blocks are still named
// by function and offset.
func newLocator(p *profile.Profile, module []byte) (*locator, string, error) {
	if p.Module.SHA256 != "" {
		sum := sha256.Sum256(module)
		if got := hex.EncodeToString(sum[:]); got != p.Module.SHA256 {
			return nil, "", fmt.Errorf("the module is not the one profiled: its sha256 is %s, the profile's %s", got, p.Module.SHA256)
		}
	}
	m, err := wasm.Decode(module)
	if err != nil {
		return nil, "", err
	}
	if p.Module.CodeOffset != 0 && p.Module.CodeOffset != m.CodePayloadOff {
		return nil, "", fmt.Errorf("the module's code section payload starts at %d, the profile says %d", m.CodePayloadOff, p.Module.CodeOffset)
	}
	warn := ""
	src, err := srcmap.FromModule(m)
	if err != nil {
		warn = fmt.Sprintf("no source lines: %v", err)
	}
	return &locator{m: m, src: src, rd: wasm.NewReader(nil, 0, "code"),
		cfgOpt: cfg.Options{NoReturn: cfg.NoReturnImports(m, cfg.ProcExit)}, twinsOf: map[uint32]map[string]bool{}}, warn, nil
}

// code returns the body of function idx.
func (l *locator) code(idx uint32) (*wasm.Code, error) {
	if idx < l.m.NumImportedFuncs || idx >= l.m.NumFuncs() {
		return nil, fmt.Errorf("function %d is not a function defined in the module (it has %d imported and %d defined)",
			idx, l.m.NumImportedFuncs, len(l.m.Code))
	}
	return &l.m.Code[idx-l.m.NumImportedFuncs], nil
}

// block describes the block at file offset off of the function whose body
// is c (nil without a module).
func (l *locator) block(c *wasm.Code, name string, off int) (Block, error) {
	b := Block{Offset: off, At: fmt.Sprintf("0x%x", off)}
	if l == nil {
		return b, nil
	}
	rel := off - c.OrigOff
	if rel < int(c.ExprOff) || rel >= len(c.Body) {
		return b, fmt.Errorf("block offset %d is not within the function's code (%d to %d)", off, c.OrigOff+int(c.ExprOff), c.OrigOff+len(c.Body))
	}
	b.FuncOffset = rel
	b.At = fmt.Sprintf("%s+0x%x", name, rel)
	l.rd.Reset(c.Body, c.OrigOff)
	l.rd.Seek(rel)
	var in wasm.Instr
	if l.rd.Next(&in) == nil {
		b.Instr = in.Op.Name()
	}
	if at, ok := l.position(off); ok {
		b.File, b.Line, b.Column, _ = l.src.LookupColumn(off)
		b.At = at
	}
	return b, nil
}

// position names the source position of the code at file offset off:
// file:line:column, or file:line where DWARF gives no column.
func (l *locator) position(off int) (string, bool) {
	file, line, col, ok := l.src.LookupColumn(off)
	if !ok {
		return "", false
	}
	if col > 0 {
		return fmt.Sprintf("%s:%d:%d", file, line, col), true
	}
	return fmt.Sprintf("%s:%d", file, line), true
}
