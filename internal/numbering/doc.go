// Package numbering implements Ball-Larus path numbering on a cfg.DAG: it
// gives every acyclic path a unique id in [0, NumPaths(entry)), turns the
// numbering into few run-time probes (event counting on the chords of a
// maximum spanning tree, then folding of the initialisation and the count),
// and maps a path id back to its edges.
//
// The steps are
//
//	n, err := Number(d)            // or Cut(d) first when Number overflows
//	inc, err := Chords(d, n, w)    // w: StaticWeights(d), a profile, or nil
//	plan, err := Place(d, n, inc, PlaceOptions{})
//	edges, kind, err := Regenerate(n, d, id)
//
// # Probe contract
//
// An instrumenter keeps one i64 local r per function and one counter per
// path id. Placement.Probes lists, sorted by Graph edge, what to insert on the
// Graph edges (cfg.Graph.Edges indices); a Graph edge that is not listed
// gets nothing. The operations are
//
//	Init        r = Value
//	Add         r += Value            (wrapping i64 addition)
//	Count       count[r + Value]++    (wrapping i64 addition)
//	CountConst  count[Value]++
//
// Every count index is in [0, Placement.NumPaths). Values may be negative and the
// intermediate values of r may be anything: only the final sum is an id,
// and it is exact under wrapping arithmetic because it lies in [0, 2^63).
//
// A Graph edge that is also a DAG edge carries at most one operation. The
// virtual entry's edge (entry -> first block) is the function start, so the
// initialisation needs no separate place, and counts that stay at the end of
// a path sit on the edges into the virtual exit.
//
// A back edge v->w of the Graph (and an edge cut by Cut, which is handled
// exactly like one) carries up to two operations, to be run in list order:
// first the operation of the DAG's dummy edge v->exit, which ends the current
// path (Count, CountConst, or nothing when the count was folded onto an
// earlier edge), then the operation of the dummy edge entry->w, which starts
// the next one (Init, CountConst when the next path is already determined,
// or nothing when no later probe reads r before setting it). The usual
// instance is "count[r + a]++; r = b".
//
// No probe reads r on any path before a probe of that path has set it, so r
// needs no initialisation of its own, and every entry-to-exit path of the
// DAG runs exactly one count, with its id. With PlaceOptions.ZeroAtEntry a
// path from the function's entry may read r before setting it, where it is
// still 0. Edges that lie on no complete path
// (their source is unreachable or their target cannot reach the exit) carry
// nothing: a path that runs into them ends in a trap.
//
// # Early termination
//
// A path still in progress when the function is left abnormally (a trap, or
// an exception thrown through a call) is not counted when its count sits at
// its end. Folding moves a count back to the last chord or branch of a path,
// after which the path is determined; a path that is then cut short inside
// the rest of it is counted although it did not finish. PlaceOptions lets a
// caller keep every count at the end when it needs the exact rule.
//
// # Overflow
//
// The path register is a signed i64, so a DAG with more than 2^63-1 paths
// cannot be numbered as it is: Number reports an *OverflowError and Cut
// splits the paths at chosen vertices, the way back edges split them at loop
// headers.
package numbering
