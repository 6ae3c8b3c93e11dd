// Program.Sample: one sampled run, and the Profile made of it.

package osp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/heapstart"
	"github.com/pathprof/pathprof/internal/runner"
)

// countdown reads the program's countdown at the end of a run.
func countdown(mods map[string]api.Module) (uint32, error) {
	m := mods[runner.ProgramKey]
	if m == nil {
		return 0, errors.New("osp: the program's instance is gone")
	}
	g := m.ExportedGlobal(CountdownExport)
	if g == nil {
		return 0, fmt.Errorf("osp: the program exports no %s", CountdownExport)
	}
	return uint32(g.Get()), nil
}

// Sample runs the program once, sampling with opt, and returns the
// profile. A run that traps or is interrupted still gives a profile,
// marked incomplete, together with the error; one in which the sampling
// itself failed gives none.
func (p *Program) Sample(ctx context.Context, opt Options, rc runner.Config) (*Profile, runner.Result, error) {
	if p.mode != ModeSample {
		return nil, runner.Result{}, errors.New("osp: Sample needs a program compiled for sampling")
	}
	if err := opt.fill(); err != nil {
		return nil, runner.Result{}, err
	}
	s, err := newSampler(opt, p.Instrumented)
	if err != nil {
		return nil, runner.Result{}, err
	}
	var blocks uint64
	s.start()
	defer s.stop() // also on the way out of a panic
	// failed is the sampler's own failure, if it had one: the program
	// traps when a flush fails, but that run's samples are not to be
	// trusted, so it gives no profile.
	var failed error
	p.flush = func(mod api.Module) error {
		err := s.flush(mod, false)
		if err != nil && failed == nil {
			failed = err
		}
		return err
	}
	interrupted := false
	defer func() {
		if !interrupted { // the program may still call it
			p.flush = nil
		}
	}()
	after := rc.AfterRun
	rc.AfterRun = func(ctx context.Context, mods map[string]api.Module) error {
		// The worker reads the recorder's memory, which goes away when
		// the instances close after AfterRun: it stops here however
		// AfterRun ends.
		defer s.stop()
		if err := s.flush(mods[runner.ProgramKey], true); err != nil {
			if failed == nil {
				failed = err
			}
			return err
		}
		c, err := countdown(mods)
		if err != nil {
			return err
		}
		blocks = s.records + s.skipped
		switch left := int64(int32(c)); {
		case s.inSample:
		case left <= 0:
			// Outside a sample the program leaves the countdown out
			// only inside $tick, which records the path first: the
			// run stopped there (at the loop, interrupted, or in a
			// flush that failed) after the path that completed the
			// last sample. Its blocks beyond that sample are the next
			// skip's. (The countdown may still hold the sample's
			// encoding, below -2^29.)
			blocks += s.beyond
		default:
			// The skip the program is in: skip-c of its entries went by.
			if len(s.queue) == 0 {
				return errors.New("osp: the run ended with no skip to count")
			}
			skip := int64(s.queue[0].skip)
			if left > skip {
				return fmt.Errorf("osp: the program's countdown is %d in a skip of %d", left, skip)
			}
			blocks += uint64(skip - left)
		}
		if after != nil {
			return after(ctx, mods)
		}
		return nil
	}
	var res runner.Result
	var runErr error
	if opt.Stop == nil {
		res, runErr = p.prog.Run(ctx, rc)
	} else {
		type ran struct {
			res runner.Result
			err error
		}
		done := make(chan ran, 1)
		start := time.Now()
		go func() {
			res, err := p.prog.Run(ctx, rc)
			done <- ran{res, err}
		}()
		select {
		case r := <-done:
			res, runErr = r.res, r.err
		case reason := <-opt.Stop:
			// The worker takes nothing more once stopped, so the hot
			// list and the counts stay as they are while the program
			// runs on.
			interrupted = true
			heapstart.End() // its settings would come back at a collection
			debug.SetGCPercent(-1)
			res = runner.Result{RunTime: time.Since(start)}
			err := &Interrupted{Reason: reason, After: res.RunTime}
			if serr := s.stop(); serr != nil {
				// No profile, as below; the error stays an
				// Interrupted, for the program may still run.
				return nil, res, fmt.Errorf("osp: sampling failed: %v (%w)", serr, err)
			}
			return p.profile(s, s.records+s.skipped, rc, res, err), res, err
		}
	}
	// AfterRun stopped the worker already, unless instantiation failed.
	if err := s.stop(); err != nil && failed == nil {
		failed = err
	}
	if failed != nil {
		return nil, res, fmt.Errorf("osp: sampling failed: %w", failed)
	}
	if runErr != nil && res.Trap == nil && !res.Exited && ctx.Err() == nil {
		return nil, res, runErr
	}
	prof := p.profile(s, blocks, rc, res, runErr)
	return prof, res, runErr
}

// profile assembles the Profile of a sampling run.
func (p *Program) profile(s *sampler, blocks uint64, rc runner.Config, res runner.Result, runErr error) *Profile {
	ins := p.Instrumented
	prof := &Profile{
		Format:  Format,
		Version: Version,
		Module:  Module{Size: ins.Size, SHA256: ins.SHA256, Blocks: len(ins.Blocks)},
		Run: RunFacts{
			Args:         append([]string{}, rc.Args...),
			ExitCode:     res.ExitCode,
			Complete:     runErr == nil,
			Seconds:      res.RunTime.Seconds(),
			BlockEntries: blocks,
		},
		Sampling: Sampling{
			Seed:          s.opt.Seed,
			MeanSkip:      s.opt.MeanSkip,
			Compact:       !s.opt.Plain,
			Concise:       s.opt.Concise,
			Lengths:       slices.Clone(s.opt.Lengths),
			SampleBlocks:  SampleBlocks(s.opt.Lengths),
			SampledBlocks: s.records,
		},
		Memory: Memory{
			Bound:        s.opt.Memory,
			HotListBytes: s.hot.Bytes(),
			BufferBytes:  BufferBytes,
			Pairs:        s.hot.Len(),
		},
		Functions: []Function{},
		Subpaths:  []Subpath{},
	}
	if runErr != nil {
		prof.Run.Error = runErr.Error()
	}
	states := s.hot.Lengths()
	scale := make([]float64, len(s.opt.Lengths))
	prof.Sampling.Samples = s.samples
	for i, l := range s.opt.Lengths {
		st := states[i]
		f := LengthFacts{Length: l, Windows: st.Offered, Tau: st.Tau, Counting: st.Counting, Raises: st.Raises, Bytes: st.Bytes}
		if st.Offered > 0 {
			scale[i] = float64(blocks) / float64(st.Offered)
			f.Scale = scale[i]
			// A subpath occurrence is in a sample with
			// probability Samples/T or more (its first block is
			// the sample's first at least); one there at least is
			// admitted with probability 1/τ or more, so a subpath
			// of N occurrences is missed by every sample with
			// probability below about exp(−N·Samples/(τ·T)).
			f.Floor = 3 * st.Tau * float64(blocks) / float64(s.samples)
		}
		prof.Sampling.ByLength = append(prof.Sampling.ByLength, f)
	}
	funcs := map[uint32]bool{}
	pairs := s.hot.Pairs()
	sortPairs(pairs)
	for _, pr := range pairs {
		i := slices.Index(s.opt.Lengths, len(pr.Blocks))
		prof.Sampling.ByLength[i].Pairs++
		est, variance := Estimate(pr, states[i])
		sp := Subpath{
			Length:   len(pr.Blocks),
			Count:    pr.Count,
			Estimate: est * scale[i],
			Squares:  pr.Squares,
			Error:    1.96 * math.Sqrt(variance) * scale[i],
			Blocks:   make([]BlockRef, len(pr.Blocks)),
		}
		for j, id := range pr.Blocks {
			b := ins.Blocks[id]
			sp.Blocks[j] = BlockRef{Func: b.Func, Offset: b.Offset}
			funcs[b.Func] = true
		}
		prof.Subpaths = append(prof.Subpaths, sp)
	}
	slices.SortStableFunc(prof.Subpaths, func(a, b Subpath) int {
		if a.Estimate != b.Estimate {
			if a.Estimate > b.Estimate {
				return -1
			}
			return 1
		}
		return a.Length - b.Length
	})
	for f := range funcs {
		prof.Functions = append(prof.Functions, Function{Index: f, Name: ins.FuncNames[f]})
	}
	slices.SortFunc(prof.Functions, func(a, b Function) int { return int(a.Index) - int(b.Index) })
	return prof
}
