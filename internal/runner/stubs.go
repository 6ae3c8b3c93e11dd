package runner

// This file holds stubs: host functions for the program's imports that
// neither WASI nor Config.Modules provide, such as a benchmark harness's
// markers or a host's helpers.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Stub is one function import of the program that a host function
// provides: it does nothing but count its calls and return Result.
type Stub struct {
	Module, Name string
	// Result is what every result of the function is, as written on the
	// command line: "" for zero, else a number of the result's type
	// (an integer for i32 and i64, any float for f32 and f64).
	Result string
}

// ParseStub reads "MODULE.NAME[=RESULT]"; MODULE ends at the first dot.
func ParseStub(s string) (Stub, error) {
	spec, result, _ := strings.Cut(s, "=")
	mod, name, ok := strings.Cut(spec, ".")
	if !ok || mod == "" || name == "" {
		return Stub{}, fmt.Errorf("--stub %q: want MODULE.NAME or MODULE.NAME=RESULT", s)
	}
	return Stub{Module: mod, Name: name, Result: result}, nil
}

func (s Stub) String() string { return s.Module + "." + s.Name }

// stubs is the state of a Program's stubs: one call counter each.
type stubs struct {
	list  []Stub
	calls []atomic.Uint64
}

// StubError says why the stubs asked for cannot be made: a stub of an
// import the program does not have, or one that something provides, or a
// RESULT of the wrong type.
type StubError struct{ Msg string }

func (e *StubError) Error() string { return e.Msg }

func stubErrorf(format string, args ...any) error {
	return &StubError{Msg: fmt.Sprintf(format, args...)}
}

// IsSetupError reports whether err says that the program cannot be run
// as asked: its imports cannot be provided (a *MissingImportsError, a
// *StubError) or its exports called (an *InvokeError). Nothing ran, and
// running again the same way fails the same way.
func IsSetupError(err error) bool {
	var m *MissingImportsError
	var s *StubError
	var i *InvokeError
	return errors.As(err, &m) || errors.As(err, &s) || errors.As(err, &i)
}

// MissingImportsError lists every function import of a program that no
// module provides, where ImportError names only the first.
type MissingImportsError struct {
	Importer string
	Missing  []Stub // Result unset
}

func (e *MissingImportsError) Error() string {
	names := make([]string, len(e.Missing))
	for i, m := range e.Missing {
		names[i] = m.String()
	}
	msg := fmt.Sprintf("%s imports %d %s that neither WASI nor pathprof provides: %s (--stub MODULE.NAME[=RESULT] provides one that returns zero or RESULT, --stub-missing all of them)",
		e.Importer, len(names), plural(len(names), "function"), strings.Join(names, ", "))
	for _, m := range e.Missing {
		// Stubs would not do for emscripten's glue, which the program
		// leans on (it grows the memory, say): its host runs the copies.
		if m.Module == "env" && strings.HasPrefix(m.Name, "emscripten_") {
			return msg + "; built with emscripten's JavaScript glue? pathprof instrument --host js writes copies that the glue runs (docs/js-hosts.md)"
		}
	}
	return msg
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// defineStubs checks the program's function imports against exports (the
// modules that provide imports) and defines, as host modules, the stubs
// cfg asks for: cfg.Stubs, and with cfg.StubMissing every function import
// nothing provides. Program.Stubs lists them after, cfg.Stubs first and
// then the missing ones in import order.
func (p *Program) defineStubs(ctx context.Context, name string, cfg Config, exports map[string]wazero.CompiledModule) error {
	imports := p.main.ImportedFunctions()
	provided := func(def api.FunctionDefinition) bool {
		module, field, _ := def.Import()
		m, ok := exports[module]
		if !ok {
			return false
		}
		_, ok = m.ExportedFunctions()[field]
		return ok
	}
	find := func(s Stub) api.FunctionDefinition {
		for _, def := range imports {
			if module, field, _ := def.Import(); module == s.Module && field == s.Name {
				return def
			}
		}
		return nil
	}
	var list []Stub
	defs := map[Stub]api.FunctionDefinition{}
	for _, s := range cfg.Stubs {
		def := find(s)
		if def == nil {
			return stubErrorf("--stub %s: %s imports no function %s", s, name, s)
		}
		if provided(def) {
			return stubErrorf("--stub %s: %s is provided by %s; only imports nothing provides can be stubbed", s, s, s.Module)
		}
		key := Stub{Module: s.Module, Name: s.Name}
		if _, dup := defs[key]; dup {
			return stubErrorf("--stub %s: given twice", s)
		}
		defs[key] = def
		list = append(list, s)
	}
	var missing []Stub
	for _, def := range imports {
		module, field, _ := def.Import()
		key := Stub{Module: module, Name: field}
		// An import from a module that exists but lacks the name (a WASI
		// call wazero does not know) is checkImports' *ImportError: a stub
		// cannot join a module that exists.
		if _, ok := defs[key]; ok || provided(def) || exports[module] != nil {
			continue
		}
		missing = append(missing, key)
		defs[key] = def
	}
	if len(missing) > 0 && !cfg.StubMissing {
		return &MissingImportsError{Importer: name, Missing: missing}
	}
	list = append(list, missing...)
	if len(list) == 0 {
		return nil
	}
	p.stubs = &stubs{list: list, calls: make([]atomic.Uint64, len(list))}
	byModule := map[string][]int{}
	var order []string
	for i, s := range list {
		if exports[s.Module] != nil {
			return stubErrorf("--stub %s: module %s is provided, but not %s: stubs cannot join a module that exists", s, s.Module, s.Name)
		}
		if byModule[s.Module] == nil {
			order = append(order, s.Module)
		}
		byModule[s.Module] = append(byModule[s.Module], i)
	}
	for _, mod := range order {
		b := p.rt.NewHostModuleBuilder(mod)
		for _, i := range byModule[mod] {
			s := list[i]
			def := defs[Stub{Module: s.Module, Name: s.Name}]
			results, err := stubResults(s, def.ResultTypes())
			if err != nil {
				return err
			}
			b.NewFunctionBuilder().
				WithGoModuleFunction(p.stubFunc(i, results), def.ParamTypes(), def.ResultTypes()).
				Export(s.Name)
		}
		c, err := b.Compile(ctx)
		if err != nil {
			return fmt.Errorf("stubs of module %s: %w", mod, err)
		}
		if _, err := p.rt.InstantiateModule(ctx, c, wazero.NewModuleConfig().WithName(mod)); err != nil {
			return fmt.Errorf("stubs of module %s: %w", mod, err)
		}
		exports[mod] = c
	}
	return nil
}

func (p *Program) stubFunc(i int, results []uint64) api.GoModuleFunc {
	st := p.stubs
	return func(_ context.Context, _ api.Module, stack []uint64) {
		st.calls[i].Add(1)
		copy(stack, results)
	}
}

// stubResults encodes s.Result as every result of types, as wazero
// passes results.
func stubResults(s Stub, types []api.ValueType) ([]uint64, error) {
	out := make([]uint64, len(types))
	if s.Result == "" {
		return out, nil
	}
	if len(types) == 0 {
		return nil, stubErrorf("--stub %s=%s: %s returns nothing", s, s.Result, s)
	}
	for i, t := range types {
		v, err := encodeValue(s.Result, t)
		if err != nil {
			return nil, stubErrorf("--stub %s=%s: %s returns %s: %v", s, s.Result, s, api.ValueTypeName(t), err)
		}
		out[i] = v
	}
	return out, nil
}

// Stubs are the stubs the program was compiled with: Config.Stubs, then
// with Config.StubMissing the imports nothing else provides. Result.StubCalls
// counts their calls in this order.
func (p *Program) Stubs() []Stub {
	if p.stubs == nil {
		return nil
	}
	return slices.Clone(p.stubs.list)
}

// startStubs resets the call counters for a run.
func (p *Program) startStubs() {
	if p.stubs == nil {
		return
	}
	for i := range p.stubs.calls {
		p.stubs.calls[i].Store(0)
	}
}

// stubCalls returns the run's call counts.
func (p *Program) stubCalls() []uint64 {
	if p.stubs == nil {
		return nil
	}
	out := make([]uint64, len(p.stubs.calls))
	for i := range out {
		out[i] = p.stubs.calls[i].Load()
	}
	return out
}
