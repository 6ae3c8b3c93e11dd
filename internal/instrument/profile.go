// Counts into a profile: every counted path regenerated into the
// profile's functions, with the run's probe hits.

package instrument

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/counters"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/profile"
)

var kindNames = map[numbering.PathKind]string{
	numbering.EntryToExit: profile.KindEntryExit,
	numbering.EntryToBack: profile.KindEntryBack,
	numbering.BackToBack:  profile.KindBackBack,
	numbering.BackToExit:  profile.KindBackExit,
}

// Functions regenerates every counted path into the profile's functions,
// and returns the probe hits of the run: for each counted path, its count
// times the instrumentation sequences along it.
func (r *Result) Functions(counts counters.Counts) ([]profile.Function, uint64, error) {
	var out []profile.Function
	var hits uint64
	byIndex := map[uint32]*Func{}
	for _, f := range r.Funcs {
		byIndex[f.Index] = f
	}
	for fi := range counts {
		if f := byIndex[fi]; f == nil || f.Placement == nil || f.Mode.Kind == partition.None {
			return nil, 0, fmt.Errorf("counts for function %d, which was not instrumented", fi)
		}
	}
	for _, f := range r.Funcs {
		pf := profile.Function{Index: f.Index, Name: f.Name, Status: f.Status, Paths: []profile.Path{}}
		if f.Num == nil {
			pf.PossiblePaths = "0"
			out = append(out, pf)
			continue
		}
		pf.PossiblePaths = strconv.FormatInt(f.Num.Paths(), 10)
		for _, v := range f.Cuts {
			pf.Cuts = append(pf.Cuts, f.BlockOffset(v))
		}
		ids := make([]uint64, 0, len(counts[f.Index]))
		for id := range counts[f.Index] {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		paths, err := f.countedPaths(ids, counts[f.Index])
		if err != nil {
			return nil, 0, fmt.Errorf("function %d (%s): %w", f.Index, f.Name, err)
		}
		for _, cp := range paths {
			p := profile.Path{ID: cp.id, Count: cp.count, Kind: kindNames[cp.kind]}
			for _, e := range cp.edges {
				if to := f.DAG.Edges[e].To; to != cfg.Exit {
					p.Blocks = append(p.Blocks, f.BlockOffset(to))
				}
			}
			seqs, in, _ := f.pathSeqs(cp.edges)
			hits += (seqs + in) * cp.count
			pf.Paths = append(pf.Paths, p)
		}
		out = append(out, pf)
	}
	return out, hits, nil
}

type countedPath struct {
	id    uint64 // Ball-Larus id
	count uint64
	kind  numbering.PathKind
	edges []int32
}

// countedPaths regenerates a function's counted ids (reverse ids for a
// Ball-Larus function, PSPP ids for a selective one) into paths, named by
// their Ball-Larus ids. A selective copy's counts of uninteresting paths
// are dropped: other copies count those paths exactly.
func (f *Func) countedPaths(ids []uint64, counts map[uint64]uint64) ([]countedPath, error) {
	var out []countedPath
	if f.Mode.Kind == partition.Selective {
		sp, err := numbering.InterestingCounts(f.Sel, f.DAG, counts)
		if err != nil {
			return nil, err
		}
		for _, p := range sp {
			var id int64
			for _, e := range p.Edges {
				id += f.Num.Val[e]
			}
			out = append(out, countedPath{id: uint64(id), count: p.Count, kind: p.Kind, edges: p.Edges})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
		return out, nil
	}
	if f.Rev != nil {
		// The copy counted reverse ids: name the paths by Ball-Larus ids.
		for _, id := range ids {
			bl, edges, kind, err := f.Rev.BallLarus(id)
			if err != nil {
				return nil, fmt.Errorf("path with reverse id %d: %w", id, err)
			}
			out = append(out, countedPath{id: bl, count: counts[id], kind: kind, edges: edges})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
		return out, nil
	}
	for _, id := range ids {
		edges, kind, err := numbering.Regenerate(f.Num, f.DAG, id)
		if err != nil {
			return nil, fmt.Errorf("path %d: %w", id, err)
		}
		out = append(out, countedPath{id: id, count: counts[id], kind: kind, edges: edges})
	}
	return out, nil
}

// pathSeqs is how many instrumentation sequences of this copy run along a
// path (DAG edges). Where a loop's iterations are shared out (Mode.Loop),
// it is those around the loop; own and bare are those in the loop, if the
// path's iteration is in one of the copy's slots or not.
func (f *Func) pathSeqs(edges []int32) (seqs, own, bare uint64) {
	if f.Placement == nil {
		return 0, 0, 0
	}
	for _, e := range edges {
		de := f.DAG.Edges[e]
		switch {
		case de.Kind == cfg.EdgeDummyExit && f.bare[de.Back[0]]:
			// A counted loop's back edge runs nothing: its exit
			// counts the iterations, one sequence for the loop.
		case de.Orig >= 0 && f.loop != nil && f.loop.inside[de.Orig]:
			own += uint64(f.loop.own[de.Orig])
			bare += uint64(f.loop.bare[de.Orig])
		case de.Orig >= 0:
			seqs += uint64(f.seqs[de.Orig])
		case de.Kind == cfg.EdgeDummyEntry && f.loop.isSpread(de.To):
			// An iteration of a loop whose iterations are dealt out
			// by a test: every copy runs it.
			own++
			bare++
		case de.Kind == cfg.EdgeDummyExit && f.loop != nil && f.loop.inside[de.Back[0]]:
			// A back edge in the loop: a bare replica's runs nothing,
			// unless it continues an enclosing loop.
			own++
			if f.loop.leaves[de.Back[0]] {
				bare++
			}
		case de.Kind == cfg.EdgeDummyExit && f.loop.isQuiet(de.Back[0]):
			// A path end around a shared loop where this copy runs
			// nothing (trimOutside).
		case de.Kind == cfg.EdgeDummyExit:
			// The back (or cut) edge's sequence: the ending path's
			// count, if the copy counts there, and the next path's
			// initialisation, which every live dummy entry edge has,
			// run as one sequence.
			seqs++
		}
	}
	return seqs, own, bare
}

// HitsOf computes this copy's probe hits on a run from that run's exact
// profile: every path's count times the sequences this copy executes along
// it, whether or not the copy counts the path. So one exact profile gives
// the hit counts of any plan and k. Paths cut short (by a trap, or in the
// callers of proc_exit) are not in a profile and not included.
//
// For a function whose calls are shared out (Mode.Slices) the figure is
// an estimate: a profile does not say which calls ran which paths, so
// each slot is taken to run its share of them, and every call (an entry
// path) to run the test. HitsOfRun is exact.
func (r *Result) HitsOf(exact []profile.Function) (uint64, error) {
	return r.hitsOf(exact, nil, nil)
}

// HitsOfRun is HitsOf made exact for the copies that share out the calls
// of functions: their paths come from own, what this copy counted on the
// run, and their tests from calls, the copy's call counters
// (CallsExport) by function index.
func (r *Result) HitsOfRun(exact, own []profile.Function, calls map[uint32]uint64) (uint64, error) {
	if own == nil {
		own = []profile.Function{}
	}
	return r.hitsOf(exact, own, calls)
}

// Sliced reports whether the copy shares out the calls of any function,
// or the iterations of a loop, with other copies: its hits are then exact
// only from what it counted (HitsOfRun).
func (r *Result) Sliced() bool {
	return slices.ContainsFunc(r.Funcs, func(f *Func) bool { return f.Placement != nil && f.Mode.Slices > 0 })
}

// SharesCalls reports whether the copy shares out the calls of any
// function: it then has call counters (CallsExport).
func (r *Result) SharesCalls() bool {
	return slices.ContainsFunc(r.Funcs, func(f *Func) bool { return f.Placement != nil && f.Mode.Slices > 0 && f.Mode.Loop == 0 })
}

func (r *Result) hitsOf(exact, own []profile.Function, calls map[uint32]uint64) (uint64, error) {
	byIndex := make(map[uint32]*Func, len(r.Funcs))
	for _, f := range r.Funcs {
		byIndex[f.Index] = f
	}
	owned := map[uint32]map[uint64]uint64{} // a shared loop's paths this copy counted
	for _, pf := range own {
		if f := byIndex[pf.Index]; f != nil && f.Mode.Loop != 0 {
			m := make(map[uint64]uint64, len(pf.Paths))
			for _, p := range pf.Paths {
				m[p.ID] = p.Count
			}
			owned[pf.Index] = m
		}
	}
	var hits uint64
	var share float64 // sliced functions' estimated hits
	add := func(fs []profile.Function, sliced bool) error {
		for _, pf := range fs {
			f := byIndex[pf.Index]
			if f == nil {
				return fmt.Errorf("profile function %d is not in the module", pf.Index)
			}
			if f.Placement == nil || (f.Mode.Slices > 0 && f.Mode.Loop == 0) != sliced {
				continue
			}
			part := float64(len(f.Mode.Slots)) / float64(max(f.Mode.Slices, 1))
			var h, entries uint64
			for _, p := range pf.Paths {
				edges, kind, err := numbering.Regenerate(f.Num, f.DAG, p.ID)
				if err != nil {
					return fmt.Errorf("function %d (%s): path %d: %w", f.Index, f.Name, p.ID, err)
				}
				seqs, in, bare := f.pathSeqs(edges)
				h += seqs * p.Count
				if kind == numbering.EntryToExit || kind == numbering.EntryToBack {
					entries += p.Count
				}
				switch {
				case in == 0 && bare == 0:
				case own != nil:
					mine := min(owned[pf.Index][p.ID], p.Count)
					h += in*mine + bare*(p.Count-mine)
				default:
					share += (float64(in)*part + float64(bare)*(1-part)) * float64(p.Count)
				}
			}
			switch {
			case !sliced || own != nil:
				hits += h
			default:
				share += float64(h)*part + float64(entries)
			}
		}
		return nil
	}
	if err := add(exact, false); err != nil {
		return 0, err
	}
	if own == nil {
		if err := add(exact, true); err != nil {
			return 0, err
		}
		return hits + uint64(math.Round(share)), nil
	}
	if err := add(own, true); err != nil {
		return 0, err
	}
	for _, f := range r.Funcs {
		if f.Placement != nil && f.Mode.Slices > 0 && f.Mode.Loop == 0 {
			hits += calls[f.Index]
		}
	}
	return hits, nil
}

// HitsOfFrequencies computes this copy's probe hits from how often each
// DAG edge of each defined function ran (EdgeFrequencies' result, indexed
// like Funcs): the same figure as HitsOf on the profile they came from,
// since every sequence sits on one edge (a back edge's on its dummy exit
// edge).
func (r *Result) HitsOfFrequencies(freq [][]float64) (float64, error) {
	per, err := r.FuncHitsOfFrequencies(freq)
	if err != nil {
		return 0, err
	}
	var hits float64
	for _, h := range per {
		hits += h
	}
	return hits, nil
}

// FuncHitsOfFrequencies is HitsOfFrequencies per defined function.
func (r *Result) FuncHitsOfFrequencies(freq [][]float64) ([]float64, error) {
	if len(freq) != len(r.Funcs) {
		return nil, fmt.Errorf("frequencies of %d functions for %d", len(freq), len(r.Funcs))
	}
	per := make([]float64, len(r.Funcs))
	for i, f := range r.Funcs {
		w := freq[i]
		if f.Placement == nil || w == nil {
			continue
		}
		if len(w) != len(f.DAG.Edges) {
			return nil, fmt.Errorf("function %d (%s): %d frequencies for %d DAG edges", f.Index, f.Name, len(w), len(f.DAG.Edges))
		}
		part := float64(len(f.Mode.Slots)) / float64(max(f.Mode.Slices, 1))
		var h, hits float64
		for e, de := range f.DAG.Edges {
			switch {
			case de.Kind == cfg.EdgeDummyExit && f.bare[de.Back[0]]:
				// A counted loop's back edge, as in pathSeqs.
			case de.Orig >= 0 && f.loop != nil && f.loop.inside[de.Orig]:
				// An estimate, as HitsOf's: the copy's slots run their
				// share of the loop's iterations.
				hits += w[e] * (float64(f.loop.own[de.Orig])*part + float64(f.loop.bare[de.Orig])*(1-part))
			case de.Orig >= 0:
				h += w[e] * float64(f.seqs[de.Orig])
			case de.Kind == cfg.EdgeDummyEntry && f.loop.isSpread(de.To):
				hits += w[e] // the test of every iteration, as in pathSeqs
			case de.Kind == cfg.EdgeDummyExit && f.loop != nil && f.loop.inside[de.Back[0]]:
				if f.loop.leaves[de.Back[0]] {
					hits += w[e]
				} else {
					hits += w[e] * part
				}
			case de.Kind == cfg.EdgeDummyExit && f.loop.isQuiet(de.Back[0]):
				// A path end around a shared loop where this copy runs
				// nothing, as in pathSeqs.
			case de.Kind == cfg.EdgeDummyExit:
				h += w[e]
			}
			if f.Mode.Slices > 0 && f.Mode.Loop == 0 && de.Kind == cfg.EdgeEntry {
				hits += w[e] // the test, at every call
			}
		}
		if f.Mode.Slices > 0 && f.Mode.Loop == 0 {
			// An estimate, as HitsOf's.
			h *= float64(len(f.Mode.Slots)) / float64(f.Mode.Slices)
		}
		per[i] = hits + h
	}
	return per, nil
}

// EdgeFrequencies turns an exact profile into how often each DAG edge of
// each defined function ran (nil for functions without a DAG or without
// executed paths): weights for spanning trees and for P3's task costs.
func (r *Result) EdgeFrequencies(exact []profile.Function) ([][]float64, error) {
	byIndex := make(map[uint32]int, len(r.Funcs))
	for i, f := range r.Funcs {
		byIndex[f.Index] = i
	}
	out := make([][]float64, len(r.Funcs))
	for _, pf := range exact {
		i, ok := byIndex[pf.Index]
		if !ok {
			return nil, fmt.Errorf("profile function %d is not in the module", pf.Index)
		}
		f := r.Funcs[i]
		if f.Num == nil || len(pf.Paths) == 0 {
			continue
		}
		w := make([]float64, len(f.DAG.Edges))
		for _, p := range pf.Paths {
			edges, _, err := numbering.Regenerate(f.Num, f.DAG, p.ID)
			if err != nil {
				return nil, fmt.Errorf("function %d (%s): path %d: %w", f.Index, f.Name, p.ID, err)
			}
			for _, e := range edges {
				w[e] += float64(p.Count)
			}
		}
		out[i] = w
	}
	return out, nil
}

// FuncHits is HitsOf per function, for a copy that shares out no calls:
// the probes each function's paths in exact run, by function index.
func (r *Result) FuncHits(exact []profile.Function) (map[uint32]uint64, error) {
	out := map[uint32]uint64{}
	for _, pf := range exact {
		// hitsOf looks a function up among r's: one at a time keeps the
		// figure per function.
		h, err := r.hitsOf([]profile.Function{pf}, nil, nil)
		if err != nil {
			return nil, err
		}
		out[pf.Index] = h
	}
	return out, nil
}
