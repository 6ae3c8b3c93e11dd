// ScoreRun: one run of a program sampled, traced and scored, the step
// that pathprof osp-score and bench --osp both take.

package osp

import (
	"context"
	"errors"
	"fmt"

	"github.com/pathprof/pathprof/internal/runner"
)

// ScoreTops are the true top lists a run is scored at: the 10 and the 100
// hottest subpaths of each length.
var ScoreTops = []int{10, 100}

// The runs ScoreRun makes, as it names them to ScoreOptions.Run.
const (
	SampledRun = "sampled run"
	TracedRun  = "traced run"
)

// ScoreOptions configure ScoreRun.
type ScoreOptions struct {
	// Sampling are the sampled run's settings; their Lengths are the
	// traced run's too.
	Sampling Options
	// Profile, when set, is scored instead of a sampled run: a profile
	// of the same module and run. The traced run counts its lengths.
	Profile *Profile
	// Unbounded also counts the sampled run's samples with no memory
	// bound (UnboundedCounts) and scores them.
	Unbounded bool
	// Run makes one run, SampledRun or TracedRun: it calls run with a
	// fresh configuration, and checks what the program printed and how
	// it exited, which must be alike in both runs. An error it returns
	// ends ScoreRun with that error.
	Run func(what string, run func(runner.Config) (runner.Result, error)) error
}

// RunScore is a run's profile scored against the exact counts of the same
// run.
type RunScore struct {
	Profile *Profile // the sampled run's, or ScoreOptions.Profile
	Exact   *Exact
	Score   *Score
	// Unbounded holds the scores of the samples counted with no bound,
	// in UnboundedCounts' order (ScoreOptions.Unbounded only).
	Unbounded []UnboundedScore
}

// UnboundedScore is the score of a run's samples counted with no bound.
type UnboundedScore struct {
	// Every is true for every window of each sample, false for the
	// windows the hot list is offered.
	Every bool   `json:"every"`
	Score *Score `json:"score"`
}

// ScoreRun samples a run with sample (a program compiled for sampling;
// nil with ScoreOptions.Profile), traces the same run with trace,
// checks that the runs agree and scores the profile at ScoreTops. The
// runs agree when opt.Run accepts what each printed and when they made as
// many block entries.
func ScoreRun(ctx context.Context, sample, trace *Program, opt ScoreOptions) (*RunScore, error) {
	rs := &RunScore{Profile: opt.Profile}
	lengths := opt.Sampling.Lengths
	var counts []*Unbounded
	if rs.Profile != nil {
		if opt.Unbounded {
			return nil, errors.New("osp: the unbounded counts need a sampled run, not a profile")
		}
		lengths = rs.Profile.Sampling.Lengths
	} else {
		if sample == nil {
			return nil, errors.New("osp: ScoreRun without a profile or a program to sample")
		}
		so := opt.Sampling
		if opt.Unbounded {
			var err error
			if counts, so.Observe, err = UnboundedCounts(sample.Instrumented, so.Lengths); err != nil {
				return nil, err
			}
		}
		err := opt.Run(SampledRun, func(cfg runner.Config) (runner.Result, error) {
			prof, res, err := sample.Sample(ctx, so, cfg)
			rs.Profile = prof
			return res, err
		})
		if err != nil {
			return nil, err
		}
		if rs.Profile == nil {
			return nil, errors.New("osp: the sampled run gave no profile")
		}
	}
	err := opt.Run(TracedRun, func(cfg runner.Config) (runner.Result, error) {
		ex, res, err := trace.Trace(ctx, lengths, cfg)
		rs.Exact = ex
		return res, err
	})
	if err == nil && rs.Exact == nil {
		err = errors.New("osp: the traced run gave no counts")
	}
	if err != nil {
		return nil, err
	}
	blocks := rs.Profile.Run.BlockEntries
	if rs.Exact.Blocks != blocks {
		return nil, fmt.Errorf("the traced run made %d block entries, the sampled one %d: the runs are not comparable", rs.Exact.Blocks, blocks)
	}
	if rs.Score, err = ScoreProfile(rs.Exact, rs.Profile, ScoreTops); err != nil {
		return nil, err
	}
	for _, u := range counts {
		sc, err := u.Score(rs.Exact, blocks, ScoreTops)
		if err != nil {
			return nil, err
		}
		rs.Unbounded = append(rs.Unbounded, UnboundedScore{Every: u.Every, Score: sc})
	}
	return rs, nil
}
