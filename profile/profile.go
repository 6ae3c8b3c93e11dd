// Package profile holds the path profile file format: what a run of an
// instrumented module counted, per function and path, with enough facts
// about the module and the run to check and report it.
package profile

import (
	"fmt"
	"slices"
)

// Format and Version identify the file format (docs/profile-format.md).
const (
	Format  = "pathprof-profile"
	Version = 2
)

// Path kinds: where an acyclic path starts and ends.
const (
	KindEntryExit = "entry-exit" // function entry to function exit
	KindEntryBack = "entry-back" // function entry to a back edge (loop iteration ends)
	KindBackBack  = "back-back"  // loop header (after a back edge) to a back edge
	KindBackExit  = "back-exit"  // loop header (after a back edge) to function exit
)

// Strategy is how the copies of a profile were planned (docs/p3.md). Its
// values are the file's strings.
type Strategy string

// Strategies.
const (
	SBL Strategy = "sbl" // one copy, every function profiled whole
	PBL Strategy = "pbl" // k copies, every function profiled whole in one of them
	P3  Strategy = "p3"  // k copies, profitable functions split over several
)

// Mixed is the strategy of a profile that merges runs of different
// strategies or copies; each of its inputs names its own.
const Mixed Strategy = "mixed"

// Strategies lists the strategies a profile file may name.
var Strategies = []Strategy{SBL, PBL, P3}

// ParseStrategy returns the strategy named s.
func ParseStrategy(s string) (Strategy, error) {
	if st := Strategy(s); slices.Contains(Strategies, st) {
		return st, nil
	}
	return "", fmt.Errorf("unknown strategy %q (want sbl, pbl or p3)", s)
}

func (s Strategy) String() string { return string(s) }

// Status is a function's status: StatusProfiled, or Skipped(REASON) for a
// function pathprof does not instrument.
type Status string

// StatusProfiled is the status of an instrumented function.
const StatusProfiled Status = "profiled"

// skippedPrefix begins a Skipped status (a bare "skipped" is read too).
const skippedPrefix = "skipped: "

// Skipped is the status of a function left uninstrumented for reason.
func Skipped(reason string) Status { return Status(skippedPrefix + reason) }

// Profile is one profile file.
type Profile struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Module  Module `json:"module"`
	// Strategy is SBL, PBL or P3; Copies is k.
	Strategy Strategy `json:"strategy"`
	Copies   int      `json:"copies"`
	// Complete is false when the run did not finish normally (a trap, a
	// missing import, an interrupted run) or a copy's counts were lost;
	// Incomplete says why. The counts present are still exact for the
	// paths that completed, except that a trap at an instruction inside a
	// loop with loop counters also loses the paths that loop completed
	// since it was entered (docs/instrumentation.md).
	Complete   bool   `json:"complete"`
	Incomplete string `json:"incomplete,omitempty"`
	// Interrupted is set when the run was stopped before it ended (a
	// signal, a timeout) and its counts read as they stood: the profile is
	// then incomplete too.
	Interrupted *Interruption `json:"interrupted,omitempty"`
	// Weights says what the copies of a PBL or P3 run were planned by;
	// absent for SBL.
	Weights *Weights `json:"weights,omitempty"`
	// ExitCode is the program's exit code; in a profile of several
	// inputs, the first failing input's, or 0.
	ExitCode uint32 `json:"exit_code"`
	// Inputs are the program runs the profile counts, one per input:
	// one for a single run, several for a merge or a runs file. A
	// profile of version 1 has none, and counts one run.
	Inputs []Input `json:"inputs,omitempty"`
	// Stubs lists the program's imports that pathprof provided as stubs
	// (--stub, --stub-missing), in the order given, then import order.
	Stubs []Stub `json:"stubs,omitempty"`
	// Region, when set, says that only the paths that ended inside the
	// region of interest were counted (docs/profile-format.md#region).
	Region *Region `json:"region,omitempty"`
	// UncoveredFrom, when set, says that the runs counted only what an
	// earlier profile did not cover, and lists the paths they newly
	// covered (docs/profile-format.md#uncovered_from).
	UncoveredFrom *Uncovered `json:"uncovered_from,omitempty"`
	Runs          []Run      `json:"runs"`
	Functions     []Function `json:"functions"`
}

// Sources of a plan's weights (Weights.Source).
const (
	WeightsStatic   = "static"   // static probe counts, as in the P3 paper
	WeightsEstimate = "estimate" // a static estimate of the run
	WeightsProfile  = "profile"  // a profile given by the user (--weights)
	WeightsPrevious = "previous" // the previous profile kept for the module
)

// Weights says what a partitioned run's plan was weighted by.
type Weights struct {
	// Source is WeightsStatic, WeightsEstimate, WeightsProfile or
	// WeightsPrevious.
	Source string `json:"source"`
	// SHA256 is, for a profile, the digest of the module it profiled:
	// for a previous profile of an earlier build, not this module's.
	SHA256 string `json:"sha256,omitempty"`
	// Matched is, for a previous profile of an earlier build, how many
	// of the functions it ran were matched in this module by name and
	// control-flow shape, of Ran; the others were planned as if they
	// never ran.
	Matched int `json:"matched,omitempty"`
	Ran     int `json:"ran,omitempty"`
}

// String says in words what a plan was weighted by.
func (w *Weights) String() string {
	switch w.Source {
	case WeightsStatic:
		return "static probe counts"
	case WeightsEstimate:
		return "a static estimate of the run (no profile of this module yet)"
	case WeightsProfile:
		return "the profile given (module sha256 " + w.SHA256 + ")"
	case WeightsPrevious:
		if w.Ran > 0 {
			return fmt.Sprintf("the previous profile of an earlier build at this path (module sha256 %s): %d of the %d functions it ran matched by name and control-flow shape", w.SHA256, w.Matched, w.Ran)
		}
		return "the previous profile of this module (sha256 " + w.SHA256 + ")"
	}
	return w.Source
}

// Input is one run of the program (one input: arguments, environment,
// standard input, mounts) that a profile counts, and how it was run.
type Input struct {
	// Label names the run for people: a runs file's label, a test's name.
	Label string   `json:"label"`
	Args  []string `json:"args"`
	// InputSHA256 identifies the input without revealing it: see
	// InputDigest. "" when unknown (a merged version 1 profile).
	InputSHA256 string   `json:"input_sha256,omitempty"`
	Strategy    Strategy `json:"strategy"`
	Copies      int      `json:"copies"`
	// Complete, Incomplete, Interrupted and ExitCode say how this run
	// ended, as the profile's own fields do for a single run.
	Complete    bool          `json:"complete"`
	Incomplete  string        `json:"incomplete,omitempty"`
	Interrupted *Interruption `json:"interrupted,omitempty"`
	ExitCode    uint32        `json:"exit_code"`
	// Seconds is the run's wall-clock time (its slowest copy's).
	Seconds float64 `json:"seconds"`
	// Stubs and Region are this run's, as the profile's own fields are
	// for a single run; a merged profile's are their sums.
	Stubs  []Stub  `json:"stubs,omitempty"`
	Region *Region `json:"region,omitempty"`
	// Invoked lists the exports called (pathprof profile --invoke) in
	// place of _start, in order, with what each returned.
	Invoked []Invocation `json:"invoked,omitempty"`
}

// Invocation is one call of an export and what it returned.
type Invocation struct {
	// Call is NAME(ARG, ...) as given.
	Call    string   `json:"call"`
	Results []string `json:"results"`
}

// Interruption says why and when a run was stopped before it ended. Its
// counts were read from memory while the program ran: every count is at
// most the full run's, and a path the run had not completed, or had
// completed but not yet written to memory (docs/instrumentation.md: loop
// counters), is missing.
type Interruption struct {
	// Reason is what stopped the run: "SIGINT", "SIGTERM" or "timeout";
	// or SnapshotReason for a snapshot written while the run went on.
	Reason string `json:"reason"`
	// Time is when the counts were read (RFC 3339, UTC), Seconds how long
	// the copies had been running then.
	Time    string  `json:"time"`
	Seconds float64 `json:"seconds"`
	// Approximate is set when several copies were read: each was read at
	// the same moment, but each had reached a different point of the
	// program, so the merged paths come from different points of the run.
	Approximate bool `json:"approximate,omitempty"`
}

// SnapshotReason is the reason of a snapshot: counts read while the run
// went on (pathprof profile --snapshot-every), written so that a run that
// never ends normally, such as one killed, leaves its work up to then. A
// file that still holds a snapshot is from a run pathprof did not see end.
const SnapshotReason = "snapshot"

// Stub is an import pathprof provided: a function that returns zero, or
// Result, and does nothing else.
type Stub struct {
	// Import is MODULE.NAME.
	Import string `json:"import"`
	Result string `json:"result,omitempty"`
	// Calls is how often the program called it (in one copy's run: every
	// copy runs the same program).
	Calls uint64 `json:"calls"`
}

// Region is the region of interest a profile was limited to: between
// calls of the imports Start and End, or while the function Func is on
// the stack. A path counts when it ends (when its count is added) while
// the region is open; a path that was in progress when the region opened
// or closed is cut by the boundary, and Cut says where.
type Region struct {
	// Start and End are the marker imports (MODULE.NAME); Func is the
	// function, by the name given. Either the markers or Func is set.
	Start string `json:"start,omitempty"`
	End   string `json:"end,omitempty"`
	Func  string `json:"func,omitempty"`
	// Opened and Closed count how often the region opened and closed
	// (with markers: calls of Start while closed and of End while open;
	// other calls of the markers change nothing).
	Opened uint64 `json:"opened"`
	Closed uint64 `json:"closed"`
	// Cut lists per function how many of its paths were in progress at a
	// boundary: when the region opened (counted, though part of them ran
	// before) and when it closed (not counted, though part of them ran
	// inside).
	Cut []Cut `json:"cut,omitempty"`
	// CutPartial is set when a boundary was crossed under more frames
	// than the runtime's call stack shows (29): Cut then leaves out the
	// paths of the frames below.
	CutPartial bool `json:"cut_partial,omitempty"`
}

// Cut is how many paths of one function a region's boundaries cut.
type Cut struct {
	Index  uint32 `json:"index"`
	AtOpen uint64 `json:"at_open"`
	// AtClose counts the paths in progress when the region closed.
	AtClose uint64 `json:"at_close"`
}

// Module identifies the profiled (original, uninstrumented) module.
type Module struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int    `json:"size"`
	// CodeOffset is the file offset of the code section's payload: block
	// offsets minus CodeOffset are the addresses DWARF uses.
	CodeOffset int `json:"code_offset"`
}

// Run is one copy's run.
type Run struct {
	// Input is the index in Inputs of the run this copy ran; 0 when the
	// profile has one input.
	Input     int     `json:"input,omitempty"`
	Copy      int     `json:"copy"`
	ProbeHits uint64  `json:"probe_hits"`
	Seconds   float64 `json:"seconds"`
	ExitCode  uint32  `json:"exit_code"`
	Error     string  `json:"error,omitempty"`
}

// Function is one defined function's paths.
type Function struct {
	Index  uint32 `json:"index"` // in the original module's function index space
	Name   string `json:"name,omitempty"`
	Status Status `json:"status"`
	// PossiblePaths is the number of acyclic paths of the function's DAG
	// (after cuts), in decimal.
	PossiblePaths string `json:"possible_paths"`
	// Cuts lists the blocks (by offset) at which the DAG was cut: the loop
	// headers of a function of many paths, and more blocks where a 64-bit
	// register could not number its paths.
	Cuts  []int  `json:"cuts,omitempty"`
	Paths []Path `json:"paths"`
}

// Path is one executed acyclic path.
type Path struct {
	ID    uint64 `json:"id"`
	Count uint64 `json:"count"`
	Kind  string `json:"kind"`
	// Blocks are the file offsets, in the original module, of the first
	// instruction of each basic block on the path, in order.
	Blocks []int `json:"blocks"`
	// ByInput attributes Count to the profile's inputs, in input order,
	// when it has more than one: which runs executed the path and how
	// often. Absent for a profile of one input, whose count is its own.
	ByInput []InputCount `json:"by_input,omitempty"`
}

// InputCount is how often the input with index Input executed a path. It
// is written as the pair [input, count] to keep attributions compact.
type InputCount struct {
	Input int
	Count uint64
}

// Uncovered is what a profile made with --uncovered-from counts: the
// paths its base did not cover, which it lists, and of the covered ones
// only those that share no probes with the others.
type Uncovered struct {
	// Base names the base profile as given.
	Base string `json:"base"`
	// BaseInputs is how many runs the base counts.
	BaseInputs int `json:"base_inputs"`
	// NewPaths are the paths the runs executed that the base did not,
	// as [function index, path id], by function then id.
	NewPaths [][2]uint64 `json:"new_paths"`
}
