// Package profiler runs the profiling pipeline for one module and input:
// instrument, run deterministically, read the counters back, regenerate the
// paths and assemble the profile file.
package profiler

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/counters"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/profile"
)

// Options configure a profiling run.
type Options struct {
	// Strategy is SBL, PBL or P3; "" means SBL. Copies is k (1 for SBL)
	// and Jobs how many copies run at once (default: all).
	Strategy profile.Strategy
	Copies   int
	Jobs     int
	// Partition tunes P3 planning. Its Weights, if set, also place every
	// strategy's probes, SBL's included, on the edges that ran least.
	Partition partition.Options
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
		opt.Strategy = profile.SBL
	}
	if opt.Strategy == profile.SBL && opt.Partition.Weights != nil {
		// Placing the probes by the weights' frequencies is a plan's
		// work: the one copy is built like the partitioned ones.
		opt.Copies = 1
	}
	if opt.Strategy != profile.SBL || opt.Partition.Weights != nil {
		return profileCopies(ctx, orig, opt)
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
		if f.Placement != nil {
			profiled++
		}
	}
	progress("instrumented %d of %d functions in %.2fs", profiled, len(res.Funcs), time.Since(start).Seconds())

	var counts counters.Counts
	var readErr error
	cfg := opt.Run
	cfg.Modules = append(append([]runner.NamedModule(nil), cfg.Modules...), counters.Modules(res.Counters)...)
	if cfg.Progress == nil {
		cfg.Progress = opt.Progress
	}
	cfg.AfterRun = func(ctx context.Context, mods map[string]api.Module) error {
		counts, readErr = counters.ReadInstance(mods)
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

// runHits is a copy's probe hits on a run whose exact profile is exact,
// given what the copy counted (own) and its call counters: exact when it
// shares out loops, or calls and its counters are known, else HitsOf's
// figure.
func runHits(res *instrument.Result, exact, own []profile.Function, calls map[uint32]uint64) (uint64, error) {
	if res.Sliced() && (calls != nil || !res.SharesCalls()) {
		return res.HitsOfRun(exact, own, calls)
	}
	return res.HitsOf(exact)
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// profileCopies runs a partitioned strategy: k copies on the same input,
// their outputs compared, their profiles merged.
// copiesWord is "1 copy" or "k copies".
func copiesWord(k int) string {
	if k == 1 {
		return "1 copy"
	}
	return fmt.Sprintf("%d copies", k)
}

func profileCopies(ctx context.Context, orig []byte, opt Options) (*profile.Profile, error) {
	k := opt.Copies
	if k < 1 {
		return nil, fmt.Errorf("%s needs at least one copy", opt.Strategy)
	}
	progress := func(format string, args ...any) {
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "pathprof: "+format+"\n", args...)
		}
	}
	sum := sha256.Sum256(orig)
	p := &profile.Profile{
		Format:   profile.Format,
		Version:  profile.Version,
		Module:   profile.Module{Path: opt.ModulePath, SHA256: hex.EncodeToString(sum[:]), Size: len(orig)},
		Strategy: opt.Strategy,
		Copies:   k,
		Complete: true,
	}
	start := time.Now()
	progress("planning %s over %s and instrumenting them", opt.Strategy, copiesWord(k))
	cs, err := Build(orig, opt.Strategy, k, opt.Instrument, opt.Partition)
	if err != nil {
		return nil, err
	}
	p.Module.CodeOffset = cs.Copy[0].CodeOffset
	progress("built %s in %.2fs", copiesWord(k), time.Since(start).Seconds())
	if cs.FellBack {
		progress("p3's splits would make more probe hits than pbl's on the weights' run: the copies are pbl's")
	}
	if what := cs.SharedSummary(); what != "" {
		progress("%s are shared out among the copies", what)
	}
	jobs := opt.Jobs
	if jobs < 1 {
		jobs = k
	}
	cfg := opt.Run
	if cfg.Progress == nil {
		cfg.Progress = opt.Progress
	}
	runs, err := runCopies(ctx, cs, cfg, jobs, progress)
	if err != nil {
		return nil, err
	}
	// The copies' output is compared, then copy 0's passed on.
	first := runs[0]
	if opt.Run.Stdout != nil {
		opt.Run.Stdout.Write(first.stdout.Bytes())
	}
	if opt.Run.Stderr != nil {
		opt.Run.Stderr.Write(first.stderr.Bytes())
	}
	p.ExitCode = first.res.ExitCode
	var parts [][]profile.Function
	var calls []map[uint32]uint64
	for c, r := range runs {
		run := profile.Run{Copy: c, Seconds: r.res.RunTime.Seconds(), ExitCode: r.res.ExitCode}
		if r.err != nil {
			run.Error = r.err.Error()
			p.Complete = false
			p.Incomplete = joinReason(p.Incomplete, fmt.Sprintf("copy %d: %v", c, r.err))
		}
		if r.readErr != nil {
			p.Complete = false
			p.Incomplete = joinReason(p.Incomplete, fmt.Sprintf("copy %d: counters: %v", c, r.readErr))
		}
		if !bytes.Equal(r.stdout.Bytes(), first.stdout.Bytes()) || !bytes.Equal(r.stderr.Bytes(), first.stderr.Bytes()) || r.res.ExitCode != first.res.ExitCode {
			return nil, fmt.Errorf("copy %d printed or exited differently from copy 0: the run is not deterministic", c)
		}
		counts := r.counts
		if counts == nil {
			counts = counters.Counts{}
		}
		fs, hits, err := cs.Copy[c].Functions(counts)
		if err != nil {
			return nil, fmt.Errorf("copy %d: %w", c, err)
		}
		run.ProbeHits = hits
		p.Runs = append(p.Runs, run)
		parts = append(parts, fs)
		calls = append(calls, r.calls)
	}
	if err := checkCalls(calls); err != nil {
		return nil, err
	}
	if p.Functions, err = Merge(parts, cs.Shared()); err != nil {
		return nil, err
	}
	// A selective copy also runs probes on the paths it does not count:
	// its hits come from the merged, exact profile; those of the calls
	// it shares out, from its own counts.
	for c := range p.Runs {
		if p.Runs[c].ProbeHits, err = runHits(cs.Copy[c], p.Functions, parts[c], calls[c]); err != nil {
			return nil, err
		}
	}
	if err := unevenCalls(cs, p, progress); err != nil {
		return nil, err
	}
	if !p.Complete {
		return p, fmt.Errorf("incomplete profile: %s", p.Incomplete)
	}
	return p, nil
}

// unevenCalls says so when copies that share out calls or loop iterations
// made more hits on the run than PBL's copies would have: the plan took
// the shared calls or iterations to cost about the same, and they were
// uneven.
func unevenCalls(cs *Copies, p *profile.Profile, progress func(string, ...any)) error {
	if cs.PBL == nil || len(cs.Shared()) == 0 {
		return nil
	}
	var mine, whole uint64
	for _, r := range p.Runs {
		mine = max(mine, r.ProbeHits)
	}
	for _, res := range cs.PBL.Copy {
		h, err := res.HitsOf(p.Functions)
		if err != nil {
			return err
		}
		whole = max(whole, h)
	}
	if mine > whole {
		progress("the slowest copy made %d probe hits, PBL's would have made %d: the shared calls or loop iterations were uneven (a profile does not tell how they differ); --strategy pbl plans without sharing", mine, whole)
	}
	return nil
}

// funcsWord is "1 function" or "N functions".
func funcsWord(n int) string {
	if n == 1 {
		return "1 function"
	}
	return fmt.Sprintf("%d functions", n)
}
