package wasm

// This file edits function bodies: splicing bytes in and out while an
// offset map keeps every offset traceable to the original body, and
// rewriting their locals.

import (
	"fmt"
	"sort"
)

// OffsetMap translates offsets in an edited function body back to offsets
// in the original body. Bytes inserted by an edit map to the offset of the
// original instruction they precede, so a probe inserted before a branch is
// reported at that branch.
type OffsetMap struct {
	segs []mapSeg // sorted by New, covering [0, len(body))
}

type mapSeg struct {
	New, Orig, Len uint32
	Inserted       bool
}

// Orig returns the original body offset of offset off of the edited body.
func (m *OffsetMap) Orig(off uint32) uint32 {
	if m == nil {
		return off
	}
	i := sort.Search(len(m.segs), func(i int) bool { return m.segs[i].New+m.segs[i].Len > off })
	if i == len(m.segs) {
		if len(m.segs) == 0 {
			return off
		}
		last := m.segs[len(m.segs)-1]
		if last.Inserted {
			return last.Orig
		}
		return last.Orig + (off - last.New)
	}
	s := m.segs[i]
	if s.Inserted {
		return s.Orig
	}
	return s.Orig + (off - s.New)
}

// Edit replaces Del bytes at offset Off of a body with Ins. Off must be an
// instruction boundary (or the start of the locals) of the current body.
type Edit struct {
	Off uint32
	Del uint32
	Ins []byte
}

// Splice applies edits (sorted by Off, not overlapping) to the body and
// extends the offset map so that every offset still maps to the original.
// Locals are re-read from the new body, so an edit may rewrite them too.
func (c *Code) Splice(edits []Edit) error {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].Off < edits[j].Off })
	size := len(c.Body)
	for _, e := range edits {
		size += len(e.Ins) - int(e.Del)
	}
	body := make([]byte, 0, max(size, 0))
	segs := make([]mapSeg, 0, 2*len(edits)+1)
	pos := uint32(0)
	prev := c.Map
	addCopy := func(from, to uint32) {
		if to <= from {
			return
		}
		segs = appendMapped(segs, uint32(len(body)), from, to-from, prev)
		body = append(body, c.Body[from:to]...)
	}
	for _, e := range edits {
		if e.Off < pos || int(e.Off+e.Del) > len(c.Body) {
			return fmt.Errorf("splice: edit at %d (delete %d) overlaps or lies outside the body of %d bytes", e.Off, e.Del, len(c.Body))
		}
		addCopy(pos, e.Off)
		if len(e.Ins) > 0 {
			segs = append(segs, mapSeg{New: uint32(len(body)), Orig: prev.Orig(e.Off), Len: uint32(len(e.Ins)), Inserted: true})
			body = append(body, e.Ins...)
		}
		pos = e.Off + e.Del
	}
	addCopy(pos, uint32(len(c.Body)))
	c.Body = body
	c.Map = &OffsetMap{segs: segs}
	return c.decodeLocals(c.OrigOff)
}

// appendMapped adds the mapping of new range [n, n+l), which was copied from
// offsets [from, from+l) of a body that itself maps to the original
// through prev.
func appendMapped(segs []mapSeg, n, from, l uint32, prev *OffsetMap) []mapSeg {
	if prev == nil {
		return append(segs, mapSeg{New: n, Orig: from, Len: l})
	}
	// The segments that cover the range follow one another: one search
	// finds the first.
	i := sort.Search(len(prev.segs), func(i int) bool { return prev.segs[i].New+prev.segs[i].Len > from })
	for ; l > 0; i++ {
		if i == len(prev.segs) {
			return append(segs, mapSeg{New: n, Orig: prev.Orig(from), Len: l, Inserted: true})
		}
		s := prev.segs[i]
		take := min(l, s.New+s.Len-from)
		if s.Inserted {
			segs = append(segs, mapSeg{New: n, Orig: s.Orig, Len: take, Inserted: true})
		} else {
			segs = append(segs, mapSeg{New: n, Orig: s.Orig + (from - s.New), Len: take})
		}
		n += take
		from += take
		l -= take
	}
	return segs
}

// NewCode returns a function body with locals ls and expression expr
// (ending with its end).
func NewCode(ls []LocalDecl, expr []byte) Code {
	b := appendLocals(nil, ls)
	n := len(b)
	return Code{Body: append(b, expr...), ExprOff: uint32(n), Locals: ls}
}

// SetLocals rewrites the locals declarations of the body.
func (c *Code) SetLocals(ls []LocalDecl) error {
	return c.Splice([]Edit{{Off: 0, Del: c.ExprOff, Ins: appendLocals(nil, ls)}})
}

// AddLocal appends a local of type t and returns its index, given the
// number of parameters of the function.
func (c *Code) AddLocal(numParams int, t ValType) (uint32, error) {
	idx := uint64(numParams) + c.NumLocals()
	if idx >= 1<<32-1 {
		return 0, fmt.Errorf("too many locals")
	}
	ls := append([]LocalDecl(nil), c.Locals...)
	if n := len(ls); n > 0 && ls[n-1].Type == t {
		ls[n-1].Count++
	} else {
		ls = append(ls, LocalDecl{Count: 1, Type: t})
	}
	return uint32(idx), c.SetLocals(ls)
}
