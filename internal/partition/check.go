package partition

// This file holds Check, which verifies a plan, made or read from a
// manifest, against the DAGs it is for.

import (
	"fmt"
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
)

// Check verifies a plan against the DAGs it was made for: the copy count,
// sorted and valid function and edge lists, no function profiled twice in
// one copy, and every path-carrying edge of every profiled function covered
// by some copy. It does not re-derive the classes; a plan read from a
// manifest passes it before the copies are built.
func (p *Plan) Check(graphs []*cfg.DAG) error {
	if p.K < 1 || len(p.Copies) != p.K {
		return fmt.Errorf("partition: plan for %d copies has %d", p.K, len(p.Copies))
	}
	if len(p.Funcs) != len(graphs) {
		return fmt.Errorf("partition: plan for %d functions, %d graphs", len(p.Funcs), len(graphs))
	}
	covered := make([][]bool, len(graphs))
	slotsOf := make([][]int, len(graphs)) // per function: copies per slot
	for c, cp := range p.Copies {
		seen := map[int]bool{}
		// list checks the next function of one of the copy's lists: it
		// has a DAG, the list ascends, and no list of the copy has it
		// already.
		last := map[string]int{}
		list := func(name string, def int) error {
			prev, ok := last[name]
			switch {
			case def < 0 || def >= len(graphs) || graphs[def] == nil:
				return fmt.Errorf("partition: copy %d profiles function %d, which has no DAG", c, def)
			case ok && prev >= def:
				return fmt.Errorf("partition: copy %d: %s list not ascending", c, name)
			case seen[def]:
				return fmt.Errorf("partition: copy %d profiles function %d twice", c, def)
			}
			seen[def], last[name] = true, def
			return nil
		}
		for _, def := range cp.BallLarus {
			if err := list("Ball-Larus", def); err != nil {
				return err
			}
			covered[def] = Live(graphs[def])
		}
		for _, s := range cp.Selective {
			def := s.Func
			if err := list("selective", def); err != nil {
				return err
			}
			ne := len(graphs[def].Edges)
			if covered[def] == nil {
				covered[def] = make([]bool, ne)
			}
			for j, e := range s.Edges {
				if e < 0 || int(e) >= ne || j > 0 && s.Edges[j-1] >= e {
					return fmt.Errorf("partition: copy %d, function %d: bad edge list", c, def)
				}
				covered[def][e] = true
			}
		}
		for _, s := range cp.Sliced {
			def := s.Func
			if err := list("sliced", def); err != nil {
				return err
			}
			g := p.Funcs[def].Slices
			if g < 2 || g > MaxSlices {
				return fmt.Errorf("partition: copy %d profiles slots of function %d, which has %d slots", c, def, g)
			}
			if len(s.Slots) == 0 {
				return fmt.Errorf("partition: copy %d, function %d: no slots", c, def)
			}
			if slotsOf[def] == nil {
				slotsOf[def] = make([]int, g)
			}
			for j, x := range s.Slots {
				if x < 0 || x >= g || j > 0 && s.Slots[j-1] >= x {
					return fmt.Errorf("partition: copy %d, function %d: bad slot list", c, def)
				}
				if slotsOf[def][x]++; slotsOf[def][x] > 1 {
					return fmt.Errorf("partition: slot %d of function %d is in two copies", x, def)
				}
			}
		}
	}
	for def, n := range slotsOf {
		if n == nil {
			continue
		}
		if covered[def] != nil {
			return fmt.Errorf("partition: function %d is sliced and also profiled whole or in part", def)
		}
		if i := slices.Index(n, 0); i >= 0 {
			return fmt.Errorf("partition: slot %d of function %d is in no copy", i, def)
		}
		covered[def] = Live(graphs[def])
	}
	for def := range graphs {
		fi := p.Funcs[def]
		if g := fi.Slices; g != 0 && slotsOf[def] == nil {
			return fmt.Errorf("partition: function %d has %d slots in no copy", def, g)
		}
		if fi.Loop != 0 && (fi.Slices == 0 || !isHeader(graphs[def], fi.Loop)) {
			return fmt.Errorf("partition: function %d shares out the iterations of node %d, not a sliced loop's header", def, fi.Loop)
		}
		if fi.Spread && fi.Loop == 0 {
			return fmt.Errorf("partition: function %d deals out iterations by a test, but shares out no loop", def)
		}
		for _, h := range fi.Loops {
			if fi.Loop == 0 || !isHeader(graphs[def], h) || h == fi.Loop {
				return fmt.Errorf("partition: function %d shares out the iterations of node %d too, not another sliced loop's header", def, h)
			}
		}
	}
	for def, d := range graphs {
		if f := p.Funcs[def].Freq; f != nil {
			if d == nil {
				return fmt.Errorf("partition: function %d has frequencies but no DAG", def)
			}
			// The copies place their probes by them: what the
			// instrumenter would refuse, Check refuses.
			if _, err := numbering.ProfileWeights(d, f); err != nil {
				return fmt.Errorf("partition: function %d: %w", def, err)
			}
		}
		if d == nil {
			continue
		}
		live := Live(d)
		for e, l := range live {
			if l && (covered[def] == nil || !covered[def][e]) {
				return fmt.Errorf("partition: edge %d of function %d is in no copy", e, def)
			}
		}
	}
	return nil
}
