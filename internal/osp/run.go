// Program: an instrumented module compiled once for sampling or for
// tracing and run any number of times; Run and Count, which instrument,
// compile and run once.

package osp

import (
	"context"
	"errors"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/runner"
)

// Mode says what the recorder does.
type Mode int

const (
	// ModeSample records the samples the skips and lengths ask for.
	ModeSample Mode = iota
	// ModeTrace records every block entry, for exact counts.
	ModeTrace
)

// Program is an instrumented module compiled, ready to run any number of
// times (one run at a time).
//
// It stands on runner.Program, as the counting copies' run step
// (profiler.CopyProgram) does, and not on that step: a counting copy has a
// counter module and its counts are read back once its run is over, while
// a sampling copy hands its records to Go while it runs (the recorder's
// flush, through a host module of OSP's own) and its countdown tells at
// the end where in a skip the run stopped.
type Program struct {
	Instrumented *Instrumented
	mode         Mode
	prog         *runner.Program
	// flush is the current run's handler of the recorder's calls.
	flush func(mod api.Module) error
}

// Compile compiles ins to run in the given mode. rc's compile-time fields
// are used; HostModules must be unset.
func Compile(ctx context.Context, ins *Instrumented, mode Mode, rc runner.Config) (*Program, error) {
	if rc.HostModules != nil {
		return nil, errors.New("osp: Config.HostModules must be unset")
	}
	p := &Program{Instrumented: ins, mode: mode}
	rc.HostModules = func(ctx context.Context, r wazero.Runtime) ([]wazero.CompiledModule, error) {
		c, err := r.NewHostModuleBuilder(FlushModule).
			NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, mod api.Module, _ []uint64) {
				if p.flush == nil {
					panic(errors.New("osp: recorder called outside a run"))
				}
				if err := p.flush(mod); err != nil {
					panic(err) // stops the program: the samples are already wrong
				}
			}), nil, nil).
			Export(FlushName).
			Compile(ctx)
		if err != nil {
			return nil, err
		}
		return []wazero.CompiledModule{c}, nil
	}
	var err error
	if p.prog, err = runner.Compile(ctx, ins.Wasm, rc); err != nil {
		return nil, err
	}
	return p, nil
}

// Close releases the compiled code.
func (p *Program) Close(ctx context.Context) error { return p.prog.Close(ctx) }

// Run instruments orig, runs it once sampling with opt, and returns the
// profile; see Program.Sample.
func Run(ctx context.Context, orig []byte, opt Options, rc runner.Config) (*Profile, runner.Result, error) {
	ins, err := Instrument(orig)
	if err != nil {
		return nil, runner.Result{}, err
	}
	p, err := Compile(ctx, ins, ModeSample, rc)
	if err != nil {
		return nil, runner.Result{}, err
	}
	prof, res, err := p.Sample(ctx, opt, rc)
	if in := (*Interrupted)(nil); !errors.As(err, &in) { // else the program may still run
		p.Close(context.WithoutCancel(ctx))
	}
	return prof, res, err
}

// Count instruments orig and runs it once, counting every subpath of the
// given lengths; see Program.Trace.
func Count(ctx context.Context, orig []byte, lengths []int, rc runner.Config) (*Exact, *Instrumented, runner.Result, error) {
	ins, err := Instrument(orig)
	if err != nil {
		return nil, nil, runner.Result{}, err
	}
	p, err := Compile(ctx, ins, ModeTrace, rc)
	if err != nil {
		return nil, nil, runner.Result{}, err
	}
	defer p.Close(context.WithoutCancel(ctx))
	ex, res, err := p.Trace(ctx, lengths, rc)
	return ex, ins, res, err
}
