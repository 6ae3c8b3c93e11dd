package numbering

// This file regenerates a path's edges from its id, and names its kind.

import (
	"errors"
	"fmt"

	"github.com/pathprof/pathprof/internal/cfg"
)

// PathKind says where a path begins and ends: at the function's entry or
// exit, or at a back edge (which includes an edge cut by Cut).
type PathKind uint8

const (
	EntryToExit PathKind = iota // a whole run of the function without back edges
	EntryToBack                 // from the entry to the first back edge taken
	BackToBack                  // one loop iteration: from a back edge to the next
	BackToExit                  // from the last back edge taken to the exit
)

var pathKindNames = [...]string{"entry->exit", "entry->back", "back->back", "back->exit"}

func (k PathKind) String() string {
	if int(k) < len(pathKindNames) {
		return pathKindNames[k]
	}
	return "path?"
}

// ErrBadID is returned by Regenerate for an id outside [0, Paths()).
var ErrBadID = errors.New("numbering: path id out of range")

// KindOf returns the kind of a DAG path given as its edges.
func KindOf(d *cfg.DAG, path []int32) PathKind {
	if len(path) == 0 {
		return EntryToExit
	}
	fromBack := d.Edges[path[0]].Kind == cfg.EdgeDummyEntry
	toBack := d.Edges[path[len(path)-1]].Kind == cfg.EdgeDummyExit
	switch {
	case fromBack && toBack:
		return BackToBack
	case fromBack:
		return BackToExit
	case toBack:
		return EntryToBack
	}
	return EntryToExit
}

// Regenerate returns the DAG edges of the path with the given id, and its
// kind. At each node it takes the out edge with the largest Val not above
// the rest of the id, among the edges whose head has paths to the exit (an
// edge into a dead end may share its Val with the next edge). n must be a
// numbering of d.
func Regenerate(n *Numbering, d *cfg.DAG, id uint64) ([]int32, PathKind, error) {
	path, err := regenerate(n, d, id)
	if err != nil {
		return nil, 0, err
	}
	return path, KindOf(d, path), nil
}

func regenerate(n *Numbering, d *cfg.DAG, id uint64) ([]int32, error) {
	if n == nil || d == nil || len(n.Val) != len(d.Edges) || len(n.NumPaths) != d.NumNodes || len(d.Out) != d.NumNodes {
		return nil, errors.New("numbering: numbering does not match the DAG")
	}
	return walkPath(n, d, id, false)
}

// walkPath follows the path with the given id from the entry, as regenerate
// says. back walks the reversed DAG instead (edges turned around, entry
// and exit swapped; n numbers that DAG) on d itself, so that a Reverse
// need not keep the reversed DAG: the path's edges come out in the
// reversed DAG's order, from d's exit.
func walkPath(n *Numbering, d *cfg.DAG, id uint64, back bool) ([]int32, error) {
	if id >= uint64(max(n.Paths(), 0)) {
		return nil, fmt.Errorf("%w: %d, with %d paths", ErrBadID, id, n.Paths())
	}
	outs, head := d.Out, func(e int32) int32 { return d.Edges[e].To }
	if back {
		outs, head = d.In, func(e int32) int32 { return swap(d.Edges[e].From) }
	}
	// node maps a node of the walked DAG to d's, whose lists outs holds.
	node := func(v int32) int32 {
		if back {
			return swap(v)
		}
		return v
	}
	r := int64(id)
	var path []int32
	for v := int32(cfg.Entry); v != cfg.Exit; {
		if len(path) >= d.NumNodes {
			return nil, errors.New("numbering: regeneration does not reach the exit")
		}
		best := int32(-1)
		for _, e := range outs[node(v)] {
			if n.NumPaths[head(e)] == 0 || n.Val[e] > r {
				continue
			}
			if best < 0 || n.Val[e] > n.Val[best] {
				best = e
			}
		}
		if best < 0 {
			return nil, fmt.Errorf("numbering: path %d runs into a dead end at node %d", id, v)
		}
		r -= n.Val[best]
		v = head(best)
		if r >= n.NumPaths[v] {
			return nil, fmt.Errorf("numbering: path %d runs into a dead end at node %d", id, v)
		}
		path = append(path, best)
	}
	return path, nil
}
