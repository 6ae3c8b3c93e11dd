// Options: the sampling settings of a run, their defaults and checks.

package osp

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Options configures sampling.
type Options struct {
	// Memory bounds the hot list's bytes (HotList.Bytes); default
	// DefaultMemory.
	Memory int
	// Lengths are the subpath lengths, in blocks; default 2, 4, ..., 64.
	// Every sample records the longest, and offers the hot list
	// Windows(longest, L) subpaths of each length L from it.
	Lengths []int
	// MeanSkip is the mean number of block entries from the end of one
	// sample to the start of the next (geometrically distributed);
	// default DefaultMeanSkip.
	MeanSkip float64
	// Seed fixes the skips and the hot list's coin flips.
	Seed uint64
	// Plain makes the hot list code each subpath as differences of
	// block ids, instead of as the choices it makes among the blocks
	// that may follow each of its blocks (a model of the module's
	// blocks, the default). The model's code takes about a third of the
	// bytes, so that where the bound makes the hot list thin its
	// samples, τ stays lower and the long subpaths' estimates are
	// closer; only a subpath that gets a pair is coded, so the worker's
	// time per sample barely changes (see docs/osp.md).
	Plain bool
	// Concise makes the hot list keep concise samples instead of
	// counting samples (HotList, Kind): a subpath's elements are then
	// counted one in τ even once it holds a pair, so that where the
	// bound thins a length the hottest subpaths' counts are far less
	// exact, for a worker that looks up only the elements that enter.
	Concise bool
	// Observe, if set, is handed each sample's blocks, in order, one call
	// at a time, as the hot list is (the slice is reused after the
	// call): for yardsticks such as Unbounded. It runs in the sampling
	// worker, so it slows the run.
	Observe func(blocks []uint32)
	// Stop, if set, ends the sampling when it receives a reason (a signal's
	// name): Sample then returns at once the samples taken until then,
	// marked incomplete, with an *Interrupted error (wrapped, with no
	// profile, if the sampling had failed), while the program may still
	// be running. Its code stays in use, so the caller is to write
	// the profile and exit rather than go on; the collector is off from
	// then on, since a collection would wait for the program to call out.
	Stop <-chan string
}

// Interrupted is the error of a run whose sampling Options.Stop ended.
type Interrupted struct {
	Reason string
	After  time.Duration
}

func (e *Interrupted) Error() string {
	return fmt.Sprintf("interrupted (%s) after %.1fs: the samples taken until then", e.Reason, e.After.Seconds())
}

// Defaults of Options.
const (
	DefaultMemory   = 1 << 20
	DefaultMeanSkip = 6000
)

// DefaultLengths are the default subpath lengths.
var DefaultLengths = []int{2, 4, 8, 16, 32, 64}

// Check reports what is wrong with o, defaults filled in, if anything.
func (o Options) Check() error { return o.fill() }

// Filled returns o with its defaults filled in, or what is wrong with it.
func (o Options) Filled() (Options, error) {
	err := o.fill()
	return o, err
}

func (o *Options) fill() error {
	if o.Memory == 0 {
		o.Memory = DefaultMemory
	}
	if len(o.Lengths) == 0 {
		o.Lengths = DefaultLengths
	}
	if o.MeanSkip == 0 {
		o.MeanSkip = DefaultMeanSkip
	}
	if !(o.MeanSkip >= 1) || o.MeanSkip > 1<<30 {
		return fmt.Errorf("mean skip %v out of range [1, 2^30]", o.MeanSkip)
	}
	if err := checkLengths(o.Lengths); err != nil {
		return err
	}
	return nil
}

func checkLengths(ls []int) error {
	if len(ls) == 0 {
		return errors.New("no sample lengths")
	}
	for i, l := range ls {
		if l < 1 || l > MaxLength {
			return fmt.Errorf("sample length %d out of range [1, %d]", l, MaxLength)
		}
		if slices.Contains(ls[:i], l) {
			return fmt.Errorf("sample length %d given twice", l)
		}
	}
	return nil
}
