// OSP's sampling copy, the Segments copy: its options, what End learns
// where a path ends, and InstrumentSegments, which builds it beside the
// counting copy (Instrument) on the same body scan, numbering and probe
// placement.

package instrument

import (
	"errors"
	"fmt"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// Segments describes a copy whose paths report their blocks, not counts:
// the copy that package osp samples block sequences with.
//
// Paths also end before every call that may return (cfg.Options
// SplitCalls), so the blocks a callee runs come between two paths of its
// caller, and a run's block entries are the concatenation of its paths'
// blocks. The path register carries the number of block entries the
// path makes in its low CountBits bits and the path's Ball-Larus id
// above them: chord increments sum both at once, so counting blocks costs
// nothing more than numbering the path. Functions whose paths are too
// many are cut to fit IDBits.
//
// Functions that cannot be numbered (Func.Blockwise: exception handling,
// br_on_null) run End at the start of each of their blocks instead, with
// the one-block path whose id is the block's node.
type Segments struct {
	// NoReturn lists imports (module, name) whose call never returns; a
	// path ends before such a call. Default: WASI's proc_exit.
	NoReturn [][2]string
	// Setup adds what End uses (imports, globals) to the module. It runs
	// once, before any function is changed.
	Setup func(m *wasm.Module) error
	// End appends the code run where a path of function f ends (see
	// EndSite).
	//
	// End is not called where every path that ends there has no blocks
	// (a call's continuation that reaches the next call, a return or a
	// back edge without entering a block): such a path has nothing to
	// count, and in the Lua interpreter of the benchmark suite one path
	// end in seven to eleven is one.
	// It returns the code, if any, to put right after the call that
	// follows (see EndSite.Call).
	End func(a *wasm.Asm, f *Func, s EndSite) (after []byte)
	// Blockwise, when set, picks functions (by original index) to run End
	// block by block although they could be numbered, so that the
	// fallback can be checked on programs that wazero runs.
	Blockwise func(index uint32) bool
	// Thread builds the graphs with cfg.Options.Thread: a jump forward
	// through a dispatch loop (every jump of Go's compiler) continues the
	// path instead of ending it. Functions whose numbering cannot leave
	// the dispatch's arms without probes are built without it.
	Thread bool
	// Finish, if set, runs once after every function has been changed,
	// before the module is encoded: it may add functions of its own.
	Finish func(m *wasm.Module) error
}

// EndSite is where a path ends, for Segments.End.
type EndSite struct {
	// P is the i64 local that holds the ending path's packed value;
	// local P+1 is an i32 that End may use as it likes.
	P uint32
	// Branch: where a branch that carries no values takes the edge (a
	// back edge among them), its label, counted from where the code is
	// placed: the register already holds the next path's start, and code
	// that takes the branch itself from a branch of its own, instead of
	// falling through to it, keeps a cold call out of the hot path
	// (wazero spills a loop's values around a call whose branch joins
	// the loop body again). Where the function returns right after the
	// code, with its results on the stack, Return: an arm of End's own
	// can return itself. Elsewhere -1.
	Branch int64
	// Keep, at a back edge of a loop without calls, lists the locals
	// that the loop writes and that are live at its header, the path
	// register among them (those of number types). An arm that calls a
	// function before it takes the branch should hold them elsewhere (in
	// globals, say) across the call: wazero stores a value that lives
	// across a call after each of its definitions, in the loop's hot
	// path too, while values reloaded after the call are new ones.
	// Elsewhere nil.
	Keep []Local
	// Operands are the types of the values on the stack that the
	// instruction after the code takes, where that is a return (the
	// function's results) or a call (its arguments, call_indirect's
	// table index last), and all are of number types; else nil. An arm
	// that calls a function should take them along (see Block) and hold
	// them elsewhere across its call, as Keep: otherwise they live
	// across the arm's call, and wazero stores each after its
	// definition, and loads a call's arguments again before the call,
	// taken or not.
	Operands []wasm.ValType
	// Call, where Operands are a call's, is that call instruction. An
	// arm should then make the call itself, so that the arguments held
	// across its own call do not meet the hot path's again at a join:
	// End opens an if of type Block, makes the call at the end of its
	// arm, and returns the code that closes it after the original call
	// (after an else, for a call that returns: End's after); a tail call
	// leaves the arm by itself, and the if falls into the original.
	Call []byte
	// Block is the type index of an if that takes Operands and gives
	// back what a call gives, or Operands again before a return or a
	// tail call; also before a return whose results are not all of
	// number types (Operands nil). Else -1.
	Block int64
}

// IDBits bounds a Segments path id: functions with more than 2^IDBits
// paths are cut.
const IDBits = 40

// CountBits is how many low bits of a Segments register count the path's
// block entries; the path id lies above them. Low, so that most chord
// increments fit a 32-bit immediate and the count is one and away. A
// function where a path could make 2^CountBits block entries or more is
// instrumented block by block.
const CountBits = 16

// Return is Segments.End's branch where the function returns after the
// code.
const Return = -2

// Local is one of a function's locals: its index and type.
type Local struct {
	Index uint32
	Type  wasm.ValType
}

// InstrumentSegments makes the Segments copy of a module: every defined
// function's paths numbered as Ball-Larus does, ending before calls too,
// with seg.End run where they end.
func InstrumentSegments(orig []byte, seg Segments) (*Result, error) {
	if seg.End == nil {
		return nil, errors.New("instrument: Segments without End")
	}
	if seg.NoReturn == nil {
		seg.NoReturn = defaultNoReturn
	}
	m, err := wasm.Decode(orig)
	if err != nil {
		return nil, err
	}
	if err := m.Unsupported(); err != nil {
		return nil, err
	}
	res := &Result{CodeOffset: m.CodePayloadOff}
	numImported := m.NumImportedFuncs
	if seg.Setup != nil {
		if err := seg.Setup(m); err != nil {
			return nil, err
		}
	}
	shift := m.NumImportedFuncs - numImported
	noRet := cfg.NoReturnImports(m, seg.NoReturn...)
	cfgOpt := cfg.Options{NoReturn: noRet, SplitCalls: true, Thread: seg.Thread}
	for i := range m.Code {
		orig := numImported + uint32(i)
		f := &segFunc{Func: &Func{Index: orig, Name: m.FuncName(orig + shift), origOff: m.Code[i].OrigOff}, returnBlock: -1}
		res.Funcs = append(res.Funcs, f.Func)
		var err error
		if seg.Blockwise != nil && seg.Blockwise(orig) {
			err = skipError("block by block, as asked")
		} else {
			err = planSegments(m, i, f, cfgOpt)
		}
		var skip skipError
		if errors.As(err, &skip) {
			f.Status = profile.Skipped(string(skip))
			err = emitBlockwise(m, i, f, &seg, cfg.Options{NoReturn: noRet})
		} else if err == nil {
			f.Status = profile.StatusProfiled
			err = emitSegments(m, &m.Code[i], f, &seg)
		}
		if err != nil {
			return nil, fmt.Errorf("function %d (%s): %w", orig, f.Name, err)
		}
	}
	m.Touch(wasm.SecCode)
	if seg.Finish != nil {
		if err := seg.Finish(m); err != nil {
			return nil, err
		}
	}
	if res.Module, err = m.Encode(); err != nil {
		return nil, err
	}
	return res, nil
}

// segFunc is a function of a Segments copy while it is planned and
// emitted.
type segFunc struct {
	*Func
	// p is the i64 local that holds an ending path's packed value; p+1
	// is an i32 for End's own use (EndSite.P).
	p uint32
	// results are the function's results, and returnBlock the type of
	// an if that takes them and gives them back, or -1 where there are
	// none.
	results     []wasm.ValType
	returnBlock int64
	// emptyEnd marks the Graph edges where every path that ends there
	// has no blocks.
	emptyEnd []bool
	// params and decls are the function's parameters and local
	// declarations (scratch locals included), and carried, per loop
	// header, the locals its loop carries round (see EndSite.Keep).
	params  []wasm.ValType
	decls   []wasm.LocalDecl
	carried map[int32][]Local
}
