// Package instrument turns a module into its Ball-Larus instrumented copy:
// a path register per function, probes on the edges the numbering chose,
// and counts where paths end. It also turns the counts read back after a
// run into a profile, regenerating each path.
//
// The program's data and heap layout are untouched, as is everything the
// program can see of its memory: the counters live either in the program's
// memory above what it sees, counted by inline adds (counters.Embed), or
// in a counter module that the instrumented module imports and calls
// (pathprof.count and friends; package counters).
//
// InstrumentSegments builds package osp's sampling copy instead (the
// segments files): the same body scan, numbering and probe placement
// (place.go), with code of osp's where paths end in place of counts.
package instrument

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/counters"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// Options tune instrumentation.
type Options struct {
	// NoReturn lists imports (module, name) whose call never returns; a
	// path ends before such a call. Default: WASI's proc_exit.
	NoReturn [][2]string
	// Counters tunes the counter storage.
	Counters counters.Options
	// CountHits makes the copy count its own probe hits at run time in an
	// exported mutable i64 global named HitsGlobal: every instrumentation
	// sequence also adds one to it. It checks the hit counts computed from
	// profiles; it is not for measuring time.
	CountHits bool
	// Mode chooses, per function, what this copy profiles; it is called
	// once the function's DAG is known. nil profiles every function with
	// Ball-Larus (the SBL copy): Mode{Kind: partition.BallLarus}.
	Mode func(f *Func) Mode
	// NoLoopCounts turns off local loop counters (see loops.go): every
	// completed path is then counted in memory as it ends.
	NoLoopCounts bool
	// SeparateCounters keeps the counters in the counter module, which
	// the copy imports and calls, even where they could live in the
	// program's memory (counters.Embed).
	SeparateCounters bool
}

// defaultNoReturn is Options.NoReturn's default: WASI's proc_exit.
var defaultNoReturn = [][2]string{{"wasi_snapshot_preview1", "proc_exit"}}

// HitsGlobal is the export name of the hit counter of Options.CountHits.
const HitsGlobal = "pathprof_hits"

// Mode is a function's instrumentation in one copy: what the copy's plan
// says of it (Kind), with what that needs.
type Mode struct {
	Kind partition.Mode
	// Interesting marks the DAG edges whose paths this copy counts
	// (Selective only).
	Interesting []bool
	// Freq optionally holds a measured frequency per DAG edge: the
	// increments then go on the edges that ran least
	// (numbering.ProfileWeights), for Ball-Larus where StaticWeights
	// would guess, for Selective where PSPP's labels are not 0. Path ids
	// do not change, only where the probes sit.
	Freq []float64
	// Slices, at least 2, shares the function's calls out among copies
	// (Kind Sliced only: every path, in some calls): the n-th call (from 1) is in slot
	// n mod Slices, and this copy profiles the calls in Slots; the
	// others run an unprobed copy of the body. Every call runs the test,
	// one sequence, and counts itself in an exported i64 global
	// (CallsExport), which tells the calls apart alike in every copy.
	Slices int
	Slots  []int
	// Loop, when not 0, shares out the iterations of one loop instead of
	// the calls: the loop whose header is Graph block Loop. Its n-th
	// iteration (from 0 at each entry into the loop) is in slot
	// n mod Slices. The loop's body is unrolled Slices times, so the
	// replica that runs an iteration says its slot and no test runs; the
	// copy probes the replicas of its slots only. A path lies in one
	// iteration at most, whose slot's copy counts it; the paths that never
	// enter the loop are slot 0's. See loopslices.go.
	Loop int32
}

// CallsExport is the export name of the call counter of a function whose
// calls are shared out among copies (Mode.Slices), by its index in the
// original module.
func CallsExport(index uint32) string { return CallsPrefix + strconv.FormatUint(uint64(index), 10) }

// CallsPrefix begins the name of every CallsExport.
const CallsPrefix = "pathprof_calls_"

// Func is what instrumentation decided for one defined function.
type Func struct {
	Index  uint32 // in the original module's function index space
	Name   string
	Status profile.Status
	Graph  *cfg.Graph
	DAG    *cfg.DAG
	// Num is the Ball-Larus numbering of DAG: profile path ids are
	// Ball-Larus ids whatever the copy's numbering, so that the copies of
	// a partitioned run and a sequential run name paths alike.
	Num       *numbering.Numbering
	Placement *numbering.Placement // nil when the function has no probes
	Mode      Mode
	// Sel is the PSPP labeling of a Selective function.
	Sel *numbering.Selective
	// Rev is the reverse numbering whose ids a Ball-Larus function counts
	// (nil for other modes): its ids of the paths that end at one back
	// edge are contiguous, which local loop counters need. Profiles name
	// paths by Ball-Larus ids all the same.
	Rev *numbering.Reverse
	// LoopCounters is how many i64 locals count paths of loops without
	// calls (see loops.go).
	LoopCounters int
	// Blockwise marks a Segments function that could not be numbered:
	// every block is a path of its own (see Segments).
	Blockwise bool
	// Cuts are the blocks at which the DAG was cut to fit 63 bits (for
	// Segments, IDBits).
	Cuts []int32
	// origOff is the original body's file offset and bodyMap the edited
	// body's offset map (before probes were added: the graph's offsets).
	origOff int
	bodyMap *wasm.OffsetMap
	// seqs holds, per Graph edge, how many instrumentation sequences run
	// when the edge is taken: the probe hits of the edge.
	seqs []uint8
	// loop holds the rest of them where a loop's iterations are shared
	// out (Mode.Loop).
	loop *loopSlices

	// Between planning and emitting: the body's structure, the probes per
	// Graph edge and the scratch locals.
	scan           *scan
	ops            [][]numbering.Op
	reg, cond, idx uint32
}

// BlockOffset returns the original file offset of block b's first instruction.
func (f *Func) BlockOffset(b int32) int {
	return f.origOff + int(f.bodyMap.Orig(f.Graph.Blocks[b].Start))
}

// InstrOffset returns the original file offset of the instruction at body
// offset off (a Graph edge's Instr).
func (f *Func) InstrOffset(off uint32) int {
	return f.origOff + int(f.bodyMap.Orig(off))
}

// Result is an instrumented module with what is needed to read its counts.
type Result struct {
	Module []byte // the instrumented module
	// Counters is the counter module the instrumented module imports, or
	// nil when the counters live in the program's memory.
	Counters []byte
	Layout   *counters.Layout
	Funcs    []*Func // one per defined function, in order
	// CodeOffset is the original module's code section payload offset.
	CodeOffset int
}

// Instrument instruments every defined function of the module.
func Instrument(orig []byte, opt Options) (*Result, error) {
	if opt.NoReturn == nil {
		opt.NoReturn = defaultNoReturn
	}
	m, err := wasm.Decode(orig)
	if err != nil {
		return nil, err
	}
	res := &Result{CodeOffset: m.CodePayloadOff}
	numImported := m.NumImportedFuncs
	embed := !opt.SeparateCounters && counters.CanEmbed(m) == ""
	var fns countFns
	if !embed {
		countFn, err := m.AddFuncImports(
			wasm.Import{Module: counters.ModuleName, Name: counters.CountName, Kind: wasm.KindFunc,
				Type: m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI64}})},
			wasm.Import{Module: counters.ModuleName, Name: counters.CountHashName, Kind: wasm.KindFunc,
				Type: m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI32, wasm.ValI64}})},
			wasm.Import{Module: counters.ModuleName, Name: counters.CountNName, Kind: wasm.KindFunc,
				Type: m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI64, wasm.ValI64}})})
		if err != nil {
			return nil, err
		}
		fns = countFns{count: countFn, hash: countFn + 1, countN: countFn + 2}
	}
	shift := m.NumImportedFuncs - numImported
	cfgOpt := cfg.Options{NoReturn: cfg.NoReturnImports(m, opt.NoReturn...)}
	paths := make([]uint64, numImported+uint32(len(m.Code)))
	for i := range m.Code {
		orig := numImported + uint32(i)
		f := &Func{Index: orig, Name: m.FuncName(orig + shift), origOff: m.Code[i].OrigOff}
		res.Funcs = append(res.Funcs, f)
		if err := planFunc(m, i, f, cfgOpt, opt.Mode); err != nil {
			var skip skipError
			if errors.As(err, &skip) {
				f.Status = profile.Skipped(string(skip))
				continue
			}
			return nil, fmt.Errorf("function %d (%s): %w", orig, f.Name, err)
		}
		f.Status = profile.StatusProfiled
		if f.Placement != nil {
			paths[orig] = uint64(f.Placement.NumPaths)
		}
	}
	// The unprobed bodies of sliced functions go before the counters'
	// functions, which Embed numbers now and Finish adds, so that Finish
	// rewrites their memory.size and memory.grow too.
	plain := map[int]uint32{}
	for i, f := range res.Funcs {
		if f.Placement == nil || f.Mode.Kind != partition.Sliced && f.Mode.Slices == 0 {
			continue
		}
		if err := checkSlices(f.Mode); err != nil {
			return nil, fmt.Errorf("function %d (%s): %w", f.Index, f.Name, err)
		}
		if f.Mode.Loop != 0 {
			continue
		}
		plain[i] = m.NumFuncs()
		c := m.Code[i]
		m.Funcs = append(m.Funcs, m.Funcs[i])
		m.Code = append(m.Code, wasm.NewCode(c.Locals, c.Body[c.ExprOff:]))
		m.Touch(wasm.SecFunction)
	}
	// The counter layout needs every function's path count, and the
	// probes need the layout: dense counts add the function's first slot.
	if res.Layout, err = counters.NewLayout(paths, opt.Counters); err != nil {
		return nil, err
	}
	if embed {
		if fns.emb, err = res.Layout.Embed(m); err != nil {
			// The memory cannot hold the counters as well (near 4
			// GiB): a counter module, from the start.
			opt.SeparateCounters = true
			return Instrument(orig, opt)
		}
		fns.hash = fns.emb.CountHash
	}
	hitsGlobal := int64(-1)
	if opt.CountHits {
		// A defined global appended at the end shifts no existing index.
		hitsGlobal = int64(m.NumImportedGlobals) + int64(len(m.Globals))
		var init wasm.Asm
		init.I64(0).Op(wasm.OpEnd)
		m.Globals = append(m.Globals, wasm.Global{GlobalType: wasm.GlobalType{Type: wasm.ValI64, Mutable: true}, Init: init.B})
		m.Exports = append(m.Exports, wasm.Export{Name: HitsGlobal, Kind: wasm.KindGlobal, Index: uint32(hitsGlobal)})
		m.Touch(wasm.SecGlobal)
		m.Touch(wasm.SecExport)
	}
	for i, f := range res.Funcs {
		if f.Placement == nil {
			continue
		}
		if err := emitFunc(m, &m.Code[i], f, res.Layout, fns, hitsGlobal, !opt.NoLoopCounts); err != nil {
			return nil, fmt.Errorf("function %d (%s): %w", f.Index, f.Name, err)
		}
		if p, ok := plain[i]; ok {
			if err := emitSlices(m, i, f, p, hitsGlobal); err != nil {
				return nil, fmt.Errorf("function %d (%s): %w", f.Index, f.Name, err)
			}
		}
	}
	m.Touch(wasm.SecCode)
	if fns.emb != nil {
		if err := fns.emb.Finish(m); err != nil {
			return nil, err
		}
	}
	if res.Module, err = m.Encode(); err != nil {
		return nil, err
	}
	if fns.emb == nil {
		if res.Counters, err = res.Layout.Module(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// checkSlices validates a sliced mode.
func checkSlices(md Mode) error {
	switch {
	case md.Kind != partition.Sliced:
		return fmt.Errorf("slices of a %v function", md.Kind)
	case md.Slices < 2 || md.Slices > 32:
		return fmt.Errorf("%d slots (2 to 32)", md.Slices)
	case len(md.Slots) == 0:
		return errors.New("no slots")
	}
	for j, x := range md.Slots {
		if x < 0 || x >= md.Slices || j > 0 && md.Slots[j-1] >= x {
			return fmt.Errorf("bad slots %v of %d", md.Slots, md.Slices)
		}
	}
	return nil
}

// emitSlices puts the test of a sliced function at the start of its body
// (defined function def, probes already in place): count the call in the
// function's global, and unless its slot is this copy's, call the unprobed
// body (function plain) and return what it returns.
func emitSlices(m *wasm.Module, def int, f *Func, plain uint32, hitsGlobal int64) error {
	ft, ok := m.FuncType(m.NumImportedFuncs + uint32(def))
	if !ok {
		return errors.New("no type")
	}
	calls := m.NumImportedGlobals + uint32(len(m.Globals))
	var init wasm.Asm
	init.I64(0).Op(wasm.OpEnd)
	m.Globals = append(m.Globals, wasm.Global{GlobalType: wasm.GlobalType{Type: wasm.ValI64, Mutable: true}, Init: init.B})
	m.Exports = append(m.Exports, wasm.Export{Name: CallsExport(f.Index), Kind: wasm.KindGlobal, Index: calls})
	m.Touch(wasm.SecGlobal)
	m.Touch(wasm.SecExport)
	var mask uint32
	for _, x := range f.Mode.Slots {
		mask |= 1 << x
	}
	var a wasm.Asm
	a.Idx(wasm.OpGlobalGet, calls).I64(1).Op(wasm.OpI64Add).Idx(wasm.OpGlobalSet, calls)
	if hitsGlobal >= 0 {
		a.Idx(wasm.OpGlobalGet, uint32(hitsGlobal)).I64(1).Op(wasm.OpI64Add).Idx(wasm.OpGlobalSet, uint32(hitsGlobal))
	}
	a.I32(int32(mask)).Idx(wasm.OpGlobalGet, calls).I64(int64(f.Mode.Slices)).Op(wasm.OpI64RemU).Op(wasm.OpI32Wrap).
		Op(wasm.OpI32ShrU).I32(1).Op(wasm.OpI32And).Op(wasm.OpI32Eqz).Block(wasm.OpIf)
	for j := range ft.Params {
		a.Idx(wasm.OpLocalGet, uint32(j))
	}
	a.Idx(wasm.OpCall, plain).Op(wasm.OpReturn).Op(wasm.OpEnd)
	c := &m.Code[def]
	return c.Splice([]wasm.Edit{{Off: c.ExprOff, Ins: a.B}})
}

type skipError string

func (e skipError) Error() string { return string(e) }

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
}

func scanBody(m *wasm.Module, c *wasm.Code, results []wasm.ValType) (*scan, error) {
	s := &scan{ifElse: map[uint32]int64{}, ifEnd: map[uint32]uint32{}, instrLen: map[uint32]uint32{}, loops: map[uint32]loopAt{},
		brTypes: map[uint32][]wasm.ValType{}, brTable: map[uint32][]uint32{}, voidBr: map[uint32]uint32{}}
	type frame struct {
		op       wasm.Op
		off, len uint32
		bt       wasm.BlockType
		label    []wasm.ValType
		params   bool
	}
	stack := []frame{{op: wasm.OpBlock, label: results}}
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
			stack = append(stack, frame{op: in.Op, off: in.Off, len: in.Len, bt: in.Block, label: label, params: len(p) > 0})
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

// shift moves every offset by d: the locals declarations before the
// instructions changed size.
func (s *scan) shift(d int64) {
	if d == 0 {
		return
	}
	mv := func(o uint32) uint32 { return uint32(int64(o) + d) }
	ifElse := make(map[uint32]int64, len(s.ifElse))
	for k, v := range s.ifElse {
		if v >= 0 {
			v += d
		}
		ifElse[mv(k)] = v
	}
	ifEnd := make(map[uint32]uint32, len(s.ifEnd))
	for k, v := range s.ifEnd {
		ifEnd[mv(k)] = mv(v)
	}
	instrLen := make(map[uint32]uint32, len(s.instrLen))
	for k, v := range s.instrLen {
		instrLen[mv(k)] = v
	}
	brTypes := make(map[uint32][]wasm.ValType, len(s.brTypes))
	for k, v := range s.brTypes {
		brTypes[mv(k)] = v
	}
	brTable := make(map[uint32][]uint32, len(s.brTable))
	for k, v := range s.brTable {
		brTable[mv(k)] = v
	}
	voidBr := make(map[uint32]uint32, len(s.voidBr))
	for k, v := range s.voidBr {
		voidBr[mv(k)] = v
	}
	loops := make(map[uint32]loopAt, len(s.loops))
	for k, v := range s.loops {
		loops[mv(k)] = loopAt{off: mv(v.off), end: mv(v.end), bt: v.bt, params: v.params}
	}
	s.ifElse, s.ifEnd, s.instrLen, s.brTypes, s.brTable, s.voidBr, s.loops = ifElse, ifEnd, instrLen, brTypes, brTable, voidBr, loops
	for i, o := range s.calls {
		s.calls[i] = mv(o)
	}
}

// prepare scans the body of defined function def and adds f's scratch
// locals after its own: the path register (an i64), then i32s i32 locals
// (a saved branch condition, a saved br_table index, then the copy's
// own), then extra. It returns the function's type and the body's local
// declarations.
func (f *Func) prepare(m *wasm.Module, def int, i32s uint32, extra ...wasm.LocalDecl) (wasm.FuncType, []wasm.LocalDecl, error) {
	c := &m.Code[def]
	ft, ok := m.FuncType(m.NumImportedFuncs + uint32(def))
	if !ok {
		return ft, nil, fmt.Errorf("no type")
	}
	s, err := scanBody(m, c, ft.Results)
	if err != nil {
		return ft, nil, err
	}
	base := uint32(uint64(len(ft.Params)) + c.NumLocals())
	locals := append(append([]wasm.LocalDecl(nil), c.Locals...),
		wasm.LocalDecl{Count: 1, Type: wasm.ValI64}, wasm.LocalDecl{Count: i32s, Type: wasm.ValI32})
	locals = append(locals, extra...)
	oldExpr := c.ExprOff
	if err := c.SetLocals(locals); err != nil {
		return ft, nil, err
	}
	s.shift(int64(c.ExprOff) - int64(oldExpr))
	f.scan, f.reg, f.cond, f.idx = s, base, base+1, base+2
	return ft, locals, nil
}

// planFunc adds the scratch locals, builds the graph and chooses the
// probes of a counting copy.
func planFunc(m *wasm.Module, def int, f *Func, cfgOpt cfg.Options, choose func(*Func) Mode) error {
	// The third scratch i32, idx+1, is a counter's address.
	if _, _, err := f.prepare(m, def, 3); err != nil {
		return err
	}
	if err := f.number(&m.Code[def], cfgOpt, numbering.MaxPaths); err != nil {
		return err
	}
	var err error
	d := f.DAG
	f.Mode = Mode{Kind: partition.BallLarus}
	if choose != nil {
		f.Mode = choose(f)
	}
	var plan *numbering.Placement
	switch f.Mode.Kind {
	case partition.None:
		return nil
	case partition.Selective:
		if len(f.Mode.Interesting) != len(d.Edges) {
			return fmt.Errorf("selective mode with %d edge marks for %d DAG edges", len(f.Mode.Interesting), len(d.Edges))
		}
		if f.Sel, err = numbering.PSPP(d, f.Mode.Interesting); err != nil {
			return err
		}
		if plan, err = numbering.PlaceSelectiveFreq(d, f.Sel, f.Mode.Freq); err != nil {
			return err
		}
	case partition.BallLarus, partition.Sliced:
		w, err := numbering.WeightsFor(d, f.Mode.Freq)
		if err != nil {
			return err
		}
		if f.Rev, err = numbering.NumberReverse(d, f.Num); err != nil {
			return err
		}
		inc, err := numbering.Chords(d, f.Rev.Forward(), w)
		if err != nil {
			return err
		}
		// Counts stay where paths end, so a path cut short by a trap is
		// not counted.
		if plan, err = numbering.Place(d, f.Rev.Forward(), inc, numbering.PlaceOptions{NoCountFolding: true}); err != nil {
			return err
		}
	default:
		return fmt.Errorf("mode %v", f.Mode.Kind)
	}
	f.setPlacement(plan)
	return nil
}

func (f *Func) setPlacement(plan *numbering.Placement) {
	f.Placement = plan
	f.ops = make([][]numbering.Op, len(f.Graph.Edges))
	for _, p := range plan.Probes {
		f.ops[p.Edge] = append(f.ops[p.Edge], p.Op)
	}
}

// number builds f's graph and DAG, cut to at most limit paths, and
// numbers its paths.
func (f *Func) number(c *wasm.Code, cfgOpt cfg.Options, limit int64) error {
	g, err := cfg.BuildBody(c, cfgOpt)
	if err != nil {
		return err
	}
	f.Graph, f.bodyMap, f.Cuts = g, c.Map, nil
	d := g.DAG()
	n, err := numbering.Number(d)
	var over *numbering.OverflowError
	if errors.As(err, &over) || err == nil && n.Paths() > limit {
		cr, cerr := numbering.CutTo(d, limit)
		if cerr != nil {
			return cerr
		}
		d, f.Cuts = cr.DAG, cr.Vertices
		n, err = numbering.Number(d)
	}
	if err != nil {
		return err
	}
	f.DAG, f.Num = d, n
	return nil
}

// variant is one placement of probes in a body: the function's own, or,
// where a loop's iterations are shared out (Mode.Loop), that of the code
// around the loop and those of the loop's replicas.
type variant struct {
	ops [][]numbering.Op // per Graph edge
	// extra holds, per Graph edge, code that runs after its probes in
	// the same sequence (nil: none).
	extra [][]byte
	// guard, when not negative, is an i32 local that every count
	// tests: the path is counted only when it is not 0.
	guard int64
	// seqs is set by placement: per Graph edge, the sequences run when
	// the edge is taken.
	seqs []uint8
}

// emitFunc inserts the probes chosen by planFunc.
func emitFunc(m *wasm.Module, c *wasm.Code, f *Func, layout *counters.Layout, fns countFns, hitsGlobal int64, useLoopCounts bool) error {
	reg, idx := f.reg, f.idx
	loopSliced := f.Mode.Loop != 0
	dense := layout.Funcs[f.Index].Kind == counters.KindDense
	slot := layout.Slot(f.Index)
	var lc *loopCounts
	if useLoopCounts && dense && f.Rev != nil && !loopSliced {
		lc = planLoopCounts(f, idx+2, slot, func(a *wasm.Asm, slot int64, l uint32) {
			fns.add(a, slot, idx+1, func() { a.Idx(wasm.OpLocalGet, l) })
		})
		if lc != nil {
			f.LoopCounters = int(lc.total)
		}
	}
	// A hashed function whose counters are in the program's memory
	// keeps the path id of a count in a local of its own, the last.
	hashP := int64(-1)
	if !dense && fns.emb != nil {
		hashP = int64(idx + 2)
	}
	// memCount appends a count op in memory (or a counter module).
	memCount := func(a *wasm.Asm, o numbering.Op) {
		push := func() {
			if o.Kind == numbering.CountConst {
				a.I64(o.Value)
				return
			}
			a.Idx(wasm.OpLocalGet, reg)
			if o.Value != 0 {
				a.AddI64(o.Value)
			}
		}
		switch {
		case dense && o.Kind == numbering.CountConst:
			fns.add(a, o.Value+slot, idx+1, nil)
		case dense:
			a.Idx(wasm.OpLocalGet, reg)
			fns.countID(a, slot, o.Value, idx+1)
		case hashP >= 0:
			push()
			a.Idx(wasm.OpLocalSet, uint32(hashP))
			fns.emb.HashCount(a, f.Index, uint32(hashP), idx+1)
		default:
			a.I32(int32(f.Index))
			push()
			a.Idx(wasm.OpCall, fns.hash)
		}
	}
	// hit adds the run-time hit count of one sequence, when asked for.
	hit := func(a *wasm.Asm) {
		if hitsGlobal >= 0 {
			a.Idx(wasm.OpGlobalGet, uint32(hitsGlobal)).I64(1).Op(wasm.OpI64Add).Idx(wasm.OpGlobalSet, uint32(hitsGlobal))
		}
	}
	// place returns the edits that put a variant's probes in the body,
	// ordered for Splice.
	place := func(v *variant) ([]wasm.Edit, error) {
		p := &placer{m: m, c: c, f: f, ops: v.ops, hit: hit}
		p.has = func(e int32) bool {
			return len(v.ops[e]) > 0 || lc.flushes(e) || v.extra != nil && len(v.extra[e]) > 0
		}
		p.plain = func(e int32) bool { return !lc.flushes(e) && (v.extra == nil || len(v.extra[e]) == 0) }
		p.emit = func(a *wasm.Asm, e int32, back int64) {
			if !p.has(e) {
				return
			}
			hit(a)
			for i, o := range v.ops[e] {
				if i == 0 && lc.counts(e) {
					lc.emitCount(a, e, o, reg)
					continue
				}
				switch o.Kind {
				case numbering.Init:
					a.I64(o.Value).Idx(wasm.OpLocalSet, reg)
				case numbering.Add:
					a.Idx(wasm.OpLocalGet, reg).AddI64(o.Value).Idx(wasm.OpLocalSet, reg)
				case numbering.Count, numbering.CountConst:
					if v.guard >= 0 {
						a.Idx(wasm.OpLocalGet, uint32(v.guard)).Block(wasm.OpIf)
						memCount(a, o)
						a.Op(wasm.OpEnd)
					} else {
						memCount(a, o)
					}
				}
			}
			lc.emitFlush(a, e)
			if v.extra != nil {
				a.B = append(a.B, v.extra[e]...)
			}
		}
		list, err := p.place()
		v.seqs = p.seqs
		return list, err
	}
	// The loop counters, a hashed count's path id and the flag of a
	// function whose loop is shared out are declared last, after every
	// other local, so that the indices used above hold.
	var more []wasm.LocalDecl
	if hashP >= 0 {
		more = append(more, wasm.LocalDecl{Count: 1, Type: wasm.ValI64})
	}
	if loopSliced {
		flag := idx + 2 + uint32(len(more))
		more = append(more, wasm.LocalDecl{Count: 1, Type: wasm.ValI32})
		if err := emitLoopSlices(m, c, f, place, hit, flag); err != nil {
			return err
		}
	} else {
		v := &variant{ops: f.ops, guard: -1}
		list, err := place(v)
		if err != nil {
			return err
		}
		f.seqs = v.seqs
		if err := c.Splice(list); err != nil {
			return err
		}
	}
	if more != nil {
		return c.SetLocals(append(append([]wasm.LocalDecl(nil), c.Locals...), more...))
	}
	return lc.declare(c)
}

// countFns are the counter module's functions as the instrumented module
// imports them, or, with emb, the counters in the program's memory and the
// function counting hashed paths.
type countFns struct {
	count, hash, countN uint32
	emb                 *counters.Embedding
}

// countID appends the count of dense path id (the i64 on the stack) plus
// v, the function's first slot being slot; addr is a scratch i32.
func (fns countFns) countID(a *wasm.Asm, slot, v int64, addr uint32) {
	if fns.emb != nil {
		// v goes into the store's offset with the slot when their sum
		// is not negative (offsets are unsigned), and when the i32
		// address 8·id + Base cannot wrap below 0 without it: the id
		// on the stack is the path's minus v, so as low as -v (a
		// module without memory has its area at 0).
		if slot+v >= 0 && (v <= 0 || 8*v <= int64(fns.emb.Start())) {
			slot, v = slot+v, 0
		}
		if v != 0 {
			a.AddI64(v)
		}
		fns.emb.AddOne(a, slot, addr)
		return
	}
	if v += slot; v != 0 {
		a.AddI64(v)
	}
	a.Idx(wasm.OpCall, fns.count)
}

// add appends code adding what push pushes (an i64; nil: one) to the
// dense counter at slot; addr is a scratch i32.
func (fns countFns) add(a *wasm.Asm, slot int64, addr uint32, push func()) {
	switch {
	case fns.emb != nil:
		if push == nil {
			push = func() { a.I64(1) }
		}
		fns.emb.AddConst(a, slot, addr, push)
	case push == nil:
		a.I64(slot).Idx(wasm.OpCall, fns.count)
	default:
		a.I64(slot)
		push()
		a.Idx(wasm.OpCall, fns.countN)
	}
}
