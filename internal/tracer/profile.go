package tracer

// This file turns a trace's result into a profile, and a profile back into
// path counts.

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/pathprof/pathprof/profile"
)

// Strategy is the profile.Profile strategy of a traced profile.
const Strategy profile.Strategy = "trace"

// Profile returns the result in the profile file format, with every
// defined function, paths sorted by blocks and kind, and path ids 0: the
// tracer numbers nothing. Module.Path is left for the caller.
func (r *Result) Profile() *profile.Profile {
	t := r.Traced
	p := &profile.Profile{
		Format:   profile.Format,
		Version:  profile.Version,
		Module:   profile.Module{SHA256: t.sha256, Size: t.size, CodeOffset: t.codeOffset},
		Strategy: Strategy,
		Copies:   1,
		Complete: r.Run.Exited && r.Run.Trap == nil,
		ExitCode: r.Run.ExitCode,
		Region:   r.Region,
		Runs: []profile.Run{{
			ProbeHits: r.Events,
			Seconds:   r.Run.RunTime.Seconds(),
			ExitCode:  r.Run.ExitCode,
		}},
	}
	if r.Run.Trap != nil {
		p.Incomplete = "trap: " + r.Run.Trap.Error()
		p.Runs[0].Error = p.Incomplete
	} else if !r.Run.Exited {
		p.Incomplete = "the program did not finish"
	}
	byFunc := map[uint32][]profile.Path{}
	for k, n := range r.Paths {
		byFunc[k.Func] = append(byFunc[k.Func], profile.Path{Count: n, Kind: k.Kind, Blocks: parseBlocks(k.Blocks)})
	}
	for i := range t.Funcs {
		f := &t.Funcs[i]
		pf := profile.Function{Index: f.Index, Name: f.Name, Status: profile.StatusProfiled, PossiblePaths: f.PossiblePaths}
		if f.Skipped != "" {
			pf.Status = profile.Skipped(f.Skipped)
		}
		for _, v := range f.Cuts {
			pf.Cuts = append(pf.Cuts, f.Offsets[v])
		}
		pf.Paths = byFunc[f.Index]
		slices.SortFunc(pf.Paths, func(a, b profile.Path) int {
			if c := slices.Compare(a.Blocks, b.Blocks); c != 0 {
				return c
			}
			return cmp.Compare(a.Kind, b.Kind)
		})
		if pf.Paths == nil {
			pf.Paths = []profile.Path{}
		}
		p.Functions = append(p.Functions, pf)
	}
	return p
}

// Counts returns the path counts of any profile keyed like Result.Paths,
// summing paths that appear more than once and leaving out zero counts, so that a profile measured
// by instrumentation compares with a traced one by map equality.
func Counts(p *profile.Profile) map[Key]uint64 {
	m := map[Key]uint64{}
	var b []byte
	for _, f := range p.Functions {
		for _, path := range f.Paths {
			if path.Count == 0 {
				continue // a path that never ran is absent from a trace
			}
			b = b[:0]
			for i, off := range path.Blocks {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(off), 10)
			}
			m[Key{Func: f.Index, Kind: path.Kind, Blocks: string(b)}] += path.Count
		}
	}
	return m
}

func parseBlocks(s string) []int {
	parts := strings.Split(s, ",")
	out := make([]int, len(parts))
	for i, p := range parts {
		// Keys are built from ints by count, so they always parse.
		out[i], _ = strconv.Atoi(p)
	}
	return out
}
