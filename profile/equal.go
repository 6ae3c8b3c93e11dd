package profile

// This file compares two profiles' counts.

import (
	"cmp"
	"fmt"
	"slices"
)

// Equal reports whether p and q count the same paths the same number of
// times, and if not, describes the first difference (in function index and
// path id order). It compares what the counting produced: for every
// function, each path's id, count, kind and blocks. It ignores how the
// profile was obtained (strategy, copies, runs and their timings, the
// module's path, completeness), because the point is to check that
// different ways of profiling one run agree exactly. Function names,
// statuses, possible paths and cuts are ignored too, so that an independent
// oracle (a block tracer) need not reproduce them; a function with no paths
// is the same as an absent one. Modules must match when both profiles name
// one by hash.
func (p *Profile) Equal(q *Profile) (bool, string) {
	if p.Module.SHA256 != "" && q.Module.SHA256 != "" && p.Module.SHA256 != q.Module.SHA256 {
		return false, fmt.Sprintf("different modules: sha256 %s vs %s", p.Module.SHA256, q.Module.SHA256)
	}
	pf, qf := executed(p), executed(q)
	for i, j := 0, 0; i < len(pf) || j < len(qf); {
		switch {
		case j == len(qf) || (i < len(pf) && pf[i].Index < qf[j].Index):
			return false, fmt.Sprintf("%s: %d paths in the first profile, none in the second", funcLabel(pf[i]), len(pf[i].Paths))
		case i == len(pf) || qf[j].Index < pf[i].Index:
			return false, fmt.Sprintf("%s: %d paths in the second profile, none in the first", funcLabel(qf[j]), len(qf[j].Paths))
		}
		if ok, diff := equalPaths(pf[i].Paths, qf[j].Paths); !ok {
			return false, funcLabel(pf[i]) + ": " + diff
		}
		i++
		j++
	}
	return true, ""
}

// executed returns p's functions that have paths, in index order, each
// with its paths in id order, without modifying p.
func executed(p *Profile) []Function {
	var out []Function
	for _, f := range p.Functions {
		if len(f.Paths) == 0 {
			continue
		}
		f.Paths = slices.Clone(f.Paths)
		slices.SortStableFunc(f.Paths, func(a, b Path) int { return cmp.Compare(a.ID, b.ID) })
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b Function) int { return cmp.Compare(a.Index, b.Index) })
	return out
}

func equalPaths(a, b []Path) (bool, string) {
	for i, j := 0, 0; i < len(a) || j < len(b); {
		switch {
		case j == len(b) || (i < len(a) && a[i].ID < b[j].ID):
			return false, fmt.Sprintf("path %d (count %d) only in the first profile", a[i].ID, a[i].Count)
		case i == len(a) || b[j].ID < a[i].ID:
			return false, fmt.Sprintf("path %d (count %d) only in the second profile", b[j].ID, b[j].Count)
		}
		x, y := &a[i], &b[j]
		switch {
		case x.Count != y.Count:
			return false, fmt.Sprintf("path %d: count %d vs %d", x.ID, x.Count, y.Count)
		case x.Kind != y.Kind:
			return false, fmt.Sprintf("path %d: kind %s vs %s", x.ID, x.Kind, y.Kind)
		case !slices.Equal(x.Blocks, y.Blocks):
			return false, fmt.Sprintf("path %d: blocks %v vs %v", x.ID, x.Blocks, y.Blocks)
		}
		i++
		j++
	}
	return true, ""
}

func funcLabel(f Function) string {
	if f.Name != "" {
		return fmt.Sprintf("function %d (%s)", f.Index, f.Name)
	}
	return fmt.Sprintf("function %d", f.Index)
}
