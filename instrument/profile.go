package instrument

import (
	"fmt"
	"sort"
	"strconv"

	"pathprof/cfg"
	"pathprof/counters"
	"pathprof/numbering"
	"pathprof/profile"
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
		if f := byIndex[fi]; f == nil || f.Plan == nil {
			return nil, 0, fmt.Errorf("counts for function %d, which was not instrumented", fi)
		}
	}
	for _, f := range r.Funcs {
		pf := profile.Function{Index: f.Index, Name: f.Name, Status: f.Status, Paths: []profile.Path{}}
		if f.Plan == nil {
			pf.PossiblePaths = "0"
			out = append(out, pf)
			continue
		}
		pf.PossiblePaths = strconv.FormatInt(f.Plan.NumPaths, 10)
		for _, v := range f.Cuts {
			pf.Cuts = append(pf.Cuts, f.BlockOffset(v))
		}
		ids := make([]uint64, 0, len(counts[f.Index]))
		for id := range counts[f.Index] {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			n := counts[f.Index][id]
			edges, kind, err := numbering.Regenerate(f.Num, f.DAG, id)
			if err != nil {
				return nil, 0, fmt.Errorf("function %d (%s): path %d: %w", f.Index, f.Name, id, err)
			}
			p := profile.Path{ID: id, Count: n, Kind: kindNames[kind]}
			var seqs uint64
			for _, e := range edges {
				de := f.DAG.Edges[e]
				if de.Orig >= 0 {
					seqs += uint64(f.seqs[de.Orig])
				} else if de.Kind == cfg.EdgeDummyExit {
					// The back (or cut) edge's sequence: its count and the
					// next path's initialisation run as one.
					seqs++
				}
				if de.To != cfg.Exit {
					p.Blocks = append(p.Blocks, f.BlockOffset(de.To))
				}
			}
			hits += seqs * n
			pf.Paths = append(pf.Paths, p)
		}
		out = append(out, pf)
	}
	return out, hits, nil
}
