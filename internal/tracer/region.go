package tracer

// This file limits a trace to a region of interest, as the profiler does
// (profile.Region): a path counts when it ends while the region is open,
// and the frames with a path in progress at each boundary are its cuts.

import (
	"cmp"
	"slices"

	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/profile"
)

// Region is the region of interest of a traced run: between calls of the
// imports Start and End (module and name), or while the defined function
// Func (an original function index) is on the stack.
type Region struct {
	Start, End [2]string
	Func       uint32
	ByFunc     bool
}

// regionState follows the region during a run.
type regionState struct {
	r     Region
	open  bool
	depth int // frames of Func on the stack
	rec   profile.Region
	cuts  map[uint32]*profile.Cut
}

func newRegionState(r *Region) *regionState {
	if r == nil {
		return nil
	}
	return &regionState{r: *r, cuts: map[uint32]*profile.Cut{}}
}

// counting reports whether a path ending now counts.
func (st *state) counting() bool { return st.region == nil || st.region.open }

// marker reports whether def is the start (1) or end (2) marker, or
// neither (0).
func (rs *regionState) marker(def api.FunctionDefinition) int {
	if rs == nil || rs.r.ByFunc || def.GoFunction() == nil {
		return 0
	}
	at := [2]string{def.ModuleName(), def.Name()}
	switch at {
	case rs.r.Start:
		return 1
	case rs.r.End:
		return 2
	}
	return 0
}

// cross opens or closes the region, counting the paths in progress on
// the stack below the boundary as cut.
func (st *state) cross(open bool) {
	rs := st.region
	if rs.open == open {
		return
	}
	rs.open = open
	if open {
		rs.rec.Opened++
	} else {
		rs.rec.Closed++
	}
	for i := range st.stack {
		fr := &st.stack[i]
		if fr.fn == nil || fr.cur < 0 {
			continue
		}
		c := rs.cuts[fr.fn.Index]
		if c == nil {
			c = &profile.Cut{Index: fr.fn.Index}
			rs.cuts[fr.fn.Index] = c
		}
		if open {
			c.AtOpen++
		} else {
			c.AtClose++
		}
	}
}

// enter notes a call of def, before its frame is pushed.
func (st *state) enterRegion(def api.FunctionDefinition, fn *Func) {
	rs := st.region
	if rs == nil {
		return
	}
	switch {
	case rs.r.ByFunc:
		if fn != nil && fn.Index == rs.r.Func {
			if rs.depth++; rs.depth == 1 {
				st.cross(true)
			}
		}
	case rs.marker(def) == 1:
		st.cross(true)
	case rs.marker(def) == 2:
		st.cross(false)
	}
}

// leaveRegion notes that the frame fr, just removed from the stack, ended.
func (st *state) leaveRegion(fr frame) {
	rs := st.region
	if rs == nil || !rs.r.ByFunc || fr.fn == nil || fr.fn.Index != rs.r.Func {
		return
	}
	if rs.depth--; rs.depth == 0 {
		st.cross(false)
	}
}

// record returns what the region saw, cuts in function order.
func (rs *regionState) record() *profile.Region {
	if rs == nil {
		return nil
	}
	r := rs.rec
	for _, c := range rs.cuts {
		r.Cut = append(r.Cut, *c)
	}
	slices.SortFunc(r.Cut, func(a, b profile.Cut) int { return cmp.Compare(a.Index, b.Index) })
	return &r
}
