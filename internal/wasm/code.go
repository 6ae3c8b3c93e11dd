package wasm

// This file holds the code section: function bodies, kept as bytes and
// checked once at decode, their locals, and their encoding.

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// LocalDecl is a run of locals of one type.
type LocalDecl struct {
	Count uint32
	Type  ValType
}

// Code is one function body.
type Code struct {
	// Body holds the locals declarations followed by the instructions.
	Body   []byte
	Locals []LocalDecl
	// ExprOff is the offset in Body of the first instruction.
	ExprOff uint32
	// OrigOff is the absolute offset in the original module of the
	// original body; Map translates offsets of Body back to offsets of
	// that original body (nil while the body is unchanged).
	OrigOff int
	Map     *OffsetMap

	reencode bool // encode afresh (canonical mode)
}

// NumLocals is the number of declared locals (parameters not included).
func (c *Code) NumLocals() uint64 {
	var n uint64
	for _, l := range c.Locals {
		n += uint64(l.Count)
	}
	return n
}

func (m *Module) decodeCode(d *decoder) error {
	m.CodePayloadOff = d.base
	cnt, err := d.count("code", 2)
	if err != nil {
		return err
	}
	m.Code = make([]Code, cnt)
	// The bodies are framed in order, then checked in parallel; the
	// error reported is the first in function order, as if each body were
	// checked as it is framed.
	framed, frameErr := len(m.Code), error(nil)
	for i := range m.Code {
		size, err := d.u32("function body size")
		if err == nil {
			bodyAt := d.pos
			var body []byte
			if body, err = d.bytes(size, "function body"); err == nil {
				c := &m.Code[i]
				c.Body = body
				c.OrigOff = d.base + bodyAt
				err = c.decodeLocals(d.base + bodyAt)
			}
		}
		if err != nil {
			framed, frameErr = i, err
			break
		}
	}
	if !m.bodiesChecked {
		if err := m.checkBodies(m.Code[:framed]); err != nil {
			return err
		}
	}
	if frameErr != nil {
		return frameErr
	}
	if len(m.Funcs) != len(m.Code) {
		return d.errf(0, "function and code section have inconsistent lengths (%d functions, %d bodies)", len(m.Funcs), len(m.Code))
	}
	return nil
}

// checkBodies runs checkBody on every body, on GOMAXPROCS goroutines when
// there are many, and returns the error of the first body that has one.
func (m *Module) checkBodies(code []Code) error {
	check := func(r *Reader, i int) error {
		if err := checkBody(r, &code[i], m.HasDataCount); err != nil {
			return fmt.Errorf("function %d: %w", m.NumImportedFuncs+uint32(i), err)
		}
		return nil
	}
	const chunk = 256
	workers := min(runtime.GOMAXPROCS(0), (len(code)+chunk-1)/chunk)
	if workers <= 1 {
		r := NewReader(nil, 0, "code")
		for i := range code {
			if err := check(r, i); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, len(code))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			r := NewReader(nil, 0, "code")
			for {
				lo := int(next.Add(chunk)) - chunk
				if lo >= len(code) {
					return
				}
				for i := lo; i < min(lo+chunk, len(code)); i++ {
					if errs[i] = check(r, i); errs[i] != nil {
						break // the rest of the chunk cannot come first
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *Module) encodeCode() []byte {
	size := 5
	for i := range m.Code {
		size += len(m.Code[i].Body) + 5
	}
	b := make([]byte, 0, size)
	b = appendU(b, uint64(len(m.Code)))
	for i := range m.Code {
		body := m.Code[i].encodeBody()
		b = appendU(b, uint64(len(body)))
		b = append(b, body...)
	}
	return b
}

func (c *Code) decodeLocals(base int) error {
	d := newDecoder(c.Body, base, "code")
	n, err := d.count("local declaration", 2)
	if err != nil {
		return err
	}
	c.Locals = make([]LocalDecl, n)
	var total uint64
	for i := range c.Locals {
		if c.Locals[i].Count, err = d.u32("local count"); err != nil {
			return err
		}
		total += uint64(c.Locals[i].Count)
		if total > 1<<32-1 {
			return d.errf(d.pos, "too many locals")
		}
		if c.Locals[i].Type, err = d.valType(); err != nil {
			return err
		}
	}
	c.ExprOff = uint32(d.pos)
	return nil
}

func appendLocals(b []byte, ls []LocalDecl) []byte {
	return appendVec(b, ls, func(b []byte, l LocalDecl) []byte {
		return appendValType(appendU32(b, l.Count), l.Type)
	})
}

// checkBody decodes every instruction of a body once, so that a malformed
// body is reported at decode time with its offset, and checks that the
// structure nests and ends exactly at the end of the body.
func checkBody(r *Reader, c *Code, hasDataCount bool) error {
	r.Reset(c.Body, c.OrigOff)
	r.pos = int(c.ExprOff)
	var in Instr
	depth := 0
	for {
		if r.Done() {
			return r.errf(r.pos, "unexpected end of function body: END opcode expected")
		}
		if err := r.Next(&in); err != nil {
			return err
		}
		switch in.Op {
		case OpBlock, OpLoop, OpIf, OpTry, OpTryTable:
			depth++
		case OpEnd, OpDelegate:
			if depth == 0 {
				if in.Op == OpDelegate {
					return r.errf(int(in.Off), "delegate outside a try")
				}
				if !r.Done() {
					return r.errf(r.pos, "section size mismatch: %d bytes after the function's final end", len(r.buf)-r.pos)
				}
				return nil
			}
			depth--
		case 0xFC0008, 0xFC0009: // memory.init, data.drop
			if !hasDataCount {
				return r.errf(int(in.Off), "data count section required for %s", in.Op)
			}
		}
	}
}

// encodeBody returns the body bytes; in canonical mode the locals and
// every instruction are encoded afresh.
func (c *Code) encodeBody() []byte {
	if !c.reencode {
		return c.Body
	}
	b := appendLocals(nil, c.Locals)
	r := NewReader(c.Body, 0, "code")
	r.pos = int(c.ExprOff)
	var in Instr
	for !r.Done() {
		if err := r.Next(&in); err != nil {
			// The body was checked at decode time.
			panic(err)
		}
		b = AppendInstr(b, &in)
	}
	return b
}

func (m *Module) codeEdited() bool {
	for i := range m.Code {
		if m.Code[i].Map != nil {
			return true
		}
	}
	return false
}
