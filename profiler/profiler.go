// Package profiler runs the profiling pipeline for one module and input:
// instrument, run deterministically, read the counters back, regenerate the
// paths and assemble the profile file.
package profiler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tetratelabs/wazero/api"

	"pathprof/counters"
	"pathprof/instrument"
	"pathprof/profile"
	"pathprof/runner"
)

// Options configure a profiling run.
type Options struct {
	// Strategy is "sbl" (the only one so far); "" means sbl.
	Strategy string
	// ModulePath is recorded in the profile.
	ModulePath string
	// Run configures the program's run (arguments, environment, stdin,
	// mounts, output, compilation cache, progress).
	Run runner.Config
	// Progress receives a line per slow step; nil for none.
	Progress   io.Writer
	Instrument instrument.Options
}

// Profile profiles one run of the module. It returns the profile even when
// the run fails (trap, missing import): it is then marked incomplete and
// err says why. The program's exit code is in the profile.
func Profile(ctx context.Context, orig []byte, opt Options) (*profile.Profile, error) {
	if opt.Strategy == "" {
		opt.Strategy = "sbl"
	}
	if opt.Strategy != "sbl" {
		return nil, fmt.Errorf("strategy %q is not implemented (only sbl)", opt.Strategy)
	}
	sum := sha256.Sum256(orig)
	p := &profile.Profile{
		Format:   profile.Format,
		Version:  profile.Version,
		Module:   profile.Module{Path: opt.ModulePath, SHA256: hex.EncodeToString(sum[:]), Size: len(orig)},
		Strategy: opt.Strategy,
		Copies:   1,
		Complete: true,
	}
	progress := func(format string, args ...any) {
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "pathprof: "+format+"\n", args...)
		}
	}
	start := time.Now()
	progress("instrumenting %s (%d bytes)", opt.ModulePath, len(orig))
	res, err := instrument.Instrument(orig, opt.Instrument)
	if err != nil {
		return nil, err
	}
	p.Module.CodeOffset = res.CodeOffset
	profiled := 0
	for _, f := range res.Funcs {
		if f.Plan != nil {
			profiled++
		}
	}
	progress("instrumented %d of %d functions in %.2fs", profiled, len(res.Funcs), time.Since(start).Seconds())

	var counts counters.Counts
	var readErr error
	cfg := opt.Run
	cfg.Modules = append(append([]runner.NamedModule(nil), cfg.Modules...), runner.NamedModule{Name: counters.ModuleName, Wasm: res.Counters})
	if cfg.Progress == nil {
		cfg.Progress = opt.Progress
	}
	cfg.AfterRun = func(ctx context.Context, mods map[string]api.Module) error {
		mem := mods[counters.ModuleName].Memory()
		b, ok := mem.Read(0, mem.Size())
		if !ok {
			readErr = errors.New("cannot read the counter module's memory")
			return nil
		}
		counts, readErr = counters.Read(b)
		return nil
	}
	rr, runErr := runner.Run(ctx, res.Module, cfg)
	run := profile.Run{Copy: 0, Seconds: rr.RunTime.Seconds(), ExitCode: rr.ExitCode}
	p.ExitCode = rr.ExitCode
	if runErr != nil {
		run.Error = runErr.Error()
		p.Complete = false
		p.Incomplete = runErr.Error()
	}
	if readErr != nil {
		p.Complete = false
		p.Incomplete = joinReason(p.Incomplete, "counters: "+readErr.Error())
	}
	if counts == nil {
		counts = counters.Counts{}
	}
	fs, hits, err := res.Functions(counts)
	if err != nil {
		return nil, err
	}
	run.ProbeHits = hits
	p.Runs = []profile.Run{run}
	p.Functions = fs
	if !p.Complete {
		return p, fmt.Errorf("incomplete profile: %s", p.Incomplete)
	}
	return p, nil
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
