// What instrumentation decides per function: Func, and Mode, what one copy
// profiles in it; why a function is skipped.

package instrument

import (
	"strconv"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// Mode is a function's instrumentation in one copy: what the copy's plan
// says of it (Kind), with what that needs.
type Mode struct {
	Kind partition.Mode
	// Interesting marks the DAG edges whose paths this copy counts
	// (Selective only).
	Interesting []bool
	// Freq optionally holds a measured frequency per DAG edge: the
	// increments then go on the edges that ran least
	// (numbering.ProfileWeights), for Ball-Larus where StaticWeights
	// would guess, for Selective where PSPP's labels are not 0. Path ids
	// do not change, only where the probes sit.
	Freq []float64
	// Slices, at least 2, shares the function's calls out among copies
	// (Kind Sliced only: every path, in some calls): the n-th call (from 1) is in slot
	// SliceOfCall(n, Slices), and this copy profiles the calls in Slots; the
	// others run an unprobed copy of the body. Every call runs the test,
	// one sequence, and counts itself in an exported i64 global
	// (CallsExport), which tells the calls apart alike in every copy.
	Slices int
	Slots  []int
	// Loop, when not 0, shares out the iterations of one loop instead of
	// the calls: the loop whose header is Graph block Loop. Its n-th
	// iteration (from 0 at each entry into the loop) is in slot
	// n mod Slices. The loop's body is unrolled Slices times, so the
	// replica that runs an iteration says its slot and no test runs; the
	// copy probes the replicas of its slots only. A path lies in one
	// iteration at most, whose slot's copy counts it; the paths that never
	// enter the loop are slot 0's. See loopslices.go.
	Loop int32
	// Loops, with Loop, shares out the iterations of more loops alike,
	// each unrolled Slices times with the copy probing the replicas of
	// Slots. Every one of Loop and Loops must be a cut (every path
	// through its header starts there, as in a function cut at its loop
	// headers) and none may nest in another, so that a path lies in one
	// iteration of one of them at most.
	Loops []int32
	// Spread, with Loop, deals the iterations out by a test at the top
	// of each instead: the n-th (from 0 at each entry) goes to slot
	// SliceOfIteration(n, Slices), every copy running the test
	// (spreadReplicas).
	Spread bool
}

// CallsExport is the export name of the call counter of a function whose
// calls are shared out among copies (Mode.Slices), by its index in the
// original module.
func CallsExport(index uint32) string { return CallsPrefix + strconv.FormatUint(uint64(index), 10) }

// CallsPrefix begins the name of every CallsExport.
const CallsPrefix = "pathprof_calls_"

// Func is what instrumentation decided for one defined function.
type Func struct {
	Index  uint32 // in the original module's function index space
	Name   string
	Status profile.Status
	Graph  *cfg.Graph
	DAG    *cfg.DAG
	// Num is the Ball-Larus numbering of DAG: profile path ids are
	// Ball-Larus ids whatever the copy's numbering, so that the copies of
	// a partitioned run and a sequential run name paths alike.
	Num *numbering.Numbering
	// Placement is nil when the function has no probes; once the function
	// is emitted it keeps only NumPaths.
	Placement *numbering.Placement
	Mode      Mode
	// Sel is the PSPP labeling of a Selective function.
	Sel *numbering.Selective
	// Rev is the reverse numbering whose ids a Ball-Larus function counts
	// (nil for other modes): its ids of the paths that end at one back
	// edge are contiguous, which local loop counters need. Profiles name
	// paths by Ball-Larus ids all the same.
	Rev *numbering.Reverse
	// LoopCounters is how many i64 locals count paths of loops without
	// calls (see loops.go), IterationCounters how many of them count only
	// the paths that start at a loop's header.
	LoopCounters, IterationCounters int
	// PackedSites is how many back edges count their paths in one
	// local, several counters packed in its bits.
	PackedSites int
	// CountedLoops is how many loops leave their back edges without
	// probes, their iterations counted from the local that drives them
	// where they are left (see counted.go).
	CountedLoops int
	// Blockwise marks a Segments function that could not be numbered:
	// every block is a path of its own (see Segments).
	Blockwise bool
	// Cuts are the blocks at which the DAG was cut to fit 63 bits (for
	// Segments, IDBits).
	Cuts []int32
	// origOff is the original body's file offset and bodyMap the edited
	// body's offset map (before probes were added: the graph's offsets).
	origOff int
	bodyMap *wasm.OffsetMap
	// seqs holds, per Graph edge, how many instrumentation sequences run
	// when the edge is taken: the probe hits of the edge.
	seqs []uint8
	// bare holds the back edges of counted loops, which run no sequence.
	bare map[int32]bool
	// counted is the function's counted loops, planned before any
	// function is emitted (the copy then has their global), or nil;
	// countedShapes, in an analysis, the back edges of loops shaped so.
	counted       *countedLoops
	countedShapes map[int32]bool
	// sizes is what emitting added to the body, by kind.
	sizes Sizes
	// loop holds the rest of them where a loop's iterations are shared
	// out (Mode.Loop).
	loop *loopSlices

	// Between planning and emitting: the body's structure, the probes per
	// Graph edge and the scratch locals.
	scan           *scan
	ops            [][]numbering.Op
	reg, cond, idx uint32
	// next is the first local after the scratch locals.
	next uint32
	// inlineHash makes every hashed count of the function probe the
	// table inline rather than call, where hashCalls of them would have
	// called (see chooseInlineHash).
	inlineHash bool
	hashCalls  int
	// sharedTypes is set while the function is emitted beside others:
	// it may then use the module's types but not add one (errNewType).
	sharedTypes bool
	// order is the DAG's edges in the order of the weights the
	// Ball-Larus probes were placed by (nil for other modes).
	order *numbering.TreeOrder
}

// StaticOrder returns the order of the DAG's edges by
// numbering.StaticWeights that placed the probes of a Ball-Larus function
// without frequencies, or nil: what partition.Options.StaticOrders takes.
func (f *Func) StaticOrder() *numbering.TreeOrder {
	if f.Mode.Kind != partition.BallLarus || f.Mode.Freq != nil {
		return nil
	}
	return f.order
}

// BlockOffset returns the original file offset of block b's first instruction.
func (f *Func) BlockOffset(b int32) int {
	return f.origOff + int(f.bodyMap.Orig(f.Graph.Blocks[b].Start))
}

// InstrOffset returns the original file offset of the instruction at body
// offset off (a Graph edge's Instr).
func (f *Func) InstrOffset(off uint32) int {
	return f.origOff + int(f.bodyMap.Orig(off))
}

type skipError string

func (e skipError) Error() string { return string(e) }
