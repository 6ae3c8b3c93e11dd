package htmlreport

// This file builds the page's data from a report: the overview the page
// parses at load, and each function's details, its graph with the paths'
// flow on it, as JSON parsed when the function is shown.

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/report"
	"github.com/pathprof/pathprof/internal/srcmap"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// num is a count as JSON: a number while a browser's float64 holds it
// exactly, else a decimal string.
type num uint64

func (n num) MarshalJSON() ([]byte, error) {
	if n <= 1<<53 {
		return strconv.AppendUint(nil, uint64(n), 10), nil
	}
	return []byte(`"` + strconv.FormatUint(uint64(n), 10) + `"`), nil
}

// flat writes a list of tuples as one flat JSON array: for the graphs of
// thousands of functions, the brackets of nested arrays are a good part of
// the page.
type flat[T [4]num | [5]num] []T

func (f flat[T]) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, t := range f {
		var ns []num
		switch t := any(t).(type) {
		case [4]num:
			ns = t[:]
		case [5]num:
			ns = t[:]
		}
		for j, n := range ns {
			if i+j > 0 {
				b = append(b, ',')
			}
			nb, _ := n.MarshalJSON()
			b = append(b, nb...)
		}
	}
	return append(b, ']'), nil
}

// overview is the data the page parses at load.
type overview struct {
	Title    string        `json:"title"`
	Run      report.Run    `json:"run"`
	Totals   report.Totals `json:"totals"`
	Warnings []string      `json:"warnings"`
	Notes    []string      `json:"notes"`
	Kinds    []string      `json:"kinds"`
	Edges    []string      `json:"edge_kinds"`
	Funcs    []funcRow     `json:"funcs"`
	// Hot and HotLen are the hottest paths by count and by count ×
	// blocks: [function row, path id, count, kind, blocks, label].
	Hot    [][6]any     `json:"hot"`
	HotLen [][6]any     `json:"hot_len"`
	Files  []sourceFile `json:"files"`
	// Inputs are the runs of a profile of several (report.Inputs), and
	// Unique each run's paths that no other run executed: [function
	// row, path id, count, label].
	Inputs []report.Input `json:"inputs,omitempty"`
	Unique [][][4]any     `json:"unique,omitempty"`
}

// funcRow is one function in the overview's table, as an array to keep
// the page small: [index, name, status, executions, calls, executed
// paths, possible paths, coverage (-1 for none), blocks].
type funcRow [9]any

// detail is one function's data, parsed when the function is shown.
type detail struct {
	// Off is the file offset of the function's body: block offsets are
	// relative to it.
	Off int `json:"off"`
	// Blocks are the graph's nodes, the virtual entry and exit first:
	// (start, end, instructions, entries) with body-relative offsets, and
	// entries the number of times a counted path entered the block;
	// flattened.
	Blocks flat[[4]num] `json:"b,omitempty"`
	// Edges are (from, to, kind, back, crossings), parallel edges merged
	// (their kinds joined in EdgeKinds); flattened.
	Edges flat[[5]num] `json:"e,omitempty"`
	// EdgeKinds holds, for merged edges, "kind/kind" (by edge position).
	EdgeKinds map[int]string `json:"ek,omitempty"`
	// Paths are [id, count, kind, [nodes...], label, by input], highest
	// count first; the label lists the blocks as the text report does,
	// and no two paths of a function of one kind have the same. By input
	// is, in a profile of several runs, [input, count, input, count, ...]
	// of the runs that executed the path, else null.
	Paths [][6]any `json:"p"`
	// At names, per node, its block as the path labels do (where a path
	// enters it): file:line:column, with the offset where two blocks of
	// the function would show alike.
	At []string `json:"at,omitempty"`
	// Lines are, per node, its instructions' source lines as pairs
	// [file, line, file, line, ...] (file indexes the overview's Files).
	Lines [][]int `json:"l,omitempty"`
	// Instrs are the function's instructions, one a line; InstrOffs the
	// first one's body offset, then each one's length.
	Instrs    string   `json:"i,omitempty"`
	InstrOffs []uint32 `json:"io,omitempty"`
	NoInstrs  string   `json:"ni,omitempty"`
	Cuts      []int    `json:"cuts,omitempty"` // nodes at which the DAG was cut
	Error     string   `json:"err,omitempty"`
	Unmatched int      `json:"unmatched,omitempty"` // path blocks not found in the graph
}

var pathKinds = []string{"entry-exit", "entry-back", "back-back", "back-exit"}

var kindIdx = map[string]int{"entry-exit": 0, "entry-back": 1, "back-back": 2, "back-exit": 3}

func build(r *report.Report, opt Options) (*page, error) {
	pg := &page{details: map[int][]byte{}}
	ov := &pg.ov
	ov.Title = "pathprof: " + filepath.Base(r.Run.Module)
	ov.Run, ov.Totals, ov.Warnings = r.Run, r.Totals, r.Warnings
	if ov.Warnings == nil {
		ov.Warnings = []string{}
	}
	ov.Notes = []string{}
	ov.Kinds = pathKinds
	for k := cfg.EdgeEntry; k <= cfg.EdgeDummyExit; k++ {
		ov.Edges = append(ov.Edges, k.String())
	}

	// The hottest lists name their paths' functions by row, and give
	// where each path starts and ends, so that the overview needs no
	// function's details.
	pathRow := map[[2]uint64]int{}
	for i, f := range r.Functions {
		cov := -1.0
		if f.Coverage != nil {
			cov = *f.Coverage
		}
		ov.Funcs = append(ov.Funcs, funcRow{f.Index, f.Name, f.Status, f.Executions, f.Calls,
			f.ExecutedPaths, f.PossiblePaths, cov, 0})
		for j, p := range f.Paths {
			pathRow[[2]uint64{uint64(f.Index), p.ID}] = i<<32 | j
		}
	}
	if ov.Funcs == nil {
		ov.Funcs = []funcRow{}
	}
	hot := func(list []report.Hot) [][6]any {
		out := [][6]any{}
		for _, h := range list {
			k, ok := pathRow[[2]uint64{uint64(h.Index), h.ID}]
			if !ok {
				continue
			}
			f, p := k>>32, k&(1<<32-1)
			out = append(out, [6]any{f, num(h.ID), num(h.Count), kindIdx[h.Kind], h.Length, r.Functions[f].Paths[p].Label})
		}
		return out
	}
	ov.Hot, ov.HotLen = hot(r.Hottest), hot(r.HottestByLength)
	if len(r.Inputs) > 0 {
		ov.Inputs = r.Inputs
		ov.Unique = make([][][4]any, len(r.Inputs))
		for i := range ov.Unique {
			ov.Unique[i] = [][4]any{}
		}
		for row, f := range r.Functions {
			for _, p := range f.Paths {
				if len(p.ByInput) == 1 {
					in := p.ByInput[0].Input
					ov.Unique[in] = append(ov.Unique[in], [4]any{row, num(p.ID), num(p.Count), p.Label})
				}
			}
		}
	}

	var m *wasm.Module
	var src *srcmap.Map
	if opt.Module != nil {
		var err error
		if m, err = wasm.Decode(opt.Module); err != nil {
			return nil, err
		}
		// The report already warned about DWARF it could not read.
		src, _ = srcmap.FromModule(m)
	}
	srcs := newSources(src, opt)
	maxInstr := opt.MaxInstructions
	if maxInstr == 0 {
		maxInstr = DefaultMaxInstructions
	}
	instrLeft := max(maxInstr, 0)
	var noReturn func(uint32) bool
	if m != nil {
		noReturn = cfg.NoReturnImports(m, [2]string{"wasi_snapshot_preview1", "proc_exit"})
	}
	skippedInstr := 0
	for i, f := range r.Functions {
		var d *detail
		if m != nil && f.Index >= m.NumImportedFuncs && f.Index < m.NumFuncs() {
			d = functionDetail(m, f, cfg.Options{NoReturn: noReturn}, srcs)
			// Most executed first: the report's order. A function that did
			// not run gets no instructions: there is no path to show on them.
			if len(f.Paths) > 0 && d.Error == "" {
				code := &m.Code[f.Index-m.NumImportedFuncs]
				if n := countInstrs(code); n <= instrLeft {
					d.Instrs, d.InstrOffs = instructions(m, code)
					instrLeft -= n
				} else {
					skippedInstr++
					d.NoInstrs = fmt.Sprintf("its %d instructions are not embedded: the page's limit of %d instructions was reached by more executed functions", n, max(maxInstr, 0))
				}
			}
		} else {
			d = pathsOnly(f)
		}
		b, err := json.Marshal(d)
		if err != nil {
			return nil, err
		}
		pg.details[i] = b
		ov.Funcs[i][8] = max(len(d.Blocks)-2, 0)
	}
	if skippedInstr > 0 {
		ov.Notes = append(ov.Notes, fmt.Sprintf("The instructions of %d functions that ran are not embedded (limit: %d instructions).", skippedInstr, max(maxInstr, 0)))
	}
	ov.Files = srcs.embed()
	ov.Notes = append(ov.Notes, srcs.notes()...)
	return pg, nil
}

// pathsOnly is a function's detail without the module: its paths, with
// blocks as file offsets standing in for graph nodes.
func pathsOnly(f report.Function) *detail {
	d := &detail{Paths: [][6]any{}}
	if f.Status != profile.StatusProfiled {
		d.Error = string(f.Status)
	}
	for _, p := range f.Paths {
		offs := make([]int, len(p.Blocks))
		for i, b := range p.Blocks {
			offs[i] = b.Offset
		}
		d.Paths = append(d.Paths, [6]any{num(p.ID), num(p.Count), kindIdx[p.Kind], offs, p.Label, byInput(p)})
	}
	return d
}

// functionDetail puts the function's paths on its control-flow graph: it
// maps each path's block offsets to graph nodes and counts how many path
// executions enter each node and cross each edge.
func functionDetail(m *wasm.Module, f report.Function, copt cfg.Options, srcs *sources) *detail {
	def := int(f.Index - m.NumImportedFuncs)
	code := &m.Code[def]
	g, err := cfg.Build(m, def, copt)
	if err != nil {
		d := pathsOnly(f)
		d.Error = "no control-flow graph: " + err.Error()
		return d
	}
	d := &detail{Off: code.OrigOff, Paths: [][6]any{}, At: make([]string, len(g.Blocks))}
	nodeAt := map[int]int{}
	for n, b := range g.Blocks {
		if n > cfg.Exit {
			nodeAt[code.OrigOff+int(b.Start)] = n
		}
	}
	entries := make([]uint64, len(g.Blocks))
	for _, c := range f.Cuts {
		if n, ok := nodeAt[c.Offset]; ok {
			d.Cuts = append(d.Cuts, n)
		}
	}

	// Parallel edges (a br_if whose target is also its fall-through, two
	// br_table arms to one block) cannot be told apart by the blocks of a
	// path, so they are drawn and counted as one.
	type pair struct{ from, to int32 }
	edgeOf := map[pair]int{}
	var kinds [][]string
	for _, e := range g.Edges {
		p := pair{e.From, e.To}
		if k, ok := edgeOf[p]; ok {
			kinds[k] = append(kinds[k], e.Kind.String())
			if e.Back {
				d.Edges[k][3] = 1
			}
			continue
		}
		edgeOf[p] = len(d.Edges)
		back := num(0)
		if e.Back {
			back = 1
		}
		d.Edges = append(d.Edges, [5]num{num(e.From), num(e.To), num(e.Kind), back, 0})
		kinds = append(kinds, []string{e.Kind.String()})
	}
	for k, ks := range kinds {
		if len(ks) > 1 {
			if d.EdgeKinds == nil {
				d.EdgeKinds = map[int]string{}
			}
			d.EdgeKinds[k] = strings.Join(ks, "/")
		}
	}
	cut := map[int32]bool{}
	for _, n := range d.Cuts {
		cut[int32(n)] = true
	}
	cross := func(from, to int32, c uint64) {
		if k, ok := edgeOf[pair{from, to}]; ok {
			d.Edges[k][4] = num(satAdd(uint64(d.Edges[k][4]), c))
		}
	}
	for _, p := range f.Paths {
		nodes := make([]int, 0, len(p.Blocks))
		for _, b := range p.Blocks {
			n, ok := nodeAt[b.Offset]
			if !ok {
				d.Unmatched++
				n = -1
			} else {
				d.At[n] = b.At
			}
			nodes = append(nodes, n)
		}
		d.Paths = append(d.Paths, [6]any{num(p.ID), num(p.Count), kindIdx[p.Kind], nodes, p.Label, byInput(p)})
		if d.Unmatched > 0 {
			continue
		}
		for _, n := range nodes {
			entries[n] = satAdd(entries[n], p.Count)
		}
		if strings.HasPrefix(p.Kind, "entry-") {
			cross(cfg.Entry, int32(nodes[0]), p.Count)
		}
		for i := 1; i < len(nodes); i++ {
			cross(int32(nodes[i-1]), int32(nodes[i]), p.Count)
		}
		last := int32(nodes[len(nodes)-1])
		if strings.HasSuffix(p.Kind, "-exit") {
			cross(last, cfg.Exit, p.Count)
			continue
		}
		// A path ends at a back edge (or an edge into a cut block) without
		// saying which; it is known only when the block has one such edge.
		var only int32 = -1
		n := 0
		for _, ei := range g.Blocks[last].Out {
			e := g.Edges[ei]
			if e.Back || cut[e.To] {
				if n == 0 || e.To != only {
					n++
				}
				only = e.To
			}
		}
		if n == 1 {
			cross(last, only, p.Count)
		}
	}
	if len(f.Paths) == 0 {
		d.At = nil
	}
	for n, b := range g.Blocks {
		d.Blocks = append(d.Blocks, [4]num{num(b.Start), num(b.End), num(b.Instrs), num(entries[n])})
	}
	if srcs.m != nil {
		d.Lines = srcs.blockLines(code, g)
	}
	return d
}

func satAdd(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

// byInput is the path's runs and counts as one flat list, nil for a
// profile of one run.
func byInput(p report.Path) []num {
	if len(p.ByInput) == 0 {
		return nil
	}
	out := make([]num, 0, 2*len(p.ByInput))
	for _, c := range p.ByInput {
		out = append(out, num(c.Input), num(c.Count))
	}
	return out
}
