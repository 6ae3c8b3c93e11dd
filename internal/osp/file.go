// The OSP profile file: Profile and its parts, written and read as JSON.

package osp

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/pathprof/pathprof/internal/atomicfile"
)

// Format and Version identify an OSP profile file (docs/osp.md).
const (
	Format  = "pathprof-osp"
	Version = 4
)

// Profile is what an OSP run found: the sampled hot subpaths with their
// estimated frequencies, and the facts of the run. It is written as JSON.
type Profile struct {
	Format   string   `json:"format"`
	Version  int      `json:"version"`
	Module   Module   `json:"module"`
	Run      RunFacts `json:"run"`
	Sampling Sampling `json:"sampling"`
	Memory   Memory   `json:"memory"`
	// Functions names the functions that blocks of Subpaths belong to.
	Functions []Function `json:"functions"`
	// Subpaths holds every pair of the hot list, by estimate, highest
	// first.
	Subpaths []Subpath `json:"subpaths"`
}

// Module identifies the profiled module.
type Module struct {
	Path   string `json:"path"`
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
	// Blocks is the number of basic blocks instrumented.
	Blocks int `json:"blocks"`
}

// RunFacts describes the run.
type RunFacts struct {
	Args     []string `json:"args"`
	ExitCode uint32   `json:"exit_code"`
	// Complete is false when the run trapped or was interrupted; the
	// samples taken until then are kept.
	Complete bool   `json:"complete"`
	Error    string `json:"error,omitempty"`
	// Seconds is the run's time (instantiation and execution).
	Seconds float64 `json:"seconds"`
	// BlockEntries is the exact number of basic-block entries of the run.
	BlockEntries uint64 `json:"block_entries"`
}

// Sampling describes how the subpaths were sampled.
type Sampling struct {
	Seed     uint64  `json:"seed"`
	MeanSkip float64 `json:"mean_skip"`
	Lengths  []int   `json:"lengths"`
	// SampleBlocks is the number of blocks each sample recorded: the
	// longest length.
	SampleBlocks int `json:"sample_blocks,omitempty"`
	// Compact says that the hot list coded subpaths with the module's
	// block model (unless Options.Plain, the default).
	Compact bool `json:"compact,omitempty"`
	// Concise says that the hot list kept concise samples instead of
	// counting samples (Options.Concise).
	Concise bool `json:"concise,omitempty"`
	// Samples is the number of complete samples taken, SampledBlocks the
	// block entries recorded (a sample cut short by the end of the run
	// included).
	Samples       uint64        `json:"samples"`
	SampledBlocks uint64        `json:"sampled_blocks"`
	ByLength      []LengthFacts `json:"by_length"`
}

// LengthFacts are the sampling facts of one length.
type LengthFacts struct {
	Length int `json:"length"`
	// Windows is the number of subpaths of this length offered to the
	// hot list: Windows(M, L) per sample of M blocks, every fourth block's
	// for L ≤ M/2 (L ≤ M/4 in earlier files of version 4)
	// and ⌊M/L⌋ that do not overlap for longer ones
	// (HotList.AddSample); before version 4, min(⌊M/L⌋, 4).
	Windows uint64 `json:"windows"`
	// Scale is BlockEntries / Windows: one subpath of this length was
	// offered per Scale block entries.
	Scale float64 `json:"scale"`
	// Tau is the length's sample threshold τ at the end, Raises how
	// often it was raised, Bytes what its pairs took of the hot list.
	Tau float64 `json:"tau"`
	// Counting is true where the length's sample is a counting sample
	// (HotList, Kind).
	Counting bool `json:"counting,omitempty"`
	Raises   int  `json:"raises"`
	Bytes    int  `json:"bytes"`
	// Pairs is the number of distinct subpaths of this length in the hot
	// list.
	Pairs int `json:"pairs"`
	// Floor is 3·τ·BlockEntries/Samples: a subpath of this length that
	// ran at least that often is in the hot list with probability at
	// least 95%.
	Floor float64 `json:"floor"`
}

// Memory is what the profiler held while the program ran.
type Memory struct {
	// Bound is the bound on HotListBytes (--memory).
	Bound int `json:"bound"`
	// HotListBytes is the samples' memory (HotList.Bytes).
	HotListBytes int `json:"hot_list_bytes"`
	// BufferBytes is the recorder's memory (its area in the program's
	// memory and the Go buffers the records are copied into), whatever
	// the bound.
	BufferBytes int `json:"buffer_bytes"`
	// Pairs is the number of distinct subpaths in the hot list.
	Pairs int `json:"pairs"`
}

// Function is a function of the original module.
type Function struct {
	Index uint32 `json:"index"`
	Name  string `json:"name,omitempty"`
}

// Subpath is one sampled subpath.
type Subpath struct {
	Length int `json:"length"`
	// Count is how many occurrences of it the hot list holds, Squares
	// the sum over samples of the square of their number in the sample.
	Count   uint64 `json:"count"`
	Squares uint64 `json:"squares"`
	// Estimate is its estimated number of occurrences: (Count + τ − 1)·
	// Scale (of its length) in a counting sample, Count·τ·Scale in a
	// concise one (Estimate).
	Estimate float64 `json:"estimate"`
	// Error is the half-width of a 95% interval around Estimate: 1.96
	// times the square root of the variance Estimate gives, times
	// Scale.
	Error  float64    `json:"error"`
	Blocks []BlockRef `json:"blocks"`
}

// BlockRef is a basic block: its function (index in the original module)
// and the file offset of its first instruction in the original module.
type BlockRef struct {
	Func   uint32 `json:"func"`
	Offset int    `json:"offset"`
}

// Offsets returns the file offsets of the subpath's blocks.
func (s *Subpath) Offsets() []int {
	o := make([]int, len(s.Blocks))
	for i, b := range s.Blocks {
		o[i] = b.Offset
	}
	return o
}

// WriteFile writes p as indented JSON through a temporary file renamed
// into place, so that a failure leaves any earlier file whole.
func WriteFile(path string, p *Profile) error {
	b, err := json.MarshalIndent(p, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadFile reads an OSP profile (see Decode).
func ReadFile(path string) (*Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Decode decodes an OSP profile, refusing other formats and versions. It
// also reads version 2, whose samples were all concise (as its lengths
// without Counting say), and version 1, whose samples offered one subpath
// of each length (their prefix), so that a subpath's Squares are its
// Count.
func Decode(b []byte) (*Profile, error) {
	var p Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, err
	}
	if p.Format != Format {
		return nil, fmt.Errorf("not an OSP profile (format %q, want %q)", p.Format, Format)
	}
	if p.Version < 1 || p.Version > Version {
		return nil, fmt.Errorf("OSP profile version %d, this pathprof reads versions 1 to %d", p.Version, Version)
	}
	for i, s := range p.Subpaths {
		if p.Version == 1 {
			p.Subpaths[i].Squares = s.Count
		}
		if s.Length != len(s.Blocks) || s.Length == 0 {
			return nil, fmt.Errorf("subpath %d has length %d and %d blocks", i, s.Length, len(s.Blocks))
		}
	}
	return &p, nil
}
