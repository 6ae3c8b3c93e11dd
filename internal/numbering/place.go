package numbering

// This file places a numbering's probes: its operations on the DAG's
// edges, the initialisation and count folded onto chords and branches,
// then the probes on the Graph's edges that an instrumenter inserts.

import (
	"errors"
	"fmt"

	"github.com/pathprof/pathprof/internal/cfg"
)

// ProbeKind is the operation of a probe; see the package doc for the
// contract.
type ProbeKind uint8

const (
	None       ProbeKind = iota
	Init                 // r = Value
	Add                  // r += Value
	Count                // count[r + Value]++
	CountConst           // count[Value]++
)

var probeKindNames = [...]string{"none", "init", "add", "count", "count_const"}

func (k ProbeKind) String() string {
	if int(k) < len(probeKindNames) {
		return probeKindNames[k]
	}
	return "probe?"
}

// Op is one run-time operation on the path register and counters.
type Op struct {
	Kind  ProbeKind
	Value int64
}

func (o Op) String() string {
	switch o.Kind {
	case Init:
		return fmt.Sprintf("r = %d", o.Value)
	case Add:
		return fmt.Sprintf("r += %d", o.Value)
	case Count:
		return fmt.Sprintf("count[r + %d]++", o.Value)
	case CountConst:
		return fmt.Sprintf("count[%d]++", o.Value)
	}
	return o.Kind.String()
}

// Probe is an operation placed on a Graph edge.
type Probe struct {
	Edge int32 // index into cfg.Graph.Edges
	Op
}

// Placement is the instrumentation of one function: the operation of every
// DAG edge and the probes that carry them out.
type Placement struct {
	// NumPaths is the size of the counter array: every count index is in
	// [0, NumPaths).
	NumPaths int64
	// Ops holds the operation of each DAG edge, indexed like d.Edges. The
	// operation of a dummy edge runs on the Graph edges in its Back list.
	Ops []Op
	// Probes is what to insert on Graph edges, sorted by Edge. A back edge
	// has up to two probes, in the order they must run; any other edge at
	// most one.
	Probes []Probe
}

// PlaceOptions adjusts Place.
type PlaceOptions struct {
	// NoCountFolding keeps every count on an edge into the exit (a real
	// exit edge or a back edge), so that only paths that reach their end
	// are counted. Without it a count moves back over edges whose source
	// has no other out edge, as in the seed.
	NoCountFolding bool
	// Fixed, when set, marks DAG edges (indexed like d.Edges) that must
	// get no operation: their code is shared with other edges, as a
	// dispatch loop's br_table arms are with jumps threaded through it
	// (cfg.Options.Thread). The initialisation of a path then stops
	// short of the node they leave, and Place fails if one still needs
	// an operation (a chord whose increment is not 0, a count).
	Fixed []bool
	// ZeroAtEntry says the register is 0 where a path starts at the
	// function's entry, as a local is when the function is called: the
	// r = 0 the initialisation would put on a tree edge into a join from
	// there is left out. A path that starts at a dummy entry edge (after
	// a back edge or a cut) still sets it. Which edges lose their r = 0
	// depends on the spanning tree only, not on the numbering, so a
	// planner that places a forward numbering's probes to price what an
	// instrumenter places for a reverse one drops the same.
	ZeroAtEntry bool
}

// Place turns chord increments into probes: r = 0 at the start of every
// path, r += Inc on chords and count[r + ExitInc] at its end, then folds them
// with the seed's two worklists. The first walks forward from the entry over
// tree edges into nodes with a single in edge, where r would still be 0, and
// puts the initialisation on the first chord (r = Inc) or on the tree edge
// into a join (r = 0). The second walks back from the exit over tree edges
// out of nodes with a single out edge, and puts the count on the last chord
// (count[r + Inc + ExitInc]) or on the tree edge out of a branch; an
// initialisation and a count on the same edge become one constant count, and
// an operation placed after a path's count is dropped. Add(0) is dropped too.
func Place(d *cfg.DAG, n *Numbering, inc *Increments, opt PlaceOptions) (*Placement, error) {
	plan, err := placeOps(d, n, inc, opt)
	if err != nil {
		return nil, err
	}
	if plan.Probes, err = graphProbes(d, plan.Ops); err != nil {
		return nil, err
	}
	return plan, nil
}

// placeOps is Place without moving the operations onto Graph edges
// (Placement.Probes is left nil), for callers that adjust them first.
func placeOps(d *cfg.DAG, n *Numbering, inc *Increments, opt PlaceOptions) (*Placement, error) {
	if err := validateNumbered(d, n); err != nil {
		return nil, err
	}
	return placeOpsOf(d, n, inc, opt)
}

// PlaceInOrder is Chords by the sorted weights o, then Place: one check of
// the DAG for both.
func PlaceInOrder(d *cfg.DAG, n *Numbering, o *TreeOrder, opt PlaceOptions) (*Placement, error) {
	if err := validateNumbered(d, n); err != nil {
		return nil, err
	}
	if o == nil || len(o.edges) != len(d.Edges)+1 {
		return nil, errors.New("numbering: tree order does not match the DAG")
	}
	plan, err := placeOpsOf(d, n, chords(d, n, o), opt)
	if err != nil {
		return nil, err
	}
	if plan.Probes, err = graphProbes(d, plan.Ops); err != nil {
		return nil, err
	}
	return plan, nil
}

// placeOpsOf is placeOps for a validated DAG and numbering.
func placeOpsOf(d *cfg.DAG, n *Numbering, inc *Increments, opt PlaceOptions) (*Placement, error) {
	ne := len(d.Edges)
	if inc == nil || len(inc.Class) != ne || len(inc.Inc) != ne {
		return nil, errors.New("numbering: increments do not match the DAG")
	}
	if opt.Fixed != nil && len(opt.Fixed) != ne {
		return nil, fmt.Errorf("numbering: %d fixed marks for %d edges", len(opt.Fixed), ne)
	}
	plan := &Placement{NumPaths: n.Paths(), Ops: make([]Op, ne)}
	// leavesFixed[v]: r must be set before v, which a fixed edge leaves.
	var leavesFixed []bool
	if opt.Fixed != nil {
		leavesFixed = make([]bool, d.NumNodes)
		for i, f := range opt.Fixed {
			if f {
				leavesFixed[d.Edges[i].From] = true
			}
		}
	}

	liveIn := make([]int32, d.NumNodes)
	for i, c := range inc.Class {
		if c != Dead {
			liveIn[d.Edges[i].To]++
		}
	}

	// Forward worklist: zero[v] means every path reaches v along tree
	// edges only, through nodes with one in edge, so r would still be 0.
	// local[v] (with ZeroAtEntry): v's path started at the function's
	// entry, where the register is 0 without an initialisation.
	initOp := make([]bool, ne)
	initVal := make([]int64, ne)
	zero := make([]bool, d.NumNodes)
	var local []bool
	if opt.ZeroAtEntry {
		local = make([]bool, d.NumNodes)
	}
	if n.Paths() > 0 {
		zero[cfg.Entry] = true
		ws := []int32{cfg.Entry}
		for len(ws) > 0 {
			v := ws[len(ws)-1]
			ws = ws[:len(ws)-1]
			for _, e := range d.Out[v] {
				w := d.Edges[e].To
				fromLocal := local != nil && (v == cfg.Entry && d.Edges[e].Kind != cfg.EdgeDummyEntry || local[v])
				switch {
				case inc.Class[e] == Dead:
				case inc.Class[e] == Chord:
					initOp[e], initVal[e] = true, inc.Inc[e]
				case liveIn[w] == 1 && (leavesFixed == nil || !leavesFixed[w]):
					zero[w] = true
					if fromLocal {
						local[w] = true
					}
					ws = append(ws, w)
				case fromLocal:
					// r is 0 already; w's other paths set it.
				default:
					initOp[e], initVal[e] = true, 0
				}
			}
		}
	}

	// Backward worklist: done[v] means every path from v to the exit is
	// tree edges out of nodes with one out edge, so it is determined and
	// its count can already have happened.
	countOp := make([]bool, ne)
	done := make([]bool, d.NumNodes)
	if n.Paths() > 0 {
		done[cfg.Exit] = true
		ws := []int32{cfg.Exit}
		for len(ws) > 0 {
			v := ws[len(ws)-1]
			ws = ws[:len(ws)-1]
			for _, e := range d.In[v] {
				if inc.Class[e] == Dead {
					continue
				}
				w := d.Edges[e].From
				if inc.Class[e] == Tree && !opt.NoCountFolding && w != cfg.Entry && len(d.Out[w]) == 1 {
					done[w] = true
					ws = append(ws, w)
				} else {
					countOp[e] = true
				}
			}
		}
	}

	for i, c := range inc.Class {
		e := d.Edges[i]
		if c == Dead || done[e.From] {
			continue // nothing runs on it, or its path is already counted
		}
		var op Op
		switch {
		case countOp[i] && initOp[i]:
			op = Op{CountConst, initVal[i] + inc.ExitInc}
		case countOp[i] && c == Chord:
			op = Op{Count, inc.Inc[i] + inc.ExitInc}
		case countOp[i] && zero[e.From]:
			op = Op{CountConst, inc.ExitInc}
		case countOp[i]:
			op = Op{Count, inc.ExitInc}
		case initOp[i]:
			op = Op{Init, initVal[i]}
		case c == Chord && inc.Inc[i] != 0:
			op = Op{Add, inc.Inc[i]}
		}
		if op.Kind != None && opt.Fixed != nil && opt.Fixed[i] {
			return nil, fmt.Errorf("numbering: fixed edge %d needs %v", i, op)
		}
		plan.Ops[i] = op
	}

	return plan, nil
}

// graphProbes moves the DAG edges' operations onto Graph edges: a real
// edge's onto its Orig, a dummy edge's onto every back edge it stands for,
// the dummy exit edge's first.
func graphProbes(d *cfg.DAG, ops []Op) ([]Probe, error) {
	ng := int32(0)
	for i, e := range d.Edges {
		if e.Kind == cfg.EdgeDummyExit || e.Kind == cfg.EdgeDummyEntry {
			for _, g := range e.Back {
				if g < 0 {
					return nil, fmt.Errorf("numbering: DAG edge %d stands for Graph edge %d", i, g)
				}
				ng = max(ng, g+1)
			}
		} else {
			ng = max(ng, e.Orig+1)
		}
	}
	// Per Graph edge: the DAG edge it is, or the dummy exit and entry
	// edges it runs, each +1 so that 0 means none.
	tp, t := tempInt32s(3 * int(ng))
	defer int32Temps.Put(tp)
	real, exit, entry := t[:ng:ng], t[ng:2*ng:2*ng], t[2*ng:]
	set := func(p []int32, g, e int32) error {
		if p[g] != 0 {
			return fmt.Errorf("numbering: Graph edge %d stands behind DAG edges %d and %d", g, p[g]-1, e)
		}
		p[g] = e + 1
		return nil
	}
	for i, e := range d.Edges {
		var p []int32
		switch {
		case e.Kind == cfg.EdgeDummyExit:
			p = exit
		case e.Kind == cfg.EdgeDummyEntry:
			p = entry
		case e.Orig >= 0:
			if err := set(real, e.Orig, int32(i)); err != nil {
				return nil, err
			}
			continue
		case ops[i].Kind != None:
			return nil, fmt.Errorf("numbering: DAG edge %d needs a probe but has no Graph edge", i)
		default:
			continue
		}
		for _, g := range e.Back {
			if err := set(p, g, int32(i)); err != nil {
				return nil, err
			}
		}
	}
	// Counted first: the probes of a big function are millions.
	np := 0
	for g := range ng {
		switch {
		case real[g] != 0:
			if ops[real[g]-1].Kind != None {
				np++
			}
		case exit[g] != 0 && entry[g] != 0:
			for _, e := range [2]int32{exit[g], entry[g]} {
				if ops[e-1].Kind != None {
					np++
				}
			}
		}
	}
	var probes []Probe
	if np > 0 {
		probes = make([]Probe, 0, np)
	}
	for g := range ng {
		switch {
		case real[g] != 0 && (exit[g] != 0 || entry[g] != 0):
			return nil, fmt.Errorf("numbering: Graph edge %d is both a DAG edge and a back edge", g)
		case real[g] != 0:
			if op := ops[real[g]-1]; op.Kind != None {
				probes = append(probes, Probe{g, op})
			}
		case (exit[g] == 0) != (entry[g] == 0):
			return nil, fmt.Errorf("numbering: back edge %d lacks a dummy entry or exit edge", g)
		case exit[g] != 0:
			for _, e := range [2]int32{exit[g], entry[g]} {
				if op := ops[e-1]; op.Kind != None {
					probes = append(probes, Probe{g, op})
				}
			}
		}
	}
	return probes, nil
}
