// Planning a function of a counting copy: the scratch locals, the graph and
// its numbering (cut to fit), and the probes its Mode asks for.

package instrument

import (
	"errors"
	"fmt"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/wasm"
)

// checkSlices validates a sliced mode.
func checkSlices(md Mode) error {
	switch {
	case md.Kind != partition.Sliced:
		return fmt.Errorf("slices of a %v function", md.Kind)
	case md.Slices < 2 || md.Slices > 32:
		return fmt.Errorf("%d slots (2 to 32)", md.Slices)
	case len(md.Slots) == 0:
		return errors.New("no slots")
	case len(md.Loops) > 0 && md.Loop == 0:
		return errors.New("more loops shared out without a first")
	case md.Spread && md.Loop == 0:
		return errors.New("iterations dealt out by a test, but no loop shared out")
	}
	for j, x := range md.Slots {
		if x < 0 || x >= md.Slices || j > 0 && md.Slots[j-1] >= x {
			return fmt.Errorf("bad slots %v of %d", md.Slots, md.Slices)
		}
	}
	return nil
}

// prepare scans the body of defined function def and adds f's scratch
// locals after its own: the path register (an i64) and i32s i32 locals
// (a saved branch condition, a saved br_table index, then the copy's
// own), the i32s first where the body's last declaration is of i32s and
// there is no extra, then extra. It returns the function's type and the
// body's local declarations.
func (f *Func) prepare(m *wasm.Module, def int, i32s uint32, extra ...wasm.LocalDecl) (wasm.FuncType, []wasm.LocalDecl, error) {
	return f.prepareScanned(m, def, i32s, nil, extra...)
}

// prepareScanned is prepare, taking the scan s (when not nil) of the same
// function's body prepared alike, by another copy, instead of scanning the
// body again.
func (f *Func) prepareScanned(m *wasm.Module, def int, i32s uint32, s *scan, extra ...wasm.LocalDecl) (wasm.FuncType, []wasm.LocalDecl, error) {
	c := &m.Code[def]
	ft, ok := m.FuncType(m.NumImportedFuncs + uint32(def))
	if !ok {
		return ft, nil, fmt.Errorf("no type")
	}
	base := uint32(uint64(len(ft.Params)) + c.NumLocals())
	locals := append([]wasm.LocalDecl(nil), c.Locals...)
	reg, i32 := base, base+1
	if n := len(locals); n > 0 && locals[n-1].Type == wasm.ValI32 && len(extra) == 0 {
		// The i32s first, where they extend the body's last
		// declaration instead of taking one of their own.
		locals[n-1].Count += i32s
		locals = append(locals, wasm.LocalDecl{Count: 1, Type: wasm.ValI64})
		reg, i32 = base+i32s, base
	} else {
		locals = append(locals, wasm.LocalDecl{Count: 1, Type: wasm.ValI64}, wasm.LocalDecl{Count: i32s, Type: wasm.ValI32})
	}
	locals = append(locals, extra...)
	// The body with its new locals is scanned, not the old one shifted:
	// moving every offset of a big function's scan cost as much again.
	old := *c
	if err := c.SetLocals(locals); err != nil {
		return ft, nil, err
	}
	if s != nil && (s.expr != c.ExprOff || s.size != len(c.Body)) {
		s = nil
	}
	var err error
	if s == nil {
		s, err = scanBody(m, c, ft.Results)
	}
	if err != nil {
		// The function is left as it was, with the old body's error.
		*c = old
		if _, oerr := scanBody(m, c, ft.Results); oerr != nil {
			err = oerr
		}
		return ft, nil, err
	}
	f.scan, f.reg, f.cond, f.idx, f.next = s, reg, i32, i32+1, base+1+i32s
	return ft, locals, nil
}

// planFunc adds the scratch locals, builds the graph (or takes it from a,
// the function's analysis, when a has one) and chooses the probes of a
// counting copy.
func planFunc(m *wasm.Module, def int, f *Func, a *Func, cfgOpt cfg.Options, choose func(*Func) Mode) error {
	// The third scratch i32, idx+1, is a counter's address.
	orig := m.Code[def]
	chooseMode := func() {
		f.Mode = Mode{Kind: partition.BallLarus}
		if choose != nil {
			f.Mode = choose(f)
		}
	}
	if a != nil && a.Graph != nil {
		// The analysis prepared and scanned the same body: a function
		// this copy does not profile is not touched, and one it
		// profiles takes the analysis's scan.
		f.Graph, f.bodyMap, f.Cuts, f.DAG, f.Num = a.Graph, a.bodyMap, a.Cuts, a.DAG, a.Num
		if chooseMode(); f.Mode.Kind == partition.None {
			return nil
		}
		if _, _, err := f.prepareScanned(m, def, 3, a.scan); err != nil {
			return err
		}
	} else {
		if _, _, err := f.prepare(m, def, 3); err != nil {
			return err
		}
		if err := f.number(&m.Code[def], cfgOpt, numbering.MaxPaths); err != nil {
			return err
		}
		chooseMode()
	}
	var err error
	d := f.DAG
	var plan *numbering.Placement
	switch f.Mode.Kind {
	case partition.None:
		// A function this copy does not profile keeps its body as it
		// is, without the scratch locals: the graph and its offsets
		// are the prepared body's, which maps to the original. Read
		// first, the prepared body tells which loops a copy that
		// profiles the function would count where they are left.
		if ft, ok := m.FuncType(f.Index); ok && f.Graph != nil && f.scan != nil {
			f.countedShapes = countedShapes(&m.Code[def], f, ft.Params)
		}
		m.Code[def] = orig
		return nil
	case partition.Selective:
		if len(f.Mode.Interesting) != len(d.Edges) {
			return fmt.Errorf("selective mode with %d edge marks for %d DAG edges", len(f.Mode.Interesting), len(d.Edges))
		}
		if f.Sel, err = numbering.PSPP(d, f.Mode.Interesting); err != nil {
			return err
		}
		if plan, err = numbering.PlaceSelectiveFreq(d, f.Sel, f.Mode.Freq); err != nil {
			return err
		}
	case partition.BallLarus, partition.Sliced:
		// Counts stay where paths end, so a path cut short by a trap is
		// not counted. The register is a fresh local, 0 at the entry,
		// but in a loop shared out a bare replica leaves it to the
		// probed ones.
		if f.Rev, plan, f.order, err = numbering.PlaceReverse(d, f.Num, f.Mode.Freq, numbering.PlaceOptions{NoCountFolding: true, ZeroAtEntry: f.Mode.Loop == 0}); err != nil {
			return err
		}
	default:
		return fmt.Errorf("mode %v", f.Mode.Kind)
	}
	f.setPlacement(plan)
	return nil
}

func (f *Func) setPlacement(plan *numbering.Placement) {
	f.Placement = plan
	// Each edge's operations, in the probes' order, carved from one
	// array rather than grown one edge at a time. The probes are sorted
	// by edge, so each edge's are a run of them: the arrays are written
	// without being counted into first, which for fresh pages would cost
	// a second fault each.
	f.ops = make([][]numbering.Op, len(f.Graph.Edges))
	ps := plan.Probes
	all := make([]numbering.Op, len(ps))
	for i, p := range ps {
		all[i] = p.Op
	}
	for i := 0; i < len(ps); {
		j := i + 1
		for j < len(ps) && ps[j].Edge == ps[i].Edge {
			j++
		}
		f.ops[ps[i].Edge] = all[i:j:j]
		i = j
	}
}

// emitted drops what only emitting f's probes needed (its body's scan,
// its operations per edge, its placement's operations and probes) once
// its code is final: functions are emitted while the others' plans are
// still held, and these were much of the memory then live.
func (f *Func) emitted() {
	f.scan, f.ops = nil, nil
	if p := f.Placement; p != nil {
		f.Placement = &numbering.Placement{NumPaths: p.NumPaths}
	}
}

// number builds f's graph and DAG, cut to at most limit paths, and
// numbers its paths.
func (f *Func) number(c *wasm.Code, cfgOpt cfg.Options, limit int64) error {
	g, err := cfg.BuildBody(c, cfgOpt)
	if err != nil {
		return err
	}
	d, n, cuts, err := numbering.NumberCut(g, limit)
	if err != nil {
		return err
	}
	f.Graph, f.bodyMap, f.Cuts = g, c.Map, cuts
	f.DAG, f.Num = d, n
	return nil
}
