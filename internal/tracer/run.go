package tracer

// This file runs a traced copy: Run, and the result it returns.

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/profile"
)

// Key identifies an acyclic path.
type Key struct {
	Func uint32 // function index in the original module
	Kind string // profile.KindEntryExit, ...
	// Blocks are the file offsets of the path's blocks in the original
	// module, in decimal, joined by commas.
	Blocks string
}

// CallStats counts what happened to the calls of one function. They are
// kept apart from the paths, so that tests can check one against the other.
type CallStats struct {
	Calls   uint64 // frames entered
	Returns uint64 // frames left by a normal return
	// Exits counts proc_exit calls made from the function, as wazero's
	// call stack reports the caller.
	Exits uint64
	// Unwound counts frames left without a return: by a trap, by
	// proc_exit, by a tail call or by an exception.
	Unwound uint64
}

// Result is what a traced run counted.
type Result struct {
	Traced *Traced
	// Paths holds the count of every completed acyclic path.
	Paths map[Key]uint64
	// Calls holds the call counts of the traced functions, by original
	// function index.
	Calls map[uint32]*CallStats
	// Events is the number of block entries reported.
	Events uint64
	// Dropped counts paths left unfinished by a trap, proc_exit (in the
	// frames below its caller) or an exception passing through.
	Dropped uint64
	// Run is how the run ended.
	Run runner.Result
	// Region is what the region of interest saw (Traced.Region), nil
	// without one.
	Region *profile.Region
}

// Run instruments orig and runs it once; see Traced.Run.
func Run(ctx context.Context, orig []byte, cfg runner.Config) (*Result, runner.Result, error) {
	t, err := Instrument(orig)
	if err != nil {
		return nil, runner.Result{}, err
	}
	return t.Run(ctx, cfg)
}

// Run compiles and runs the traced module once with rc, which must leave
// HostModules, Listener and Modules unset: the tracer uses all three.
//
// A program that traps or exits in any way still yields a Result, with the
// paths that completed; a trap is also returned as the runner's error. A
// Result is nil when the module could not run, the run was interrupted,
// or the tracer found the events inconsistent with the graphs or the call
// stack, which means a bug here, in package cfg or in wazero's listener,
// never in the program.
//
// One case is beyond it: wazero shows listeners only the top 29 frames,
// so a tail call made deeper than that, from a frame whose 28 callers are
// the same functions as the 28 frames below it (deep self-recursion), is
// taken for an ordinary call; the trace then fails when the frame's
// path goes on.
func (t *Traced) Run(ctx context.Context, rc runner.Config) (*Result, runner.Result, error) {
	if rc.HostModules != nil || rc.Listener != nil || len(rc.Modules) > 0 {
		return nil, runner.Result{}, errors.New("tracer: Config.HostModules, Listener and Modules must be unset")
	}
	buf, err := bufferWasm()
	if err != nil {
		return nil, runner.Result{}, fmt.Errorf("tracer: buffer module: %w", err)
	}
	st := newState(t)
	rc.HostModules = st.hostModules
	rc.Listener = st
	rc.Modules = []runner.NamedModule{{Name: ImportModule, Wasm: buf}}
	// Every way out of a run passes a listener call, which drains the
	// buffer; draining once more while the buffer module is still open
	// checks that no event came after it.
	afterRun := rc.AfterRun
	rc.AfterRun = func(ctx context.Context, mods map[string]api.Module) error {
		st.drain()
		if afterRun != nil {
			return afterRun(ctx, mods)
		}
		return nil
	}
	res, err := runner.Run(ctx, t.Wasm, rc)
	if err != nil && res.Trap == nil && !res.Exited {
		return nil, res, err
	}
	st.finish(res)
	if st.err != nil {
		return nil, res, fmt.Errorf("tracer: %w", st.err)
	}
	return st.res, res, err
}
