// Package cfg builds the control-flow graph of each WebAssembly function and
// the acyclic graph (the Ball-Larus DAG) whose entry-to-exit paths are the
// paths a path profiler counts.
//
// Nodes 0 and 1 of every graph are a virtual entry and exit: the entry has one
// edge to the first real block, so that a loop at the very start of a function
// never makes the entry a loop header, and every way of leaving the function
// (falling off its end, return, br to the outermost label, a tail call, a
// throw that no handler in the function catches) is an edge into the exit.
package cfg

import "math/big"

// Node indices of the virtual entry and exit of every Graph and DAG.
const (
	Entry = 0
	Exit  = 1
)

// EdgeKind says which instruction, or which rule of the DAG construction, made an edge.
type EdgeKind uint8

const (
	EdgeEntry       EdgeKind = iota // virtual entry -> first block
	EdgeFallthrough                 // straight-line flow into a join or loop header
	EdgeBr                          // br
	EdgeBrIfTaken                   // br_if, condition true
	EdgeBrIfNot                     // br_if, condition false
	EdgeBrTable                     // br_table: one edge per distinct target, arms merged
	EdgeIfThen                      // if, condition true
	EdgeIfElse                      // if, condition false (to the else arm, or past the end)
	EdgeBrOnNull                    // br_on_null / br_on_non_null, branch taken
	EdgeBrOnNullNot                 // br_on_null / br_on_non_null, branch not taken
	EdgeReturn                      // return, or falling off the function's end
	EdgeTailCall                    // return_call, return_call_indirect, return_call_ref
	EdgeThrow                       // throw/throw_ref/rethrow that leaves the function
	EdgeException                   // a possibly throwing instruction -> a handler in this function
	EdgeNoReturn                    // a call that never returns (e.g. proc_exit) -> exit
	EdgeDummyEntry                  // DAG only: entry -> target of a back edge
	EdgeDummyExit                   // DAG only: source of a back edge -> exit
	EdgeCall                        // Options.SplitCalls: a call's block -> its continuation
	EdgeThread                      // Options.Thread: a dispatch header's copy -> the jump's target
)

var edgeKindNames = [...]string{
	"entry", "fallthrough", "br", "br_if", "br_if_not", "br_table", "if", "else",
	"br_on_null", "br_on_null_not", "return", "tail_call", "throw", "exception",
	"no_return", "dummy_entry", "dummy_exit", "call", "thread",
}

func (k EdgeKind) String() string {
	if int(k) < len(edgeKindNames) {
		return edgeKindNames[k]
	}
	return "edge?"
}

// Block is a maximal straight-line run of reachable instructions.
// Offsets are byte offsets of the original function body's instructions,
// relative to the start of the body (its locals declarations included), so
// adding Code.Offset gives the offset in the module file.
type Block struct {
	Start, End uint32 // [Start, End): the block's instructions
	Instrs     uint32 // number of instructions
	Out, In    []int32
	// Cont marks the continuation of a block after a call
	// (Options.SplitCalls): the same basic block, so entering it is not
	// a block entry.
	Cont bool
	// Same, when not 0, is the node whose block this node is: the
	// header of a dispatch loop, entered by one jump (Options.Thread).
	Same int32
}

// Edge is a directed control-flow edge between two nodes. (The small
// fields come first, so that they share one word of padding.)
type Edge struct {
	From, To int32
	// Instr is the body offset of the instruction that makes the edge
	// (the branch, or the block's last instruction for fallthrough).
	Instr uint32
	Kind  EdgeKind
	// Back marks an edge closing a cycle in the depth-first search from
	// the entry: its target was still on the DFS stack.
	Back bool
	// Arms lists the br_table arm indices merged into this edge; the
	// default arm is len(table), as in the instruction's encoding order.
	Arms []uint32
}

// Cuts reports whether paths end at the edge: a back edge, or a call edge
// of Options.SplitCalls. The DAG replaces such edges by dummy edges.
func (e *Edge) Cuts() bool { return e.Back || e.Kind == EdgeCall }

// Graph is the control-flow graph of one function. Blocks[0] and Blocks[1]
// are the virtual entry and exit; they hold no instructions.
type Graph struct {
	Blocks []Block
	Edges  []Edge
}

// DAGEdge is an edge of the Ball-Larus DAG: either a non-back edge of the
// Graph (Orig >= 0), or a dummy edge standing in for back edges (Orig < 0).
type DAGEdge struct {
	From, To int32
	Kind     EdgeKind
	// Orig is the Graph edge this edge is, or -1 for a dummy edge.
	Orig int32
	// Back lists, for a dummy edge, the Graph back edges it stands for:
	// entry->w stands for every back edge into w, v->exit for every back edge out of v.
	Back []int32
}

// DAG is the acyclic graph of a Graph: back edges (and call edges) removed,
// a dummy edge entry->w added once per back-edge target w and v->exit once
// per back-edge source v. Node numbering is the Graph's.
type DAG struct {
	NumNodes int
	Edges    []DAGEdge
	Out, In  [][]int32 // edge indices per node, in a fixed order
	// Topo lists the nodes reachable from the entry in topological order
	// (entry first).
	Topo []int32
}

// PathCount is an exact number of acyclic paths. Small holds it when it fits
// in 63 bits; otherwise Big does and Small is meaningless.
type PathCount struct {
	Small uint64
	Big   *big.Int
}

// Int returns the count as a big.Int.
func (c PathCount) Int() *big.Int {
	if c.Big != nil {
		return new(big.Int).Set(c.Big)
	}
	return new(big.Int).SetUint64(c.Small)
}

// Fits63 reports whether the count fits in a signed 64-bit path register.
func (c PathCount) Fits63() bool { return c.Big == nil && c.Small <= 1<<63-1 }

func (c PathCount) String() string { return c.Int().String() }
