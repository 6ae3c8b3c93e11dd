package partition

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/dagtest"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
)

// mkDAG fills Out, In and Topo for an edge list.
func mkDAG(nn int, edges []cfg.DAGEdge) *cfg.DAG { return dagtest.New(nn, edges) }

// edgesDAG builds a DAG from (from, to) pairs, all plain branch edges.
func edgesDAG(nn int, pairs ...[2]int32) *cfg.DAG {
	var es []cfg.DAGEdge
	for i, p := range pairs {
		es = append(es, cfg.DAGEdge{From: p[0], To: p[1], Kind: cfg.EdgeBr, Orig: int32(i)})
	}
	return mkDAG(nn, es)
}

// randDAG makes an unstructured random DAG of up to maxNodes nodes, with
// parallel edges, dead ends, unreachable nodes and dummy edges.
func randDAG(r *rand.Rand, maxNodes int) *cfg.DAG {
	nn := 2 + r.IntN(maxNodes-1)
	// Ranks: entry 0, exit nn-1, the rest permuted labels.
	perm := r.Perm(nn - 2)
	label := dagtest.Ranks(nn, perm)
	var es []cfg.DAGEdge
	back := int32(1000)
	add := func(i, j int) {
		e := cfg.DAGEdge{From: label(i), To: label(j), Kind: cfg.EdgeBr, Orig: int32(len(es))}
		if r.IntN(5) == 0 && (i == 0) != (j == nn-1) {
			// A dummy edge standing for an invented back edge.
			e.Orig, e.Back = -1, []int32{back}
			back++
			if i == 0 {
				e.Kind = cfg.EdgeDummyEntry
			} else {
				e.Kind = cfg.EdgeDummyExit
			}
		}
		es = append(es, e)
	}
	if nn > 2 {
		add(0, 1)
	}
	for j := 2; j < nn-1; j++ {
		if r.IntN(10) > 0 {
			add(r.IntN(j), j)
		}
	}
	for range r.IntN(2*nn + 2) {
		if len(es) > 0 && r.IntN(6) == 0 {
			es = append(es, es[r.IntN(len(es))]) // parallel edge
			es[len(es)-1].Orig = int32(len(es) - 1)
			continue
		}
		i := r.IntN(nn - 1)
		j := i + 1 + r.IntN(nn-1-i)
		if r.IntN(3) == 0 {
			j = nn - 1
		}
		add(i, j)
	}
	return mkDAG(nn, es)
}

// body generates a random structured function body (one i32 local, the
// condition of every branch) with if/else, if, block/br_if, loops,
// br_table, returns and calls to the given functions.
type bodyGen struct {
	r     *rand.Rand
	a     wasm.Asm
	calls []uint32
	size  int // statements left
}

func (g *bodyGen) stmts(depth int) {
	n := 1 + g.r.IntN(3)
	for range n {
		if g.size <= 0 {
			return
		}
		g.size--
		g.stmt(depth)
	}
}

func (g *bodyGen) stmt(depth int) {
	a := &g.a
	k := g.r.IntN(10)
	if depth > 5 {
		k = 0
	}
	switch k {
	case 0:
		a.I32(1).Op(wasm.OpDrop)
	case 1, 2:
		a.Idx(wasm.OpLocalGet, 0).Block(wasm.OpIf)
		g.stmts(depth + 1)
		a.Op(wasm.OpElse)
		g.stmts(depth + 1)
		a.Op(wasm.OpEnd)
	case 3:
		a.Idx(wasm.OpLocalGet, 0).Block(wasm.OpIf)
		g.stmts(depth + 1)
		a.Op(wasm.OpEnd)
	case 4:
		a.Block(wasm.OpBlock)
		g.stmts(depth + 1)
		a.Idx(wasm.OpLocalGet, 0).Idx(wasm.OpBrIf, 0)
		g.stmts(depth + 1)
		a.Op(wasm.OpEnd)
	case 5:
		a.Block(wasm.OpLoop)
		g.stmts(depth + 1)
		a.Idx(wasm.OpLocalGet, 0).Idx(wasm.OpBrIf, 0)
		a.Op(wasm.OpEnd)
	case 6:
		a.Block(wasm.OpBlock).Block(wasm.OpBlock).Block(wasm.OpBlock)
		a.Idx(wasm.OpLocalGet, 0).BrTable([]uint32{0, 1, 2})
		a.Op(wasm.OpEnd)
		g.stmts(depth + 1)
		a.Op(wasm.OpEnd)
		g.stmts(depth + 1)
		a.Op(wasm.OpEnd)
	case 7:
		a.Idx(wasm.OpLocalGet, 0).Block(wasm.OpIf).Op(wasm.OpReturn).Op(wasm.OpEnd)
	default:
		if len(g.calls) > 0 {
			a.Idx(wasm.OpCall, g.calls[g.r.IntN(len(g.calls))])
		} else {
			a.Op(wasm.OpNop)
		}
	}
}

// randBody returns the code (locals and instructions) of a random body.
func randBody(r *rand.Rand, size int, calls []uint32) []byte {
	g := &bodyGen{r: r, calls: calls, size: size}
	g.a.B = []byte{1, 1, 0x7F} // one i32 local
	for g.size > 0 {
		g.size--
		g.stmt(0)
	}
	g.a.Op(wasm.OpEnd)
	return g.a.B
}

// structuredDAG builds the DAG of a random structured body with the cfg
// package, as the instrumenter does.
func structuredDAG(t testing.TB, r *rand.Rand, size int) *cfg.DAG {
	t.Helper()
	body := randBody(r, size, nil)
	c := &wasm.Code{Body: body, ExprOff: 3}
	g, err := cfg.BuildBody(c, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return g.DAG()
}

// moduleBuilder writes a binary module by hand: one type () -> (), defined
// functions with the given bodies, and optional exports, start, globals,
// tables and element segments.
type moduleBuilder struct {
	bodies   [][]byte // locals and instructions, with the final end
	exports  []uint32
	start    int64 // -1: none
	globals  [][]byte
	tableMin uint32
	elems    [][]byte // encoded element segments
}

func (mb *moduleBuilder) bytes() []byte {
	b := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	b = wasmtest.Section(b, 1, []byte{1, 0x60, 0, 0})
	fs := wasm.AppendULEB128(nil, uint64(len(mb.bodies)))
	for range mb.bodies {
		fs = append(fs, 0)
	}
	b = wasmtest.Section(b, 3, fs)
	if mb.tableMin > 0 {
		t := []byte{1, 0x70, 0}
		b = wasmtest.Section(b, 4, wasm.AppendULEB128(t, uint64(mb.tableMin)))
	}
	if len(mb.globals) > 0 {
		g := wasm.AppendULEB128(nil, uint64(len(mb.globals)))
		for _, init := range mb.globals {
			g = append(g, 0x70, 0)
			g = append(g, init...)
		}
		b = wasmtest.Section(b, 6, g)
	}
	if len(mb.exports) > 0 {
		x := wasm.AppendULEB128(nil, uint64(len(mb.exports)))
		for i, f := range mb.exports {
			name := []byte{'f', byte('a' + i%26), byte('a' + i/26%26), byte('a' + i/676%26)}
			x = wasm.AppendULEB128(x, uint64(len(name)))
			x = append(x, name...)
			x = append(x, 0)
			x = wasm.AppendULEB128(x, uint64(f))
		}
		b = wasmtest.Section(b, 7, x)
	}
	if mb.start >= 0 {
		b = wasmtest.Section(b, 8, wasm.AppendULEB128(nil, uint64(mb.start)))
	}
	if len(mb.elems) > 0 {
		e := wasm.AppendULEB128(nil, uint64(len(mb.elems)))
		for _, s := range mb.elems {
			e = append(e, s...)
		}
		b = wasmtest.Section(b, 9, e)
	}
	c := wasm.AppendULEB128(nil, uint64(len(mb.bodies)))
	for _, body := range mb.bodies {
		c = wasm.AppendULEB128(c, uint64(len(body)))
		c = append(c, body...)
	}
	return wasmtest.Section(b, 10, c)
}

// planLoads is how many of a plan's functions are profitable, and its
// copies' loads.
func planLoads(p *Plan) (profitable int, loads []int64) {
	for _, f := range p.Funcs {
		if f.Profitable() {
			profitable++
		}
	}
	for _, c := range p.Copies {
		loads = append(loads, c.Load)
	}
	return profitable, loads
}

// dagsOf builds every function's DAG the way the instrumenter does: the
// body's graph, cut when its paths overflow 63 bits.
func dagsOf(t testing.TB, m *wasm.Module) []*cfg.DAG {
	t.Helper()
	opt := cfg.Options{NoReturn: cfg.NoReturnImports(m, [2]string{"wasi_snapshot_preview1", "proc_exit"})}
	ds := make([]*cfg.DAG, len(m.Code))
	for i := range m.Code {
		g, err := cfg.Build(m, i, opt)
		if err != nil {
			t.Fatalf("function %d: %v", i, err)
		}
		d := g.DAG()
		if _, err := numbering.Number(d); err != nil {
			var oe *numbering.OverflowError
			if !errors.As(err, &oe) {
				t.Fatal(err)
			}
			cr, err := numbering.Cut(d)
			if err != nil {
				t.Fatal(err)
			}
			d = cr.DAG
		}
		ds[i] = d
	}
	return ds
}
