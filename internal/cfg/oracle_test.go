package cfg

import (
	"fmt"
	"sort"

	"github.com/pathprof/pathprof/internal/wasm"
)

// oracle builds an instruction-level successor graph with an algorithm of
// its own (structure matched up front, no incremental block creation) and
// compresses it into basic blocks. Functions with exception handling are
// out of its scope.
type oracle struct {
	offs   []uint32 // instruction offsets
	ops    []wasm.Op
	labels [][]uint32
	a      []uint32
	match  []int // for block/loop/if/else/try_table: index of matching end; for if: else index or -1 in elseOf
	elseOf []int
}

const exitInstr = -1

func newOracle(c *wasm.Code) (*oracle, error) {
	o := &oracle{}
	r := wasm.NewReader(c.Body, 0, "code")
	r.Seek(int(c.ExprOff))
	var in wasm.Instr
	for !r.Done() {
		if err := r.Next(&in); err != nil {
			return nil, err
		}
		switch in.Op {
		case wasm.OpTry, wasm.OpTryTable, wasm.OpThrow, wasm.OpThrowRef, wasm.OpRethrow, wasm.OpCatch, wasm.OpCatchAll, wasm.OpDelegate:
			return nil, fmt.Errorf("exception handling")
		}
		o.offs = append(o.offs, in.Off)
		o.ops = append(o.ops, in.Op)
		o.labels = append(o.labels, append([]uint32(nil), in.Labels...))
		o.a = append(o.a, in.A)
	}
	n := len(o.ops)
	o.match = make([]int, n)
	o.elseOf = make([]int, n)
	var stack []int
	for i, op := range o.ops {
		o.elseOf[i] = -1
		switch op {
		case wasm.OpBlock, wasm.OpLoop, wasm.OpIf:
			stack = append(stack, i)
		case wasm.OpElse:
			o.elseOf[stack[len(stack)-1]] = i
		case wasm.OpEnd:
			if len(stack) > 0 {
				o.match[stack[len(stack)-1]] = i
				stack = stack[:len(stack)-1]
			}
		}
	}
	return o, nil
}

// enclosing returns, for instruction i, the stack of enclosing structured
// instructions (outermost first).
func (o *oracle) enclosing(i int) []int {
	var stack []int
	for j := 0; j < i; j++ {
		switch o.ops[j] {
		case wasm.OpBlock, wasm.OpLoop, wasm.OpIf:
			stack = append(stack, j)
		case wasm.OpEnd:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	return stack
}

func (o *oracle) labelTarget(i int, l uint32) int {
	enc := o.enclosing(i)
	if int(l) == len(enc) {
		return exitInstr
	}
	s := enc[len(enc)-1-int(l)]
	if o.ops[s] == wasm.OpLoop {
		return s + 1
	}
	return o.match[s] + 1
}

func (o *oracle) succs(i int) []int {
	last := len(o.ops) - 1
	switch o.ops[i] {
	case wasm.OpBr:
		return []int{o.labelTarget(i, o.a[i])}
	case wasm.OpBrIf, wasm.OpBrOnNull, wasm.OpBrOnNonNull:
		return []int{o.labelTarget(i, o.a[i]), i + 1}
	case wasm.OpBrTable:
		seen := map[int]bool{}
		var out []int
		for _, l := range o.labels[i] {
			t := o.labelTarget(i, l)
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
		return out
	case wasm.OpReturn, wasm.OpReturnCall, wasm.OpReturnCallIndirect, wasm.OpReturnCallRef:
		return []int{exitInstr}
	case wasm.OpUnreachable:
		return nil
	case wasm.OpIf:
		if e := o.elseOf[i]; e >= 0 {
			return []int{i + 1, e + 1}
		}
		return []int{i + 1, o.match[i] + 1}
	case wasm.OpElse:
		// The then arm is done: jump past the end of the if.
		for s := i - 1; s >= 0; s-- {
			if o.ops[s] == wasm.OpIf && o.elseOf[s] == i {
				return []int{o.match[s] + 1}
			}
		}
	}
	if i == last {
		return []int{exitInstr}
	}
	return []int{i + 1}
}

type oracleGraph struct {
	blockStarts []uint32
	edges       []string // "from->to", sorted
}

func (o *oracle) graph() oracleGraph {
	n := len(o.ops)
	succ := make([][]int, n)
	preds := make([]int, n)
	reach := make([]bool, n)
	work := []int{0}
	reach[0] = true
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		succ[i] = o.succs(i)
		for _, s := range succ[i] {
			if s == exitInstr {
				continue
			}
			preds[s]++
			if !reach[s] {
				reach[s] = true
				work = append(work, s)
			}
		}
	}
	leader := make([]bool, n)
	leader[0] = true
	for i := 0; i < n; i++ {
		if !reach[i] {
			continue
		}
		if o.ops[i] == wasm.OpLoop && i+1 < n {
			leader[i+1] = true // loop bodies start a block
		}
		if preds[i] != 1 && i != 0 {
			leader[i] = true
		}
		if len(succ[i]) != 1 || succ[i][0] != i+1 {
			for _, s := range succ[i] {
				if s != exitInstr {
					leader[s] = true
				}
			}
		}
	}
	var g oracleGraph
	blockOf := make([]uint32, n)
	var cur uint32
	for i := 0; i < n; i++ {
		if !reach[i] {
			continue
		}
		if leader[i] || i == 0 {
			cur = o.offs[i]
			g.blockStarts = append(g.blockStarts, cur)
		}
		blockOf[i] = cur
	}
	name := func(s int) string {
		if s == exitInstr {
			return "exit"
		}
		return fmt.Sprint(blockOf[s])
	}
	for i := 0; i < n; i++ {
		if !reach[i] {
			continue
		}
		endsBlock := i == n-1 || !reach[i+1] || leader[i+1] || len(succ[i]) != 1 || succ[i][0] != i+1
		if !endsBlock {
			continue
		}
		for _, s := range succ[i] {
			g.edges = append(g.edges, fmt.Sprintf("%d->%s", blockOf[i], name(s)))
		}
	}
	sort.Slice(g.blockStarts, func(i, j int) bool { return g.blockStarts[i] < g.blockStarts[j] })
	sort.Strings(g.edges)
	return g
}

func builderGraph(g *Graph) oracleGraph {
	var og oracleGraph
	for _, b := range g.Blocks[2:] {
		og.blockStarts = append(og.blockStarts, b.Start)
	}
	for _, e := range g.Edges {
		if e.From == Entry {
			continue
		}
		to := "exit"
		if e.To != Exit {
			to = fmt.Sprint(g.Blocks[e.To].Start)
		}
		og.edges = append(og.edges, fmt.Sprintf("%d->%s", g.Blocks[e.From].Start, to))
	}
	sort.Slice(og.blockStarts, func(i, j int) bool { return og.blockStarts[i] < og.blockStarts[j] })
	sort.Strings(og.edges)
	return og
}

// enumeratePaths counts entry-to-exit paths of the DAG by walking each one,
// giving up past limit.
func enumeratePaths(d *DAG, limit int) (int, bool) {
	count := 0
	var walk func(v int32) bool
	walk = func(v int32) bool {
		if v == Exit {
			count++
			return count <= limit
		}
		for _, e := range d.Out[v] {
			if !walk(d.Edges[e].To) {
				return false
			}
		}
		return true
	}
	ok := walk(Entry)
	return count, ok
}
