package profiler

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/profile"
)

// A work directory written with a runs file holds units of work: each
// is one copy run on one input, independent of every other, so that a
// batch engine can run them anywhere the directory is. Each writes its
// part under parts/, and the parts of a run's copies merge into that
// run's profile as if the run had been profiled in one process.

// Unit is one copy on one run (an index into Manifest.Runs).
type Unit struct {
	Copy int `json:"copy"`
	Run  int `json:"run"`
}

// SetRuns makes man's units: every copy on each of the runs labelled
// labels, numbered run by run (unit r·k + c is copy c on run r).
func (man *Manifest) SetRuns(labels []string) {
	man.Runs = labels
	man.Units = man.Units[:0]
	for r := range labels {
		for c := 0; c < man.Copies; c++ {
			man.Units = append(man.Units, Unit{Copy: c, Run: r})
		}
	}
}

// UnitPart is where unit u's part is written in dir.
func UnitPart(dir string, u int) string {
	return filepath.Join(dir, "parts", fmt.Sprintf("unit-%d.json", u))
}

// UnitSeconds is where unit u's run time is written in dir, apart from
// its part so that every run of the unit writes the same part.
func UnitSeconds(dir string, u int) string {
	return filepath.Join(dir, "parts", fmt.Sprintf("unit-%d.seconds", u))
}

// NewUnitPart is NewPart for unit u, whose run is labelled label and
// was given the input in cfg and stdin.
func NewUnitPart(man *Manifest, u int, run *CopyRun, outputSum []byte, label string, cfg runner.Config, stdin []byte) *Part {
	p := NewPart(man, man.Units[u].Copy, run, outputSum)
	p.Unit, p.Seconds = &u, 0
	args := cfg.Args
	if args == nil {
		args = []string{}
	}
	p.Input = &profile.Input{Label: label, Args: args, InputSHA256: InputSHA256(cfg, stdin)}
	return p
}

// MergeRun merges the parts of the units of one run, one per copy, into
// that run's profile, which records the run as its one input, as
// Worker.Profile's does.
func MergeRun(man *Manifest, cs *Copies, parts []*Part) (*profile.Profile, error) {
	if len(parts) == 0 {
		return nil, errors.New("no parts to merge")
	}
	var in *profile.Input
	for _, p := range parts {
		if p.Unit == nil || p.Input == nil || *p.Unit < 0 || *p.Unit >= len(man.Units) {
			return nil, fmt.Errorf("part of copy %d is not a unit's of this directory", p.Copy)
		}
		u := man.Units[*p.Unit]
		if u.Copy != p.Copy || man.Runs[u.Run] != p.Input.Label {
			return nil, fmt.Errorf("part of unit %d is not copy %d of run %q", *p.Unit, u.Copy, man.Runs[u.Run])
		}
		if in == nil {
			in = p.Input
		} else if p.Input.Label != in.Label || p.Input.InputSHA256 != in.InputSHA256 {
			return nil, fmt.Errorf("parts of units %d and %d are of different runs", *parts[0].Unit, *p.Unit)
		}
	}
	prof, err := MergeParts(man, cs, parts)
	if err != nil {
		return nil, err
	}
	prof.Inputs = []profile.Input{inputRecord(prof, in.Label, in.Args, in.InputSHA256)}
	if !prof.Complete && prof.Interrupted == nil {
		return prof, fmt.Errorf("incomplete profile: %s", prof.Incomplete)
	}
	return prof, nil
}
