// One pass over a function body: the offsets of its ifs, elses, loops,
// branches and calls, and the label types, that placing probes needs.

package instrument

import (
	"fmt"
	"slices"
	"sync"

	"github.com/pathprof/pathprof/internal/wasm"
)

// scan holds what one pass over a body learns about its structure.
type scan struct {
	ifElse   map[uint32]int64 // if offset -> else offset (-1: none)
	ifEnd    map[uint32]uint32
	instrLen map[uint32]uint32 // of if, else and br_table instructions
	loops    map[uint32]loopAt // offset of a loop's first body instruction -> the loop
	brTypes  map[uint32][]wasm.ValType
	brTable  map[uint32][]uint32 // br_table offset -> labels (default last)
	voidBr   map[uint32]uint32   // br and br_if offset -> label, when the label takes no values
	// calls holds the offsets of the instructions that may leave the
	// function and never come back other than by a trap or a branch:
	// calls of every kind and throws.
	calls []uint32
	// padded holds the offsets of instructions encoded longer than
	// their shortest form, which a copy writes shortest.
	padded []uint32
	// loopCalls says whether some loop holds a call.
	loopCalls bool
	// expr and size are the scanned body's ExprOff and length: another
	// copy's body of the same function may take the scan if they match.
	expr uint32
	size int
}

// scanFrame is a block scanBody is in.
type scanFrame struct {
	op       wasm.Op
	off, len uint32
	bt       wasm.BlockType
	label    []wasm.ValType
	params   bool
}

// scanStacks holds scanBody's stacks of blocks, reused from one body to
// the next rather than grown again for each.
var scanStacks = sync.Pool{New: func() any { return new([]scanFrame) }}

func scanBody(m *wasm.Module, c *wasm.Code, results []wasm.ValType) (*scan, error) {
	s := &scan{ifElse: map[uint32]int64{}, ifEnd: map[uint32]uint32{}, instrLen: map[uint32]uint32{}, loops: map[uint32]loopAt{},
		brTypes: map[uint32][]wasm.ValType{}, brTable: map[uint32][]uint32{}, voidBr: map[uint32]uint32{},
		expr: c.ExprOff, size: len(c.Body)}
	st := scanStacks.Get().(*[]scanFrame)
	stack := append((*st)[:0], scanFrame{op: wasm.OpBlock, label: results})
	defer func() {
		clear(stack[:cap(stack)])
		*st = stack[:0]
		scanStacks.Put(st)
	}()
	blockTypes := func(bt wasm.BlockType) (params, res []wasm.ValType, err error) {
		switch bt.Kind {
		case wasm.BlockValue:
			return nil, []wasm.ValType{bt.Val}, nil
		case wasm.BlockTypeIndex:
			if int(bt.Type) >= len(m.Types) {
				return nil, nil, fmt.Errorf("block type %d out of range", bt.Type)
			}
			t := m.Types[bt.Type]
			return t.Params, t.Results, nil
		}
		return nil, nil, nil
	}
	r := wasm.NewReader(c.Body, c.OrigOff, "code")
	r.Seek(int(c.ExprOff))
	var in wasm.Instr
	for !r.Done() {
		if err := r.Next(&in); err != nil {
			return nil, err
		}
		if wasm.Padded(&in) {
			s.padded = append(s.padded, in.Off)
		}
		switch in.Op {
		case wasm.OpTry, wasm.OpTryTable, wasm.OpCatch, wasm.OpCatchAll, wasm.OpDelegate, wasm.OpRethrow, wasm.OpThrowRef:
			return nil, skipError("exception handling")
		case wasm.OpBrOnNull, wasm.OpBrOnNonNull:
			return nil, skipError("br_on_null")
		case wasm.OpBlock, wasm.OpLoop, wasm.OpIf:
			p, res, err := blockTypes(in.Block)
			if err != nil {
				return nil, err
			}
			label := res
			if in.Op == wasm.OpLoop {
				label = p
			}
			stack = append(stack, scanFrame{op: in.Op, off: in.Off, len: in.Len, bt: in.Block, label: label, params: len(p) > 0})
			if in.Op == wasm.OpIf {
				s.ifElse[in.Off] = -1
				s.instrLen[in.Off] = in.Len
			}
		case wasm.OpElse:
			top := stack[len(stack)-1]
			s.ifElse[top.off] = int64(in.Off)
			s.instrLen[in.Off] = in.Len
		case wasm.OpEnd:
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if top.op == wasm.OpIf {
				s.ifEnd[top.off] = in.Off
			}
			if top.op == wasm.OpLoop {
				s.loops[top.off+top.len] = loopAt{off: top.off, end: in.Off, bt: top.bt, params: top.params}
				if n := len(s.calls); n > 0 && s.calls[n-1] > top.off {
					s.loopCalls = true
				}
			}
			if len(stack) == 0 {
				return s, nil
			}
		case wasm.OpCall, wasm.OpCallIndirect, wasm.OpCallRef, wasm.OpReturnCall, wasm.OpReturnCallIndirect,
			wasm.OpReturnCallRef, wasm.OpThrow:
			s.calls = append(s.calls, in.Off)
		case wasm.OpBr, wasm.OpBrIf:
			if int(in.A) >= len(stack) {
				return nil, fmt.Errorf("branch to label %d out of range", in.A)
			}
			if len(stack[len(stack)-1-int(in.A)].label) == 0 {
				s.voidBr[in.Off] = in.A
				s.instrLen[in.Off] = in.Len
			}
		case wasm.OpBrTable:
			l := in.Labels[0]
			if int(l) >= len(stack) {
				return nil, fmt.Errorf("br_table label %d out of range", l)
			}
			types := stack[len(stack)-1-int(l)].label
			for _, l := range in.Labels[1:] {
				// With typed references a value may go to labels of
				// different types (each a supertype of its own), and
				// the trampolines would need the value's own type.
				if int(l) >= len(stack) {
					return nil, fmt.Errorf("br_table label %d out of range", l)
				}
				if !slices.Equal(stack[len(stack)-1-int(l)].label, types) {
					return nil, skipError("br_table to labels of different types")
				}
			}
			s.brTypes[in.Off] = types
			s.brTable[in.Off] = append([]uint32(nil), in.Labels...)
			s.instrLen[in.Off] = in.Len
		}
	}
	return s, nil
}

// innermostLoopCalls says whether the instruction at off lies in a loop,
// and whether the innermost such loop holds a call.
func (s *scan) innermostLoopCalls(off uint32) (in, calls bool) {
	var best loopAt
	for _, l := range s.loops {
		if l.off < off && off < l.end && (!in || l.off > best.off) {
			best, in = l, true
		}
	}
	if !in {
		return false, false
	}
	// calls are in body order: the first after the loop's start decides.
	i, _ := slices.BinarySearch(s.calls, best.off+1)
	return true, i < len(s.calls) && s.calls[i] < best.end
}
