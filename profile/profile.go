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
	Version = 1
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
	// ExitCode is the program's exit code.
	ExitCode  uint32     `json:"exit_code"`
	Runs      []Run      `json:"runs"`
	Functions []Function `json:"functions"`
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
	// Cuts lists the blocks (by offset) at which the DAG was cut because
	// the function has more paths than a 64-bit register can number.
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
}
