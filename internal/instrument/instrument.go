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
	"sync"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/counters"
	"github.com/pathprof/pathprof/internal/parallel"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/srcmap"
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
	// Analysis, if set, is an earlier result of Instrument on the same
	// module with the same options but Mode: each function's graph, DAG
	// and numbering, which the mode does not change, are taken from it
	// instead of built again, and shared with it. The copies of a plan
	// then hold one analysis between them, not one each. Such a copy,
	// as any result, keeps only what reading its counts needs: a
	// profiled function's body structure is dropped once emitted (so
	// not CanShareLoop).
	Analysis *Result
}

// defaultNoReturn is Options.NoReturn's default: WASI's proc_exit.
var defaultNoReturn = [][2]string{{"wasi_snapshot_preview1", "proc_exit"}}

// HitsGlobal is the export name of the hit counter of Options.CountHits.
const HitsGlobal = "pathprof_hits"

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
	// FuncShift is how many function imports the copy adds (the counter
	// module's): original function i is the copy's i + FuncShift.
	FuncShift uint32
	// Sizes is what the copy adds to the code section, by kind.
	Sizes Sizes
	// orig is the module instrumented, which a copy made from this
	// result as its analysis need not check again.
	orig []byte
}

// Instrument instruments every defined function of the module.
func Instrument(orig []byte, opt Options) (*Result, error) {
	if opt.NoReturn == nil {
		opt.NoReturn = defaultNoReturn
	}
	decode := wasm.Decode
	if a := opt.Analysis; a != nil && len(a.orig) == len(orig) && len(orig) > 0 && &a.orig[0] == &orig[0] {
		// The analysis decoded these very bytes and checked them.
		decode = wasm.DecodeChecked
	}
	m, err := decode(orig)
	if err != nil {
		return nil, err
	}
	if err := m.Unsupported(); err != nil {
		return nil, err
	}
	srcmap.AddNames(m)
	res := &Result{CodeOffset: m.CodePayloadOff, orig: orig}
	numImported := m.NumImportedFuncs
	embed := !opt.SeparateCounters && counters.CanEmbed(m) == ""
	var fns countFns
	if !embed {
		countFn, err := m.AddFuncImports(
			wasm.Import{Module: counters.ModuleName, Name: counters.CountName, Kind: wasm.KindFunc,
				Type: m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI64}})},
			wasm.Import{Module: counters.ModuleName, Name: counters.CountHashName, Kind: wasm.KindFunc,
				Type: m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI32, wasm.ValI64, wasm.ValI64}})},
			wasm.Import{Module: counters.ModuleName, Name: counters.CountNName, Kind: wasm.KindFunc,
				Type: m.AddType(wasm.FuncType{Params: []wasm.ValType{wasm.ValI64, wasm.ValI64}})})
		if err != nil {
			return nil, err
		}
		fns = countFns{count: countFn, hash: countFn + 1, countN: countFn + 2}
	}
	shift := m.NumImportedFuncs - numImported
	res.FuncShift = shift
	cfgOpt := cfg.Options{NoReturn: cfg.NoReturnImports(m, opt.NoReturn...)}
	paths := make([]uint64, numImported+uint32(len(m.Code)))
	res.Funcs = make([]*Func, len(m.Code))
	for i := range m.Code {
		orig := numImported + uint32(i)
		res.Funcs[i] = &Func{Index: orig, Name: m.FuncName(orig + shift), origOff: m.Code[i].OrigOff}
	}
	// Functions are planned in parallel: planFunc changes only its own
	// body; the caller's Mode is called by one goroutine at a time.
	choose := opt.Mode
	if choose != nil {
		var mu sync.Mutex
		choose = func(f *Func) Mode {
			mu.Lock()
			defer mu.Unlock()
			return opt.Mode(f)
		}
	}
	origLen, origExpr := make([]int64, len(m.Code)), make([]int64, len(m.Code))
	origPayload := lebLen(uint64(len(m.Code)))
	for i := range m.Code {
		origLen[i], origExpr[i] = int64(len(m.Code[i].Body)), int64(m.Code[i].ExprOff)
		origPayload += lebLen(uint64(origLen[i])) + origLen[i]
	}
	// An analysis made before the counters' imports changed in number
	// (see SeparateCounters below) numbered other bodies.
	from := opt.Analysis
	if from != nil && (from.FuncShift != shift || len(from.Funcs) != len(m.Code)) {
		from = nil
	}
	errs := make([]error, len(m.Code))
	parallel.Each(len(m.Code), func(i int) {
		var a *Func
		if from != nil {
			a = from.Funcs[i]
		}
		errs[i] = planFunc(m, i, res.Funcs[i], a, cfgOpt, choose)
	})
	for i, f := range res.Funcs {
		orig := f.Index
		if err := errs[i]; err != nil {
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
		chooseInlineHash(res.Funcs, res.Layout, origPayload)
	}
	if !opt.NoLoopCounts {
		planAllCountedLoops(m, res.Funcs)
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
	// Functions are emitted in parallel too, each changing only its own
	// body; those that need a new type, or share out a loop's
	// iterations, are emitted afterwards in order, one at a time.
	clear(errs)
	alone := make([]bool, len(res.Funcs))
	parallel.Each(len(res.Funcs), func(i int) {
		f := res.Funcs[i]
		if alone[i] = f.Placement == nil || f.Mode.Loop != 0; alone[i] {
			return
		}
		f.sharedTypes = true
		errs[i] = emitFunc(m, &m.Code[i], f, res.Layout, fns, hitsGlobal, !opt.NoLoopCounts)
		f.sharedTypes = false
		if errors.Is(errs[i], errNewType) {
			alone[i], errs[i] = true, nil
		} else if _, ok := plain[i]; !ok && errs[i] == nil {
			f.emitted()
		}
	})
	for i, f := range res.Funcs {
		if f.Placement == nil {
			continue
		}
		err := errs[i]
		if err == nil && alone[i] {
			err = emitFunc(m, &m.Code[i], f, res.Layout, fns, hitsGlobal, !opt.NoLoopCounts)
		}
		if err != nil {
			return nil, fmt.Errorf("function %d (%s): %w", f.Index, f.Name, err)
		}
		sz := &f.sizes
		if p, ok := plain[i]; ok {
			n := len(m.Code[i].Body)
			if err := emitSlices(m, i, f, p, hitsGlobal); err != nil {
				return nil, fmt.Errorf("function %d (%s): %w", f.Index, f.Name, err)
			}
			sz.Bytes[SizeSliced] += int64(len(m.Code[i].Body) - n)
			sz.Count[SizeSliced]++
		}
		f.emitted()
	}
	for i, f := range res.Funcs {
		sz := &f.sizes
		sz.Bytes[SizeLocals] = int64(m.Code[i].ExprOff) - origExpr[i]
		rest := int64(len(m.Code[i].Body)) - origLen[i] - sz.Total()
		if f.Mode.Loop != 0 {
			// The loop's replicas are copies of the body.
			sz.Bytes[SizeLoopSlices] += rest
		} else {
			sz.Bytes[SizeOther] += rest
		}
		res.Sizes.addAll(sz)
	}
	for _, p := range plain {
		b := m.Code[p-m.NumImportedFuncs].Body
		res.Sizes.Bytes[SizeSliced] += lebLen(uint64(len(b))) + int64(len(b))
	}
	m.Touch(wasm.SecCode)
	if fns.emb != nil {
		n, bodies := len(m.Code), int64(0)
		for i := range m.Code {
			bodies += int64(len(m.Code[i].Body))
		}
		if err := fns.emb.Finish(m); err != nil {
			return nil, err
		}
		for i := range m.Code[:n] {
			bodies -= int64(len(m.Code[i].Body))
		}
		res.Sizes.Bytes[SizeMemory] -= bodies
		for _, c := range m.Code[n:] {
			res.Sizes.Bytes[SizeFuncs] += lebLen(uint64(len(c.Body))) + int64(len(c.Body))
			res.Sizes.Count[SizeFuncs]++
		}
	}
	frame := lebLen(uint64(len(m.Code))) - origPayload
	for i := range m.Code[:len(origLen)] {
		frame += lebLen(uint64(len(m.Code[i].Body))) + origLen[i]
	}
	res.Sizes.Bytes[SizeFrame] = frame
	if res.Module, err = m.Encode(); err != nil {
		return nil, err
	}
	if fns.emb == nil {
		if res.Counters, err = res.Layout.Module(); err != nil {
			return nil, err
		}
	}
	if opt.Analysis != nil {
		for _, f := range res.Funcs {
			f.scan, f.ops = nil, nil
		}
	}
	return res, nil
}
