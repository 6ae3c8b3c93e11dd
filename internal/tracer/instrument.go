// Package tracer measures exact path profiles the slow way, to check the
// Ball-Larus profiles against: it reports every basic-block entry of a run
// to Go and cuts the block sequence of each call into acyclic paths there.
//
// It shares only the control-flow graphs (package cfg) with the profiler.
// Path numbering, probe placement and the counter module play no part, so a
// mistake in any of them shows up as a difference between the two
// profiles. The one borrowed decision is where numbering.Cut splits the
// paths of a function with more than numbering.LoopCutPaths of them (at its
// loop headers, and further where 2^63-1 would not hold them): the tracer
// calls it to learn the cut edges, which end and restart paths like back
// edges do.
//
// Instrument inserts "i32.const FUNC; i32.const BLOCK; call $block" before
// the first instruction of every reachable block. Run runs the result
// through package runner, with $block buffering the events for Go, and a
// wazero function listener that follows the wasm call stack, so that each
// block event is appended to the path of the frame it belongs to.
//
// Functions the profiler does not instrument (those with exception
// handlers or br_on_null) are not traced either. Paths are counted as the
// profiler defines them: a path cut short by a trap, by an exception
// passing through, or by proc_exit below its caller is not counted.
package tracer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/wasm"
)

// ImportModule and ImportName name the function import Instrument adds,
// of type (i32 function index, i32 block) -> ().
const (
	ImportModule = "pathprof_trace"
	ImportName   = "block"
)

// procExit is the call that ends a path like a return (cfg.Options.NoReturn).
var procExit = [2]string{"wasi_snapshot_preview1", "proc_exit"}

// Traced is a module instrumented to report its block entries.
type Traced struct {
	// Wasm is the instrumented module.
	Wasm []byte
	// Funcs holds one entry per defined function of the original module,
	// in order.
	Funcs []Func
	// NumImportedFuncs is the original module's number of imported
	// functions: Funcs[i] has function index NumImportedFuncs+i.
	NumImportedFuncs uint32
	// Region, if set before Run, counts only the paths that end inside
	// it (profile.Region).
	Region *Region

	size       int
	sha256     string
	codeOffset int
}

// Func is what the tracer knows about one defined function.
type Func struct {
	Index uint32 // in the original module's function index space
	Name  string // from the name section, or ""
	// Skipped says why the function is not traced ("" when it is): the
	// profiler leaves out functions with exception handlers and
	// br_on_null, so the tracer does too.
	Skipped string
	// Graph is the function's control-flow graph, built on the original
	// body; block events name its nodes.
	Graph *cfg.Graph
	// Offsets gives per node the file offset of the block's first
	// instruction in the original module (-1 for the virtual entry and exit).
	Offsets []int
	// Restart marks per Graph edge the edges that end a path and start the
	// next one: back edges and the edges numbering.Cut cut.
	Restart []bool
	// Cuts are the vertices numbering.Cut cut at, if any.
	Cuts []int32
	// PossiblePaths is the number of acyclic paths after cuts, in decimal.
	PossiblePaths string

	first int32     // the block the entry edge leads to
	exits []exitSet // per node: kinds of its edges into the exit
}

// exitSet is a set of cfg.EdgeKind of edges into the exit.
type exitSet uint32

func (s exitSet) has(k cfg.EdgeKind) bool { return s&(1<<k) != 0 }

// returns reports an edge a normal return can take: every edge into the
// exit except a tail call, a throw and a call that never returns.
func (s exitSet) returns() bool {
	return s&^(1<<cfg.EdgeTailCall|1<<cfg.EdgeThrow|1<<cfg.EdgeNoReturn) != 0
}

// Instrument decodes orig, builds every function's graph and adds the
// block-entry calls.
func Instrument(orig []byte) (*Traced, error) {
	mo, err := wasm.Decode(orig)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(orig)
	t := &Traced{
		NumImportedFuncs: mo.NumImportedFuncs,
		size:             len(orig),
		sha256:           hex.EncodeToString(sum[:]),
		codeOffset:       mo.CodePayloadOff,
		Funcs:            make([]Func, len(mo.Code)),
	}
	origOpts := cfg.Options{NoReturn: cfg.NoReturnImports(mo, procExit)}
	r := wasm.NewReader(nil, 0, "code")
	for i := range mo.Code {
		f := &t.Funcs[i]
		f.Index = mo.NumImportedFuncs + uint32(i)
		f.Name = mo.FuncName(f.Index)
		if f.Skipped, err = skipReason(r, &mo.Code[i]); err != nil {
			return nil, fmt.Errorf("function %d: %w", f.Index, err)
		}
		if f.Skipped != "" {
			continue
		}
		if f.Graph, err = cfg.Build(mo, i, origOpts); err != nil {
			return nil, fmt.Errorf("function %d: %w", f.Index, err)
		}
		if err := f.analyse(mo.Code[i].OrigOff); err != nil {
			return nil, fmt.Errorf("function %d: %w", f.Index, err)
		}
	}

	// Decode again rather than copy: AddFuncImport edits the module in place.
	m, err := wasm.Decode(orig)
	if err != nil {
		return nil, err
	}
	typ := m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI32, wasm.ValI32}})
	block, err := m.AddFuncImport(ImportModule, ImportName, typ)
	if err != nil {
		return nil, err
	}
	opts := cfg.Options{NoReturn: cfg.NoReturnImports(m, procExit)}
	for i := range m.Code {
		f := &t.Funcs[i]
		if f.Skipped != "" {
			continue
		}
		c := &m.Code[i]
		// The probes go where the remapped body's graph says blocks
		// start; it must be the original graph moved by the offset map,
		// or the events would name the wrong blocks.
		g, err := cfg.Build(m, i, opts)
		if err != nil {
			return nil, fmt.Errorf("function %d after adding the import: %w", f.Index, err)
		}
		if err := sameGraph(f.Graph, g, c.Map); err != nil {
			return nil, fmt.Errorf("function %d: the graph changed when the import was added: %w", f.Index, err)
		}
		edits := make([]wasm.Edit, 0, g.NumBlocks())
		for n := 2; n < len(g.Blocks); n++ {
			var a wasm.Asm
			a.I32(int32(f.Index)).I32(int32(n)).Idx(wasm.OpCall, block)
			edits = append(edits, wasm.Edit{Off: g.Blocks[n].Start, Ins: a.B})
		}
		if err := c.Splice(edits); err != nil {
			return nil, fmt.Errorf("function %d: %w", f.Index, err)
		}
	}
	if t.Wasm, err = m.Encode(); err != nil {
		return nil, err
	}
	return t, nil
}

// skipReason returns why the profiler does not instrument a function, or "".
func skipReason(r *wasm.Reader, c *wasm.Code) (string, error) {
	r.Reset(c.Body, c.OrigOff)
	r.Seek(int(c.ExprOff))
	var in wasm.Instr
	for !r.Done() {
		if err := r.Next(&in); err != nil {
			return "", err
		}
		switch in.Op {
		case wasm.OpTry, wasm.OpCatch, wasm.OpCatchAll, wasm.OpDelegate, wasm.OpRethrow, wasm.OpThrowRef, wasm.OpTryTable:
			return "exception handling", nil
		case wasm.OpBrOnNull, wasm.OpBrOnNonNull:
			return "br_on_null", nil
		}
	}
	return "", nil
}

// analyse fills in everything Run and Profile need from the graph.
func (f *Func) analyse(origOff int) error {
	g := f.Graph
	f.Offsets = make([]int, len(g.Blocks))
	f.Offsets[cfg.Entry], f.Offsets[cfg.Exit] = -1, -1
	for n := 2; n < len(g.Blocks); n++ {
		if g.Blocks[n].Instrs == 0 {
			return fmt.Errorf("block %d holds no instruction", n)
		}
		f.Offsets[n] = origOff + int(g.Blocks[n].Start)
	}
	out := g.Blocks[cfg.Entry].Out
	if len(out) != 1 {
		return fmt.Errorf("the entry has %d edges", len(out))
	}
	f.first = g.Edges[out[0]].To
	f.exits = make([]exitSet, len(g.Blocks))
	f.Restart = make([]bool, len(g.Edges))
	for i, e := range g.Edges {
		f.Restart[i] = e.Back
		if e.To == cfg.Exit {
			f.exits[e.From] |= 1 << e.Kind
		}
		if e.To == f.first && e.From != cfg.Entry {
			return fmt.Errorf("the first block %d is the target of edge %d", f.first, i)
		}
	}
	d := g.DAG()
	if n := d.NumPaths(); n.Fits63() && n.Small <= numbering.LoopCutPaths {
		f.PossiblePaths = n.String()
	} else {
		cut, err := numbering.Cut(d)
		if err != nil {
			return err
		}
		for _, ei := range cut.Edges {
			e := d.Edges[ei]
			if e.Orig < 0 {
				return fmt.Errorf("numbering.Cut cut dummy edge %d", ei)
			}
			f.Restart[e.Orig] = true
		}
		f.Cuts = cut.Vertices
		f.PossiblePaths = cut.DAG.NumPaths().String()
	}
	// A block event names blocks, not edges: parallel edges must agree.
	for n := range g.Blocks {
		restart := map[int32]bool{}
		for _, ei := range g.Blocks[n].Out {
			to := g.Edges[ei].To
			if r, ok := restart[to]; ok && r != f.Restart[ei] {
				return fmt.Errorf("edges %d->%d disagree on ending the path", n, to)
			}
			restart[to] = f.Restart[ei]
		}
	}
	return nil
}

// sameGraph checks that g, built on an edited body whose offset map is m,
// is orig with its block offsets moved.
func sameGraph(orig, g *cfg.Graph, m *wasm.OffsetMap) error {
	if len(orig.Blocks) != len(g.Blocks) || len(orig.Edges) != len(g.Edges) {
		return fmt.Errorf("%d blocks and %d edges, was %d and %d", len(g.Blocks), len(g.Edges), len(orig.Blocks), len(orig.Edges))
	}
	for n := 2; n < len(g.Blocks); n++ {
		if s := m.Orig(g.Blocks[n].Start); s != orig.Blocks[n].Start {
			return fmt.Errorf("block %d starts at original offset %d, was %d", n, s, orig.Blocks[n].Start)
		}
	}
	for i, e := range g.Edges {
		o := orig.Edges[i]
		if e.From != o.From || e.To != o.To || e.Kind != o.Kind || e.Back != o.Back {
			return fmt.Errorf("edge %d is %d->%d %s, was %d->%d %s", i, e.From, e.To, e.Kind, o.From, o.To, o.Kind)
		}
	}
	return nil
}
