package partition

// This file defines the plan: what every copy profiles, as plain data that
// round-trips through JSON in a manifest.

import (
	"cmp"
	"slices"

	"github.com/pathprof/pathprof/profile"
)

// Mode is how one copy profiles one function.
type Mode uint8

const (
	None      Mode = iota // no probes
	BallLarus             // every path, with Ball-Larus numbering
	Selective             // the paths on the interesting edges only (PSPP)
	Sliced                // every path, in the calls of some slots only
)

func (m Mode) String() string {
	switch m {
	case None:
		return "none"
	case BallLarus:
		return "ball-larus"
	case Selective:
		return "selective"
	case Sliced:
		return "sliced"
	}
	return "mode?"
}

// Plan says what every copy profiles. It is plain data and round-trips
// through encoding/json, so a manifest can carry it.
//
// Functions are named by their defined-function index (index into
// wasm.Module.Code) and edges by their index in the DAG given to Make: the
// DAG of the function's body, cut to fit a 63-bit path register. The
// instrumenter must rebuild the same DAGs.
type Plan struct {
	K        int              `json:"k"`
	Strategy profile.Strategy `json:"strategy"`
	// Funcs describes every defined function, for reports.
	Funcs  []FuncInfo `json:"funcs"`
	Copies []CopyPlan `json:"copies"`
}

// FuncInfo is what planning found out about one function.
type FuncInfo struct {
	CallSites int `json:"call_sites"`
	// Candidate: P3 may partition the function. Planned with weights
	// for P3, every function is one; else only a function with at most one
	// call site and no unknown callers (the P3 paper's rule).
	Candidate bool `json:"candidate,omitempty"`
	// Tasks are the function's tasks, in the order of their classes (or
	// its slots, see Slices); none when the function had no DAG (it is not
	// profiled).
	Tasks []TaskInfo `json:"tasks,omitempty"`
	// Freq is, for a plan made with weights, the function's measured
	// frequency per DAG edge (absent if it never ran). Every copy that
	// profiles the function, whole or in part, puts its increments on the
	// edges that ran least.
	Freq FreqList `json:"freq,omitempty"`
	// Slices is, for a function whose calls are shared out among copies,
	// the number of slots (2 to MaxSlices): the n-th call of the function
	// (from 1, counted by every copy alike) is in slot
	// instrument.SliceOfCall(n, Slices), spread evenly over them, and
	// a copy profiles, with Ball-Larus, the calls of its slots only. Its
	// tasks are then its slots, in order. The copies' counts of its paths
	// add up to the profile's.
	Slices int `json:"slices,omitempty"`
	// Loop, when not 0, makes the slots those of the iterations of one
	// loop instead of the calls: the loop whose header is DAG node Loop.
	// Its n-th iteration (from 0 at each entry into the loop) is in slot
	// n mod Slices, and the paths that never enter the loop are slot 0's.
	Loop int32 `json:"loop,omitempty"`
	// Loops, with Loop, are more loops whose iterations the same slots
	// share out alike, each one's iterations counted from 0 at each
	// entry. Every header is then a cut (the DAG ends every path that
	// reaches it, as in a function cut at its loop headers) and no loop
	// nests in another, so a path lies in one iteration of one loop at
	// most; the paths that enter none are slot 0's.
	Loops []int32 `json:"loops,omitempty"`
	// Spread, with Loop, deals the iterations out by a test at the top
	// of each, which sends the n-th to slot
	// instrument.SliceOfIteration(n, Slices) (each block of Slices
	// iterations over every slot, in a ring rotated block by block)
	// instead of n mod Slices: where an iteration runs many probes the
	// test costs little beside them, and the work of such iterations (an
	// outer loop's) often follows a residue of the loop's counter, which
	// n mod Slices would give to one slot.
	Spread bool `json:"spread,omitempty"`
}

// MaxSlices bounds FuncInfo.Slices: a copy tests its slots with one i32
// mask.
const MaxSlices = 32

// Profitable reports whether the function was split into several tasks:
// classes, or slots of its calls.
func (f *FuncInfo) Profitable() bool { return len(f.Tasks) > 1 }

// TaskInfo is one task: a class of a function's paths, a run of
// consecutive classes, or a slot of its calls.
type TaskInfo struct {
	Cost  int64 `json:"cost"`
	Copy  int   `json:"copy"`
	Edges int   `json:"edges"` // DAG edges in the task's classes
	// Classes is how many classes the task holds when more than one:
	// the tasks of a function hold its classes in order.
	Classes int `json:"classes,omitempty"`
}

// CopyPlan is one copy. A function listed in none of the lists gets no
// probes.
type CopyPlan struct {
	// Load is the sum of the costs of the copy's tasks.
	Load int64 `json:"load"`
	// BallLarus lists the functions profiled whole, ascending.
	BallLarus []int `json:"ball_larus"`
	// Selective lists the functions profiled on part of their paths,
	// ascending by function.
	Selective []SelectiveFunc `json:"selective,omitempty"`
	// Sliced lists the functions of which the copy profiles the calls of
	// some slots (FuncInfo.Slices), ascending by function.
	Sliced []SlicedFunc `json:"sliced,omitempty"`
}

// SlicedFunc is a function whose calls in the listed slots a copy profiles.
type SlicedFunc struct {
	Func  int   `json:"func"`
	Slots []int `json:"slots"` // ascending
}

// SelectiveFunc is a function profiled on the paths that use only its
// interesting edges: the union of the classes of its tasks in this copy.
type SelectiveFunc struct {
	Func  int      `json:"func"`
	Edges EdgeList `json:"edges"` // DAG edge indices, ascending
}

// Mode returns how the copy profiles defined function def, and for
// Selective its interesting DAG edges.
func (c *CopyPlan) Mode(def int) (Mode, EdgeList) {
	if _, ok := slices.BinarySearch(c.BallLarus, def); ok {
		return BallLarus, nil
	}
	i, ok := slices.BinarySearchFunc(c.Selective, def, func(s SelectiveFunc, f int) int { return cmp.Compare(s.Func, f) })
	if ok {
		return Selective, c.Selective[i].Edges
	}
	if c.Slots(def) != nil {
		return Sliced, nil
	}
	return None, nil
}

// Slots returns the slots of defined function def whose calls the copy
// profiles, or nil.
func (c *CopyPlan) Slots(def int) []int {
	i, ok := slices.BinarySearchFunc(c.Sliced, def, func(s SlicedFunc, f int) int { return cmp.Compare(s.Func, f) })
	if !ok {
		return nil
	}
	return c.Sliced[i].Slots
}

// EdgeSet turns a list of edge indices into one flag per edge.
func EdgeSet(edges []int32, numEdges int) []bool {
	s := make([]bool, numEdges)
	for _, e := range edges {
		s[e] = true
	}
	return s
}
