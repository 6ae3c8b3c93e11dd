package partition

// This file finds who calls each function: its call sites, and whether it
// can be called from elsewhere (export, start, reference), which decides
// the P3 candidates.

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pathprof/pathprof/internal/wasm"
)

// Callers is what the module says about who calls each function. Both
// slices are indexed by function index, imported functions first.
type Callers struct {
	// Sites counts the static call sites: call and return_call
	// instructions naming the function, in every body.
	Sites []int
	// Escapes marks functions that may be called from places no
	// instruction of the module names: exported functions, the start
	// function, and functions whose reference is taken (element segments,
	// ref.func in a body or a constant expression) and may reach a table
	// or call_ref.
	Escapes []bool
}

// FindCallers scans the module for call sites and escaping functions.
func FindCallers(m *wasm.Module) (*Callers, error) {
	n := m.NumFuncs()
	c := &Callers{Sites: make([]int, n), Escapes: make([]bool, n)}
	escape := func(fn uint32) error {
		if fn >= n {
			return fmt.Errorf("partition: reference to function %d of %d", fn, n)
		}
		c.Escapes[fn] = true
		return nil
	}
	for _, e := range m.Exports {
		if e.Kind == wasm.KindFunc {
			if err := escape(e.Index); err != nil {
				return nil, err
			}
		}
	}
	if m.HasStart {
		if err := escape(m.Start); err != nil {
			return nil, err
		}
	}
	r := wasm.NewReader(nil, 0, "constant expression")
	exprRefs := func(expr []byte) error {
		r.Reset(expr, 0)
		var in wasm.Instr
		for !r.Done() {
			if err := r.Next(&in); err != nil {
				return err
			}
			if in.Op == wasm.OpRefFunc {
				if err := escape(in.A); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, el := range m.Elements {
		for _, fn := range el.Funcs {
			if err := escape(fn); err != nil {
				return nil, err
			}
		}
		for _, x := range el.Exprs {
			if err := exprRefs(x); err != nil {
				return nil, err
			}
		}
	}
	for _, g := range m.Globals {
		if err := exprRefs(g.Init); err != nil {
			return nil, err
		}
	}
	for _, t := range m.Tables {
		if err := exprRefs(t.Init); err != nil {
			return nil, err
		}
	}
	// The bodies are scanned on every core, each worker counting into its
	// own slices; the error reported is the first function's, as one scan
	// in order would report.
	workers := min(runtime.GOMAXPROCS(0), len(m.Code))
	sites := make([][]int, workers)
	escapes := make([][]bool, workers)
	errs := make([]error, len(m.Code))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		sites[w], escapes[w] = make([]int, n), make([]bool, n)
		wg.Go(func() {
			var in wasm.Instr
			cr := wasm.NewReader(nil, 0, "code")
			for i := int(next.Add(1) - 1); i < len(m.Code); i = int(next.Add(1) - 1) {
				errs[i] = scanCalls(m, i, cr, &in, sites[w], escapes[w])
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for w := range workers {
		for fn, k := range sites[w] {
			c.Sites[fn] += k
		}
		for fn, e := range escapes[w] {
			c.Escapes[fn] = c.Escapes[fn] || e
		}
	}
	return c, nil
}

// scanCalls counts the call sites in defined function i's body into sites
// and marks the functions it takes a reference of in escapes.
func scanCalls(m *wasm.Module, i int, cr *wasm.Reader, in *wasm.Instr, sites []int, escapes []bool) error {
	n := uint32(len(sites))
	code := &m.Code[i]
	cr.Reset(code.Body, code.OrigOff)
	cr.Seek(int(code.ExprOff))
	for !cr.Done() {
		if err := cr.Next(in); err != nil {
			return err
		}
		switch in.Op {
		case wasm.OpCall, wasm.OpReturnCall:
			if in.A >= n {
				return fmt.Errorf("partition: function %d calls function %d of %d", m.NumImportedFuncs+uint32(i), in.A, n)
			}
			sites[in.A]++
		case wasm.OpRefFunc:
			if in.A >= n {
				return fmt.Errorf("partition: reference to function %d of %d", in.A, n)
			}
			escapes[in.A] = true
		}
	}
	return nil
}

// Candidate reports whether function fn may be partitioned: a run then
// enters it from at most one place. The P3 paper's reason is that the
// probes of a function called from many sites run on behalf of all of
// them, so splitting its paths over copies makes every copy pay for the
// shared probes; a function whose callers are unknown may be such a one.
func (c *Callers) Candidate(fn uint32) bool {
	return int(fn) < len(c.Sites) && c.Sites[fn] <= 1 && !c.Escapes[fn]
}
