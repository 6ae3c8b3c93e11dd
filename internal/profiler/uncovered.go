package profiler

// This file is --uncovered-from BASE: one copy that counts only what an
// earlier profile of the module did not cover.

import (
	"fmt"
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/profile"
)

// UncoveredCopies builds one copy that profiles what base did not cover:
// a function all of whose paths base executed gets no probes, one that
// base never entered is profiled whole, and in the others PSPP makes
// interesting only the edges of the paths base did not execute, so that
// every such path is counted (with the covered paths that use only those
// edges) and the rest share ids nothing reads. base must be a profile of
// orig.
func UncoveredCopies(orig []byte, base *profile.Profile, opt instrument.Options) (*Copies, error) {
	analysis, m, dags, err := analyze(orig, opt)
	if err != nil {
		return nil, err
	}
	plan, err := partition.Make(m, dags, profile.SBL, 1, partition.Options{})
	if err != nil {
		return nil, err
	}
	covered := map[uint32][]uint64{}
	for _, f := range base.Functions {
		for _, p := range f.Paths {
			covered[f.Index] = append(covered[f.Index], p.ID)
		}
	}
	cp := &plan.Copies[0]
	var whole []int
	none := 0
	for _, def := range cp.BallLarus {
		f := analysis.Funcs[def]
		ids := covered[f.Index]
		if len(ids) == 0 || f.Num == nil || f.DAG == nil || f.Blockwise {
			whole = append(whole, def)
			continue
		}
		edges, err := uncoveredEdges(f.DAG, f.Num, ids)
		if err != nil {
			return nil, fmt.Errorf("function %d: the base profile's paths: %w", f.Index, err)
		}
		switch {
		case len(edges) == 0: // every path covered: no probes
			none++
		case len(edges) == len(f.DAG.Edges):
			whole = append(whole, def)
		default:
			cp.Selective = append(cp.Selective, partition.SelectiveFunc{Func: def, Edges: edges})
		}
	}
	cp.BallLarus = whole
	cs, err := instrumentCopies(orig, m, plan, analysis, opt)
	if err != nil || len(cp.Selective) == 0 {
		if cs != nil {
			cs.Covered = none
		}
		return cs, err
	}
	// A selective placement lacks Ball-Larus's loop counters and may
	// cost more than the whole numbering where the uncovered paths
	// share most edges with the hot ones: the base's run, the best guess
	// at the next, says which costs less, function by function.
	bl, err := instrument.Instrument(orig, opt)
	if err != nil {
		return nil, err
	}
	selHits, err := cs.Copy[0].FuncHits(base.Functions)
	if err != nil {
		return nil, err
	}
	blHits, err := bl.FuncHits(base.Functions)
	if err != nil {
		return nil, err
	}
	var keep []partition.SelectiveFunc
	for _, sf := range cp.Selective {
		idx := analysis.Funcs[sf.Func].Index
		if selHits[idx] >= blHits[idx] && blHits[idx] > 0 {
			cp.BallLarus = append(cp.BallLarus, sf.Func)
			continue
		}
		keep = append(keep, sf)
	}
	if len(keep) < len(cp.Selective) {
		cp.Selective = keep
		slices.Sort(cp.BallLarus)
		if cs, err = instrumentCopies(orig, m, plan, analysis, opt); err != nil {
			return nil, err
		}
	}
	cs.Covered = none
	return cs, nil
}

// uncoveredEdges lists the DAG edges that lie on a path whose Ball-Larus
// id is not among ids: those through which more paths run than ids
// cross.
func uncoveredEdges(d *cfg.DAG, num *numbering.Numbering, ids []uint64) (partition.EdgeList, error) {
	// to[v] is the number of paths from the entry to v; with NumPaths
	// (v to the exit) it gives the paths through each edge, all below
	// the 63-bit id space.
	to := make([]uint64, d.NumNodes)
	to[cfg.Entry] = 1
	for _, v := range d.Topo {
		for _, e := range d.Out[v] {
			to[d.Edges[e].To] += to[v]
		}
	}
	crossed := make([]uint64, len(d.Edges))
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		path, _, err := numbering.Regenerate(num, d, id)
		if err != nil {
			return nil, err
		}
		for _, e := range path {
			crossed[e]++
		}
	}
	var out partition.EdgeList
	for e, de := range d.Edges {
		if through := to[de.From] * uint64(num.NumPaths[de.To]); through > crossed[e] {
			out = append(out, int32(e))
		}
	}
	return out, nil
}

// MarkUncovered records in p, a profile made with copies from
// UncoveredCopies, what it counts: the paths base did not cover, which it
// lists as new, and of the covered ones only some; it is marked
// incomplete, since its counts are not the whole runs'.
func MarkUncovered(p *profile.Profile, base *profile.Profile, baseName string) {
	had := map[[2]uint64]bool{}
	for _, f := range base.Functions {
		for _, q := range f.Paths {
			had[[2]uint64{uint64(f.Index), q.ID}] = true
		}
	}
	u := &profile.Uncovered{Base: baseName, BaseInputs: max(len(base.Inputs), 1), NewPaths: [][2]uint64{}}
	for _, f := range p.Functions {
		for _, q := range f.Paths {
			if !had[[2]uint64{uint64(f.Index), q.ID}] {
				u.NewPaths = append(u.NewPaths, [2]uint64{uint64(f.Index), q.ID})
			}
		}
	}
	p.UncoveredFrom = u
	p.Complete = false
	p.Incomplete = joinReason(p.Incomplete, "counts only the paths "+baseName+" did not cover (--uncovered-from), and of the others some")
}
