// Program.Trace: one run with every block entry recorded, for exact counts.

package osp

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/runner"
)

// Trace runs the program once, counting every subpath of the given
// lengths exactly.
func (p *Program) Trace(ctx context.Context, lengths []int, rc runner.Config) (*Exact, runner.Result, error) {
	if p.mode != ModeTrace {
		return nil, runner.Result{}, errors.New("osp: Trace needs a program compiled for tracing")
	}
	if err := checkLengths(lengths); err != nil {
		return nil, runner.Result{}, err
	}
	ex := NewExact(lengths, p.Instrumented.offsets())
	res, err := p.trace(ctx, rc, ex.Push)
	if err != nil && res.Trap == nil && !res.Exited {
		return nil, res, err
	}
	return ex, res, err
}

// trace runs a program compiled for tracing and hands every block entry,
// in order and in batches, to push. The program samples as it does when
// sampling, but every sample is traceLength blocks long and starts on the
// block after the last: it records every path.
func (p *Program) trace(ctx context.Context, rc runner.Config, push func(ids []uint32)) (runner.Result, error) {
	var rec *recorder
	var ids []uint32
	// The program's first sample is one block long (the area's own
	// table), every next one traceLength; a path that holds the end of
	// one and the start of the next is recorded twice, with the next
	// one's start.
	left, first := 0, true
	drain := func(mod api.Module) error {
		area, recs, err := flushed(&rec, mod)
		if err != nil {
			return err
		}
		err = records(recs, func(fn, start uint32, v uint64) error {
			bs, err := p.Instrumented.pathBlocks(fn, v)
			if err != nil {
				return err
			}
			if start != noStart {
				if int64(start) >= int64(len(bs)) {
					return fmt.Errorf("osp: a sample starts at block %d of a path of %d", start, len(bs))
				}
				bs = bs[start:]
				left = traceLength
				if first {
					left, first = 1, false
				}
			}
			take := min(len(bs), left)
			ids = append(ids, bs[:take]...)
			left -= take
			return nil
		})
		if err != nil {
			return err
		}
		// push takes its time per call too: batches of many flushes.
		if len(ids) >= traceBatch {
			push(ids)
			ids = ids[:0]
		}
		rec.pos.Set(0)
		if out, err := rec.tableOut(area); err != nil || !out {
			return err
		}
		rec.putTable(area, []entry{{1, traceLength}})
		return nil
	}
	p.flush = drain
	defer func() { p.flush = nil }()
	after := rc.AfterRun
	rc.AfterRun = func(ctx context.Context, mods map[string]api.Module) error {
		if err := drain(mods[runner.ProgramKey]); err != nil {
			return err
		}
		push(ids)
		if after != nil {
			return after(ctx, mods)
		}
		return nil
	}
	return p.prog.Run(ctx, rc)
}
