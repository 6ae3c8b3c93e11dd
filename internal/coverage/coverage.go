// Package coverage turns a path profile into the line, branch and function
// coverage that lcov and Cobertura readers know: each path's id is
// regenerated into the edges it crosses, so blocks' entry counts and
// branches' taken counts are exact, and DWARF places both in the source.
// Path coverage has no record in those formats; it goes into comments.
package coverage

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/srcmap"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// Coverage is a profile's coverage by source file.
type Coverage struct {
	Files []*File // by name
	// Inputs, for a profile of several inputs (a merge, a runs file, a
	// test binary's tests), are each input's own coverage, in the
	// profile's order: what the paths' attributions to it say.
	Inputs []Input
	// Warnings say what was left out and why.
	Warnings []string
}

// Input is the coverage of one of a profile's inputs.
type Input struct {
	Label string
	Files []*File
}

// File is one source file's coverage.
type File struct {
	// Name is what DWARF names the file; Path is where it was found (the
	// name when no roots were given).
	Name, Path string
	Funcs      []*Func     // by line, then name
	Lines      []Line      // by number
	Branches   []Branch    // by line, block, branch
	lineAt     map[int]int // line number -> index in Lines, while building
	blocks     int         // blocks with branches numbered so far
}

// Func is one function, placed at the line of its first instruction.
type Func struct {
	Name string
	Line int
	// Calls is how many paths started at its entry: calls that ended
	// before their first path did (a trap, the program's exit) are not
	// counted.
	Calls uint64
	// Executions, Paths and PossiblePaths are its path totals.
	Executions    uint64
	Paths         int
	PossiblePaths string
	// Lines are the numbers of its lines in File, ascending.
	Lines []int
}

// Line is how often a line ran: the most times one of the blocks with an
// instruction on it was entered.
type Line struct {
	Number int
	Count  uint64
}

// Branch is one edge out of a block with several: Block numbers the block
// within its file, Branch the edge's place among the block's edges. Ran
// is false when the block never ran.
type Branch struct {
	Line, Block, Branch int
	Taken               uint64
	Ran                 bool

	// from and to are the file offsets of the block and of the edge's
	// target (-1 for the function's exit), back marks an edge that ends a
	// path, and partial a block whose back edges are left out: what the
	// tests recount from the paths' blocks.
	from, to      int
	back, partial bool
}

// Options choose what Build keeps.
type Options struct {
	// Roots, when set, are where source files are looked for: files not
	// found there are left out (a warning names them), and Path is where
	// each was found. Tools that render coverage read the sources.
	Roots *srcmap.Roots
}

// Build computes p's coverage from module, the module profiled, which
// must have DWARF line tables.
func Build(p *profile.Profile, module []byte, opt Options) (*Coverage, error) {
	if p.Module.SHA256 != "" {
		sum := sha256.Sum256(module)
		if got := hex.EncodeToString(sum[:]); got != p.Module.SHA256 {
			return nil, fmt.Errorf("the module is not the one profiled: its sha256 is %s, the profile's %s", got, p.Module.SHA256)
		}
	}
	m, err := wasm.Decode(module)
	if err != nil {
		return nil, err
	}
	src, err := srcmap.FromModule(m)
	if err != nil {
		return nil, err
	}
	if src == nil {
		return nil, errors.New("the module has no DWARF line tables: line and branch coverage need source lines")
	}
	b := &builder{m: m, src: src, rd: wasm.NewReader(nil, 0, "code"), roots: opt.Roots,
		opt: cfg.Options{NoReturn: cfg.NoReturnImports(m, cfg.ProcExit)}, numbered: map[uint32]*numbered{}}
	c := &Coverage{}
	if c.Files, err = b.view(p, func(pp *profile.Path) uint64 { return pp.Count }); err != nil {
		return nil, err
	}
	c.Warnings = b.warnings()
	if len(p.Inputs) > 1 {
		for i, in := range p.Inputs {
			files, err := b.view(p, func(pp *profile.Path) uint64 {
				for _, ic := range pp.ByInput {
					if ic.Input == i {
						return ic.Count
					}
				}
				return 0
			})
			if err != nil {
				return nil, err
			}
			c.Inputs = append(c.Inputs, Input{Label: in.Label, Files: files})
		}
	}
	return c, nil
}

// view builds the files' coverage with each path counted count times.
// The first view notes what it leaves out, for warnings.
func (b *builder) view(p *profile.Profile, count func(*profile.Path) uint64) ([]*File, error) {
	first := b.files == nil
	b.files = map[string]*File{}
	m := b.m
	for _, pf := range p.Functions {
		if pf.Index < m.NumImportedFuncs || pf.Index >= m.NumFuncs() {
			return nil, fmt.Errorf("function %d is not a function defined in the module", pf.Index)
		}
		name := cmp.Or(m.FuncName(pf.Index), pf.Name, fmt.Sprintf("func[%d]", pf.Index))
		if pf.Status != profile.StatusProfiled {
			if first {
				b.skipped = append(b.skipped, name)
			}
			continue
		}
		if err := b.function(pf, name, count, first); err != nil {
			var nf numberingError
			if errors.As(err, &nf) {
				if first {
					b.failed = append(b.failed, fmt.Sprintf("%s (%v)", name, nf.err))
				}
				continue
			}
			return nil, fmt.Errorf("function %d (%s): %w", pf.Index, name, err)
		}
	}
	var out []*File
	for _, name := range slices.Sorted(maps.Keys(b.files)) {
		f := b.files[name]
		f.Path = name
		if b.roots != nil {
			shown, _, _ := b.roots.Find(name)
			if shown == "" {
				if first {
					b.notFound = append(b.notFound, name)
				}
				continue
			}
			f.Path = shown
		}
		f.finish()
		out = append(out, f)
	}
	return out, nil
}

func (b *builder) warnings() []string {
	var w []string
	if len(b.skipped) > 0 {
		w = append(w, fmt.Sprintf("%d functions not profiled are left out: %s", len(b.skipped), srcmap.Some(b.skipped)))
	}
	if len(b.failed) > 0 {
		w = append(w, fmt.Sprintf("%d functions could not be numbered and are left out: %s", len(b.failed), srcmap.Some(b.failed)))
	}
	if b.ambiguous > 0 {
		w = append(w, fmt.Sprintf("%d blocks leave by one of several back edges, which their paths do not tell apart: those edges' branches are left out", b.ambiguous))
	}
	if len(b.notFound) > 0 {
		w = append(w, fmt.Sprintf("%d source files are left out, not found inside the directories sources are read from (%s adds one): %s",
			len(b.notFound), srcmap.SourceFlag, srcmap.Some(b.notFound)))
	}
	return w
}

type builder struct {
	m        *wasm.Module
	src      *srcmap.Map
	rd       *wasm.Reader
	opt      cfg.Options
	roots    *srcmap.Roots
	numbered map[uint32]*numbered
	files    map[string]*File // of the view being built
	// What the first view left out.
	skipped, failed, notFound []string
	ambiguous                 int
}

// numbered is a function's numbering and its paths' edges, kept for the
// views after the first.
type numbered struct {
	nf    *numbering.Function
	edges [][]int32 // per path, in the profile's order
}

// numberingError is a function the numbering cannot handle: it is left
// out, not the whole coverage.
type numberingError struct{ err error }

func (e numberingError) Error() string { return e.err.Error() }

func (b *builder) file(name string) *File {
	f := b.files[name]
	if f == nil {
		f = &File{Name: name, lineAt: map[int]int{}}
		b.files[name] = f
	}
	return f
}

// line records that line of file has code that ran count times (at most).
func (f *File) line(n int, count uint64) {
	if i, ok := f.lineAt[n]; ok {
		f.Lines[i].Count = max(f.Lines[i].Count, count)
		return
	}
	f.lineAt[n] = len(f.Lines)
	f.Lines = append(f.Lines, Line{Number: n, Count: count})
}

func (f *File) finish() {
	slices.SortFunc(f.Lines, func(a, b Line) int { return cmp.Compare(a.Number, b.Number) })
	slices.SortFunc(f.Branches, func(a, b Branch) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Block, b.Block), cmp.Compare(a.Branch, b.Branch))
	})
	slices.SortFunc(f.Funcs, func(a, b *Func) int { return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Name, b.Name)) })
	f.lineAt = nil
}

// function adds one profiled function: its blocks' entries and its edges'
// crossings from its paths, then its lines and branches.
func (b *builder) function(pf profile.Function, name string, count func(*profile.Path) uint64, first bool) error {
	def := int(pf.Index - b.m.NumImportedFuncs)
	num := b.numbered[pf.Index]
	if num == nil {
		nf, err := numbering.NumberFunction(b.m, def, b.opt)
		if err != nil {
			return numberingError{err}
		}
		num = &numbered{nf: nf}
		for _, pp := range pf.Paths {
			edges, err := nf.Path(pp.ID, pp.Blocks)
			if err != nil {
				return err
			}
			num.edges = append(num.edges, edges)
		}
		b.numbered[pf.Index] = num
	}
	nf := num.nf
	g, d := nf.Graph, nf.DAG
	cut := map[int32]bool{}
	for _, v := range nf.Cuts {
		cut[v] = true
	}
	entries := make([]uint64, len(g.Blocks))
	cross := make([]uint64, len(g.Edges))
	unknown := make([]bool, len(g.Blocks)) // left by a back edge not named
	fn := &Func{Name: name, PossiblePaths: pf.PossiblePaths}
	for i := range pf.Paths {
		pp := &pf.Paths[i]
		c := count(pp)
		if c == 0 {
			continue
		}
		fn.Paths++
		fn.Executions = satAdd(fn.Executions, c)
		for _, e := range num.edges[i] {
			de := &d.Edges[e]
			if de.To != cfg.Exit {
				entries[de.To] = satAdd(entries[de.To], c)
			}
			switch {
			case de.Orig >= 0:
				cross[de.Orig] = satAdd(cross[de.Orig], c)
			case de.Kind == cfg.EdgeDummyExit && len(de.Back) == 1:
				cross[de.Back[0]] = satAdd(cross[de.Back[0]], c)
			case de.Kind == cfg.EdgeDummyExit:
				unknown[de.From] = true
			}
		}
		if pp.Kind == profile.KindEntryExit || pp.Kind == profile.KindEntryBack {
			fn.Calls = satAdd(fn.Calls, c)
		}
	}

	code := &b.m.Code[def]
	var in wasm.Instr
	lines := map[*File]map[int]bool{}
	for n := cfg.Exit + 1; n < len(g.Blocks); n++ {
		blk := &g.Blocks[n]
		b.rd.Reset(code.Body, code.OrigOff)
		b.rd.Seek(int(blk.Start))
		for b.rd.Pos() < int(blk.End) && b.rd.Next(&in) == nil {
			file, line, ok := b.src.Attributed(code.OrigOff + int(in.Off))
			if !ok {
				continue
			}
			f := b.file(file)
			f.line(line, entries[n])
			if lines[f] == nil {
				lines[f] = map[int]bool{}
			}
			lines[f][line] = true
		}
		if len(blk.Out) < 2 {
			continue
		}
		if unknown[n] && first {
			b.ambiguous++
		}
		ids := map[*File]int{}
		for i, ei := range blk.Out {
			e := &g.Edges[ei]
			file, line, ok := b.src.Lookup(code.OrigOff + int(e.Instr))
			if !ok {
				continue
			}
			f := b.file(file)
			// Numbered before any is left out: every view numbers alike.
			id, ok := ids[f]
			if !ok {
				id, f.blocks = f.blocks, f.blocks+1
				ids[f] = id
			}
			if unknown[n] && (e.Cuts() || cut[e.To]) {
				continue
			}
			to := -1
			if e.To != cfg.Exit {
				to = code.OrigOff + int(g.Blocks[e.To].Start)
			}
			f.Branches = append(f.Branches, Branch{Line: line, Block: id, Branch: i, Taken: cross[ei], Ran: entries[n] > 0,
				from: code.OrigOff + int(blk.Start), to: to, back: e.Cuts() || cut[e.To], partial: unknown[n]})
		}
	}
	// The function goes in the file of its first instruction.
	file, line, ok := b.src.Lookup(code.OrigOff + int(code.ExprOff))
	if !ok {
		return nil
	}
	f := b.file(file)
	fn.Line = line
	fn.Lines = slices.Sorted(maps.Keys(lines[f]))
	f.Funcs = append(f.Funcs, fn)
	return nil
}

func satAdd(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

// clean makes a name fit on one record line of either format: no control
// characters, and no commas, which lcov uses to separate fields.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == ',' {
			return '_'
		}
		return r
	}, s)
}
