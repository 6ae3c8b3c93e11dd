// Package profiler runs the profiling pipeline for one module and input:
// plan and instrument the copies (Build), run each (CopyProgram, the run
// step), read the counters back, regenerate the paths and merge them into
// the profile file (MergeRuns, MergeParts).
package profiler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

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
	// Interrupt, if set, stops the run when it receives a reason
	// ("SIGINT", "timeout"): the copies' counts are read as they stand,
	// and Profile returns the profile marked interrupted without waiting
	// for the program, which runs on in the background with the garbage
	// collector off (runCopies says why): a caller that interrupts a run
	// is expected to exit soon after.
	Interrupt <-chan string
	// SnapshotEvery, if not 0, has Snapshot called that often while the
	// copies run with the profile as it stands: every copy's counts read
	// at the same moment, as at an interruption, and the profile marked
	// interrupted with profile.SnapshotReason. The run goes on.
	SnapshotEvery time.Duration
	Snapshot      func(*profile.Profile) error
}

// Profile profiles one run of the module: it builds the strategy's copies
// (SBL's one copy is the k = 1 case), runs each on the same input and
// merges their counts. It returns the profile even when a run fails (trap,
// missing import): it is then marked incomplete and err says why. The
// program's exit code is in the profile.
func Profile(ctx context.Context, orig []byte, opt Options) (*profile.Profile, error) {
	if opt.Strategy == "" {
		opt.Strategy = profile.SBL
	}
	k := opt.Copies
	if opt.Strategy == profile.SBL {
		k = 1
	}
	if k < 1 {
		return nil, fmt.Errorf("%s needs at least one copy", opt.Strategy)
	}
	progress := func(format string, args ...any) {
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "pathprof: "+format+"\n", args...)
		}
	}
	start := time.Now()
	if opt.Strategy == profile.SBL {
		progress("instrumenting %s (%d bytes)", opt.ModulePath, len(orig))
	} else {
		progress("planning %s over %s and instrumenting them", opt.Strategy, copiesWord(k))
	}
	cs, err := Build(orig, opt.Strategy, k, opt.Instrument, opt.Partition)
	if err != nil {
		return nil, err
	}
	if opt.Strategy == profile.SBL {
		profiled := 0
		for _, f := range cs.Copy[0].Funcs {
			if f.Placement != nil {
				profiled++
			}
		}
		progress("instrumented %d of %d functions in %.2fs", profiled, len(cs.Copy[0].Funcs), time.Since(start).Seconds())
	} else {
		progress("built %s in %.2fs", copiesWord(k), time.Since(start).Seconds())
	}
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
	sum := sha256.Sum256(orig)
	module := profile.Module{Path: opt.ModulePath, SHA256: hex.EncodeToString(sum[:]), Size: len(orig)}
	// assemble merges the runs into the profile, marked interrupted by in
	// if not nil.
	assemble := func(runs []*CopyRun, in *profile.Interruption) (*profile.Profile, error) {
		p, err := MergeRuns(cs, runs)
		if err != nil {
			return nil, err
		}
		p.Module.Path, p.Module.SHA256, p.Module.Size = module.Path, module.SHA256, module.Size
		if in != nil {
			markInterrupted(p, in)
		}
		return p, nil
	}
	snapshot := func(runs []*CopyRun, in *profile.Interruption) {
		p, err := assemble(runs, in)
		if err == nil {
			err = opt.Snapshot(p)
		}
		if err != nil {
			progress("snapshot after %.0fs: %v", in.Seconds, err)
		}
	}
	every := opt.SnapshotEvery
	if opt.Snapshot == nil {
		every = 0
	}
	runs, in, err := runCopies(ctx, cs, cfg, jobs, progress, opt.Interrupt, every, snapshot)
	if err != nil {
		return nil, err
	}
	p, err := assemble(runs, in)
	if err != nil {
		return nil, err
	}
	if in != nil {
		return p, errors.New(p.Incomplete)
	}
	if err := unevenCalls(cs, p, progress); err != nil {
		return nil, err
	}
	if !p.Complete {
		return p, fmt.Errorf("incomplete profile: %s", p.Incomplete)
	}
	return p, nil
}

// markInterrupted marks p, whose counts were read while the program ran,
// interrupted by in, and says why it is incomplete.
func markInterrupted(p *profile.Profile, in *profile.Interruption) {
	p.Interrupted, p.Complete = in, false
	why := fmt.Sprintf("interrupted by %s after %.2fs: counts read while the program ran", in.Reason, in.Seconds)
	if in.Reason == profile.SnapshotReason {
		why = fmt.Sprintf("snapshot after %.2fs of a run that had not ended when it was written: counts read while the program ran", in.Seconds)
	}
	if in.Approximate {
		why += ", each copy at its own point (approximate)"
	}
	p.Incomplete = joinReason(why, p.Incomplete)
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
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

// copiesWord is "1 copy" or "k copies".
func copiesWord(k int) string {
	if k == 1 {
		return "1 copy"
	}
	return fmt.Sprintf("%d copies", k)
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
