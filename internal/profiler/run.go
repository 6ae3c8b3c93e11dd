package profiler

// This file holds the run step: an instrumented copy compiled once and run
// any number of times, its counts read back after each run; and the counts
// a node run wrote, read back into the same shape.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/counters"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/noderun"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/profile"
)

// CopyProgram is an instrumented copy compiled once, with its counter
// module, to be run any number of times. Each run instantiates the copy
// afresh from the same compiled code, so it starts with zero counts, and
// reads its counts back when the program has finished. Profile, exec and
// bench run every copy through it.
//
// The compile-time fields of the runner.Config given to CompileCopy pass
// to runner.Compile unchanged, HostModules and Listener included, and the
// counter module is compiled after cfg.Modules: a copy whose probes call
// Go host modules compiles the same way.
type CopyProgram struct {
	res  *instrument.Result
	prog *runner.Program
	// region follows the region of interest in each run, nil without one.
	region *regionRun
	// node, when not nil, is the copy as node runs it (EngineNode); prog
	// is then nil.
	node *noderun.Copy
}

// CompileCopy compiles the copy res and its counter module with the
// compile-time fields of cfg.
func CompileCopy(ctx context.Context, res *instrument.Result, cfg runner.Config) (*CopyProgram, error) {
	return compileCopy(ctx, res, cfg, EngineWazero)
}

// compileCopy compiles the copy res for engine: for node, it checks that
// cfg asks for nothing but WASI and writes the copy where node loads it.
func compileCopy(ctx context.Context, res *instrument.Result, cfg runner.Config, engine Engine) (*CopyProgram, error) {
	if engine == EngineNode {
		if err := nodeUnsupported(cfg); err != nil {
			return nil, err
		}
		c, err := noderun.Write(res.Module, res.Counters)
		if err != nil {
			return nil, fmt.Errorf("engine node: %w", err)
		}
		return &CopyProgram{res: res, node: c}, nil
	}
	cfg.Modules = append(slices.Clip(cfg.Modules), counters.Modules(res.Counters)...)
	prog, err := runner.Compile(ctx, res.Module, cfg)
	if err != nil {
		return nil, err
	}
	return &CopyProgram{res: res, prog: prog}, nil
}

// CopyRun is what one run of a copy left.
type CopyRun struct {
	// Result says how the program ended; Err is the run's error as
	// runner.Program.Run returns it (a trap, an interrupted run, a
	// failed instantiation), or RunCopy's compile error.
	Result runner.Result
	Err    error
	// Counts are the copy's counts, empty when none could be read.
	Counts counters.Counts
	// Calls are the copy's call counters by function index
	// (instrument.CallsExport), nil when it shares out no calls or they
	// were not read.
	Calls map[uint32]uint64
	// ReadErr says why the counts or call counters could not be read.
	ReadErr error

	res   *instrument.Result
	stubs []runner.Stub
	// region is what the region of interest saw, nil without one.
	region *profile.Region
}

// Run runs the copy once with the run-time fields of cfg and reads its
// counts back; cfg.AfterRun, if set, is called after that.
func (p *CopyProgram) Run(ctx context.Context, cfg runner.Config) *CopyRun {
	if p.node != nil {
		return p.runNode(ctx, cfg)
	}
	r := &CopyRun{res: p.res, stubs: p.prog.Stubs()}
	after := cfg.AfterRun
	cfg.AfterRun = func(ctx context.Context, mods map[string]api.Module) error {
		r.Counts, r.ReadErr = counters.ReadInstance(mods)
		if r.ReadErr == nil {
			r.Calls, r.ReadErr = readCalls(mods, p.res)
		}
		if r.ReadErr == nil && p.region != nil {
			r.Counts, r.ReadErr = p.region.finish(mods)
			r.region = p.region.profile()
		}
		if after != nil {
			return after(ctx, mods)
		}
		return nil
	}
	if p.region != nil {
		if cfg.Live == nil {
			cfg.Live = &runner.Live{}
		}
		p.region.reset(cfg.Live)
	}
	r.Result, r.Err = p.prog.Run(ctx, cfg)
	if r.Counts == nil {
		r.Counts = counters.Counts{}
	}

	return r
}

// stubsOf is the profile's record of the stubs a run called.
func stubsOf(r *CopyRun) []profile.Stub {
	var out []profile.Stub
	for i, s := range r.stubs {
		st := profile.Stub{Import: s.String(), Result: s.Result}
		if i < len(r.Result.StubCalls) {
			st.Calls = r.Result.StubCalls[i]
		}
		out = append(out, st)
	}
	return out
}

// RunUncounted runs the copy once without reading its counts back, for
// timed runs: the run time includes AfterRun.
func (p *CopyProgram) RunUncounted(ctx context.Context, cfg runner.Config) (runner.Result, error) {
	cfg.AfterRun = nil
	return p.prog.Run(ctx, cfg)
}

// CompileTime is how long compiling the copy and its modules took (none
// for node, which compiles as the program runs).
func (p *CopyProgram) CompileTime() time.Duration {
	if p.node != nil {
		return 0
	}
	return p.prog.CompileTime()
}

// Close releases the compiled code.
func (p *CopyProgram) Close(ctx context.Context) error {
	if p.node != nil {
		return p.node.Close()
	}
	return p.prog.Close(ctx)
}

// RunCopy compiles the copy res with cfg, runs it once and closes it. A
// failed compilation (such as a missing import, a *runner.ImportError) is
// the run's Err, as with runner.Run.
func RunCopy(ctx context.Context, res *instrument.Result, cfg runner.Config) *CopyRun {
	p, err := CompileCopy(ctx, res, cfg)
	if err != nil {
		return &CopyRun{Err: err, Counts: counters.Counts{}, res: res}
	}
	defer p.Close(context.WithoutCancel(ctx))
	return p.Run(ctx, cfg)
}

// RunCopyUntil runs the copy res once as RunCopy does, but a reason
// received on stop interrupts the run as it does a profile's (runCopies):
// the copy's counts are read as they stand, and RunCopyUntil returns them
// with the interruption, without waiting for the program, which runs on
// with the garbage collector off: the caller is expected to exit soon.
// The copy runs alone in its process, so the threads and the collector
// are runCopies' to manage, as an interruption needs.
func RunCopyUntil(ctx context.Context, res *instrument.Result, cfg runner.Config, stop <-chan string) (*CopyRun, *profile.Interruption) {
	runs, in, err := runCopies(ctx, &Copies{Copy: []*instrument.Result{res}}, nil, true, cfg, 1, func(string, ...any) {}, stop, 0, nil, nil, EngineWazero)
	if err != nil { // one copy has no other to disagree with
		return &CopyRun{Err: err, Counts: counters.Counts{}, res: res}, nil
	}
	return runs[0], in
}

// Functions regenerates the run's counted paths: the copy's profile of
// the run, and its probe hits as instrument.Result.Functions counts them.
func (r *CopyRun) Functions() ([]profile.Function, uint64, error) {
	return r.res.Functions(r.Counts)
}

// Failure is the run's error, or else why its counts could not be read;
// nil for a run that went well.
func (r *CopyRun) Failure() error {
	if r.Err != nil {
		return r.Err
	}
	return r.ReadErr
}

// ReadNodeRun reads back what a node run (run.cjs) of the copy res wrote:
// the counter memory in the file countsFile and, in countsFile.calls if
// there is one, the call counters.
func ReadNodeRun(res *instrument.Result, countsFile string, exitCode uint32) (*CopyRun, error) {
	mem, err := os.ReadFile(countsFile)
	if err != nil {
		return nil, err
	}
	r := &CopyRun{Result: runner.Result{ExitCode: exitCode}, res: res}
	if r.Counts, err = counters.Read(mem); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(countsFile + ".calls")
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	if r.Calls, err = parseCalls(b); err != nil {
		return nil, fmt.Errorf("%s.calls: %v", countsFile, err)
	}
	return r, nil
}

// readCalls reads the call counters of the functions whose calls a copy
// shares out with others (nil if none) from its instance after a run.
func readCalls(mods map[string]api.Module, res *instrument.Result) (map[uint32]uint64, error) {
	if !res.SharesCalls() {
		return nil, nil
	}
	prog := mods[""]
	if prog == nil {
		return nil, errors.New("no program instance to read call counters from")
	}
	out := map[uint32]uint64{}
	for _, f := range res.Funcs {
		if f.Placement == nil || f.Mode.Slices == 0 || f.Mode.Loop != 0 {
			continue
		}
		g := prog.ExportedGlobal(instrument.CallsExport(f.Index))
		if g == nil {
			return nil, fmt.Errorf("no call counter %s", instrument.CallsExport(f.Index))
		}
		out[f.Index] = g.Get()
	}
	return out, nil
}

// parseCalls reads the call counters node's runner writes beside a
// copy's counts (COUNTS.out.calls: export name to decimal count).
func parseCalls(b []byte) (map[uint32]uint64, error) {
	var byName map[string]string
	if err := json.Unmarshal(b, &byName); err != nil {
		return nil, fmt.Errorf("call counters: %v", err)
	}
	out := map[uint32]uint64{}
	for name, v := range byName {
		idx, ok := strings.CutPrefix(name, instrument.CallsPrefix)
		f, err := strconv.ParseUint(idx, 10, 32)
		if !ok || err != nil {
			return nil, fmt.Errorf("call counters: %q is not a call counter", name)
		}
		if out[uint32(f)], err = strconv.ParseUint(v, 10, 64); err != nil {
			return nil, fmt.Errorf("call counters: %s: %v", name, err)
		}
	}
	return out, nil
}
