// Package runner runs WASI command modules in wazero so that the same module
// with the same inputs always behaves the same way.
//
// Path profiles of two runs are only comparable if the runs took the same
// paths, so everything a program could observe about the host is pinned:
// clocks and the random source are wazero's deterministic fakes, the
// environment holds only what the caller lists, and the file system holds
// only the directories the caller mounts.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/pathprof/pathprof/internal/cputime"
)

// DefaultFeatures is used when Config.Features is zero: WebAssembly 2.0 plus
// every proposal wazero v1.12 implements (threads, tail calls, extended
// constant expressions, exception handling, typed function references), so
// that no valid module is refused for using one of them.
const DefaultFeatures = api.CoreFeaturesV2 |
	experimental.CoreFeaturesThreads |
	experimental.CoreFeaturesTailCall |
	experimental.CoreFeaturesExtendedConst |
	experimental.CoreFeaturesExceptionHandling |
	experimental.CoreFeaturesTypedFunctionReferences

// WASIModule is the name of the module of WASI's imports.
const WASIModule = wasi_snapshot_preview1.ModuleName

// ProgramKey is the key of the program's own instance in the map given to
// Config.AfterRun (the other keys are the names of Config.Modules).
const ProgramKey = ""

// DefaultProgramName is argv[0] when neither Config.ProgramName nor a file
// name is given.
const DefaultProgramName = "main.wasm"

// Mount makes a host directory visible to the guest.
type Mount struct {
	HostDir   string
	GuestPath string
	ReadOnly  bool
	// Fresh says that HostDir is an empty directory made for the run,
	// such as a test's own /tmp: its host path is not part of the input.
	Fresh bool
}

// NamedModule is a module instantiated under Name before the program, so
// that the program can import from it.
type NamedModule struct {
	Name string
	Wasm []byte
}

// Config describes how to compile and run a program.
//
// Compile reads only the compile-time fields and Program.Run only the
// run-time ones; Run and RunFile read both.
type Config struct {
	// Compile-time fields.

	// Features defaults to DefaultFeatures.
	Features api.CoreFeatures
	// CacheDir holds wazero's compilation cache; "" disables it. Compiling
	// a large module takes seconds, loading it from the cache milliseconds.
	// The first Close of a process trims it to CacheLimit.
	CacheDir string
	// Modules are compiled with the program and instantiated afresh,
	// in order, before each run.
	Modules []NamedModule
	// Progress, if set, receives a line before and after compiling a
	// module of a megabyte or more (smaller ones compile in milliseconds).
	Progress io.Writer
	// Interruptible lets a done context stop a running program; without
	// it a running program ignores the context. It is off by default
	// because wazero implements it with a call out of the compiled code at
	// every loop iteration, which made loop-heavy test programs five to
	// ten times slower.
	Interruptible bool
	// HostModules, if set, is called once, after WASI is instantiated and
	// before Modules and the program are compiled, to define Go host
	// modules (r.NewHostModuleBuilder(name)...Compile(ctx)) that Modules
	// and the program may import. Each returned module is instantiated
	// under its builder's name for the life of the Program, not per run:
	// its state lives in Go, where the caller can reset it between runs.
	HostModules func(ctx context.Context, r wazero.Runtime) ([]wazero.CompiledModule, error)
	// Listener, if set, is installed with
	// experimental.WithFunctionListenerFactory for the compilation of every
	// module (WASI, HostModules, Modules and the program), since wazero
	// binds listeners when it compiles; the factory picks the functions it
	// wants and returns nil for the rest, which then cost nothing. It also
	// rides on the context of every run. Listened-to modules compile to
	// different code, cached apart from unlistened ones.
	Listener experimental.FunctionListenerFactory
	// Stubs provide the program's function imports named (stubs.go);
	// StubMissing stubs every other function import that nothing
	// provides. Without them such an import is a *MissingImportsError
	// that lists them all.
	Stubs       []Stub
	StubMissing bool

	// Run-time fields.

	// ProgramName is argv[0]; it defaults to the file's base name in
	// RunFile and to DefaultProgramName otherwise.
	ProgramName string
	// Args are argv[1:].
	Args []string
	// Env entries have the form "KEY=VALUE". The host environment is never
	// passed through.
	Env []string
	// Stdin defaults to empty input; Stdout and Stderr default to discarding.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Dirs are mounted read-write unless marked read-only. Without mounts
	// the guest sees no file system at all.
	Dirs []Mount
	// AfterRun, if set, is called when the program has finished, however
	// it finished, with the instances of Modules keyed by name and the
	// program's under ProgramKey. It is the
	// only point at which their state (such as counters the program
	// updated) can be read; the instances are closed when it returns, and
	// their memories unmapped (memory.go): what it reads through
	// api.Memory.Read must be copied, not kept.
	AfterRun func(ctx context.Context, modules map[string]api.Module) error
	// Live, if set, lets another goroutine read the run's instances while
	// the program runs (Live.Read), such as counters when the run is
	// interrupted.
	Live *Live
	// Started, if set, is called when the program starts to run, once
	// instantiated: until then pathprof only prepares (plans, instruments,
	// compiles), which a stop may abandon.
	Started func()
	// Invoke, if set, runs the program as a reactor or a library is run:
	// _initialize when it is exported, then these calls of its exports,
	// in order (invoke.go), instead of _start. Compile reads it too, to
	// check the calls and not to ask for _start.
	Invoke []Call
}

// Live gives another goroutine the instances of a run while its program
// runs: from instantiation until Run returns. What it reads races
// with the program by design (the program is not stopped), so a reader
// must take only what stays meaningful when read mid-update, such as
// counters that only grow.
type Live struct {
	mu   sync.Mutex
	mods map[string]api.Module
}

// ErrNotRunning is Live.Read's error outside the program's run.
var ErrNotRunning = errors.New("the program is not running")

// Read calls f with the instances, keyed as AfterRun gets them, if the
// program is running (ErrNotRunning otherwise); the run's memories stay
// mapped until f returns.
func (l *Live) Read(f func(modules map[string]api.Module) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mods == nil {
		return ErrNotRunning
	}
	return f(l.mods)
}

func (l *Live) set(mods map[string]api.Module) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.mods = mods
	l.mu.Unlock()
}

// Result describes how a run ended.
type Result struct {
	// ExitCode is the code the program exited with; it is 1 after a trap
	// or an interrupted run.
	ExitCode uint32
	// Exited reports whether the program finished on its own, by
	// returning from _start or by calling proc_exit.
	Exited bool
	// Trap is the trap that ended the program, if one did.
	Trap error
	// CompileTime is how long compiling the program and Modules took,
	// including loading them from the cache.
	CompileTime time.Duration
	// RunTime is how long instantiating and running took.
	RunTime time.Duration
	// CPUTime is the CPU time the thread that instantiated and ran the
	// program used over RunTime (host calls included, garbage collection
	// on other threads not): unlike RunTime, it does not grow while other
	// processes hold the CPU. 0 where the system does not say.
	CPUTime time.Duration
	// StubCalls counts the calls of each of Program.Stubs.
	StubCalls []uint64
	// Returned holds what each call of Config.Invoke returned, up to
	// the first that failed.
	Returned []Returned
}

// ImportError reports an import that no available module provides.
type ImportError struct {
	Importer string // the importing module: a Modules name or the program name
	Module   string // the module named in the import
	Name     string // the field named in the import
	Kind     string // "func" or "memory"
	// Available lists the modules the importer could import from.
	Available []string
	// MissingModule is true when no module of that name exists at all,
	// as opposed to the module existing without exporting Name.
	MissingModule bool
}

func (e *ImportError) Error() string {
	if e.MissingModule {
		return fmt.Sprintf("%s imports %s %q from module %q, which is not available (available modules: %s)",
			e.Importer, e.Kind, e.Name, e.Module, strings.Join(e.Available, ", "))
	}
	return fmt.Sprintf("%s imports %s %q from module %q, which does not export it",
		e.Importer, e.Kind, e.Name, e.Module)
}

// Program is a compiled program that can be run any number of times. Runs
// of one Program are serialised, since each run instantiates Modules under
// their fixed names.
type Program struct {
	rt          wazero.Runtime
	cache       wazero.CompilationCache
	cacheDir    string
	main        wazero.CompiledModule
	modules     []compiledNamed
	compileTime time.Duration
	listener    experimental.FunctionListenerFactory
	stubs       *stubs

	mu sync.Mutex
}

type compiledNamed struct {
	name     string
	compiled wazero.CompiledModule
}

// Run compiles wasm and runs it once.
func Run(ctx context.Context, wasm []byte, cfg Config) (Result, error) {
	p, err := Compile(ctx, wasm, cfg)
	if err != nil {
		return Result{}, err
	}
	defer p.Close(context.WithoutCancel(ctx))
	return p.Run(ctx, cfg)
}

// RunFile is Run for the module in the file at path, whose base name is
// argv[0] unless cfg.ProgramName is set.
func RunFile(ctx context.Context, path string, cfg Config) (Result, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return Result{}, err
	}
	if cfg.ProgramName == "" {
		cfg.ProgramName = filepath.Base(path)
	}
	return Run(ctx, wasm, cfg)
}

// Compile compiles wasm and cfg.Modules, and checks that every function and
// memory they import is provided by WASI or by an earlier module; a missing
// one is reported as an *ImportError.
//
// Compilation is single-threaded unless ctx says otherwise through
// experimental.WithCompilationWorkers: more workers take about the same
// CPU time and shorten the compilation only on cores left idle, which the
// caller knows of (profiler shares the cores out among the copies it
// compiles at once).
func Compile(ctx context.Context, wasm []byte, cfg Config) (_ *Program, err error) {
	if cfg.Listener != nil {
		ctx = experimental.WithFunctionListenerFactory(ctx, cfg.Listener)
	}
	features := cfg.Features
	if features == 0 {
		features = DefaultFeatures
	}
	rc := wazero.NewRuntimeConfig().
		WithCoreFeatures(features).
		WithCloseOnContextDone(cfg.Interruptible)

	p := &Program{listener: cfg.Listener}
	if cfg.CacheDir != "" {
		p.cacheDir = cfg.CacheDir
		p.cache, err = wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("compilation cache: %w", err)
		}
		rc = rc.WithCompilationCache(p.cache)
	}
	p.rt = wazero.NewRuntimeWithConfig(ctx, rc)
	defer func() {
		if err != nil {
			p.Close(context.WithoutCancel(ctx))
		}
	}()

	wasi, err := wasi_snapshot_preview1.NewBuilder(p.rt).Compile(ctx)
	if err != nil {
		return nil, fmt.Errorf("compile WASI host module: %w", err)
	}
	exports := map[string]wazero.CompiledModule{wasi_snapshot_preview1.ModuleName: wasi}
	if _, err := p.rt.InstantiateModule(ctx, wasi, wazero.NewModuleConfig()); err != nil {
		return nil, fmt.Errorf("instantiate WASI host module: %w", err)
	}

	start := time.Now()
	if cfg.HostModules != nil {
		hosts, err := cfg.HostModules(ctx, p.rt)
		if err != nil {
			return nil, fmt.Errorf("host modules: %w", err)
		}
		for _, h := range hosts {
			name := h.Name()
			if name == "" || exports[name] != nil {
				return nil, fmt.Errorf("host module name %q is empty or used twice", name)
			}
			if _, err := p.rt.InstantiateModule(ctx, h, wazero.NewModuleConfig().WithName(name)); err != nil {
				return nil, fmt.Errorf("instantiate host module %s: %w", name, err)
			}
			exports[name] = h
		}
	}
	for _, m := range cfg.Modules {
		if m.Name == "" || exports[m.Name] != nil {
			return nil, fmt.Errorf("module name %q is empty or used twice", m.Name)
		}
		c, err := p.compile(ctx, m.Name, m.Wasm, cfg.Progress)
		if err != nil {
			return nil, err
		}
		if err := checkImports(m.Name, c, exports); err != nil {
			return nil, err
		}
		exports[m.Name] = c
		p.modules = append(p.modules, compiledNamed{m.Name, c})
	}
	name := cfg.ProgramName
	if name == "" {
		name = DefaultProgramName
	}
	if p.main, err = p.compile(ctx, name, wasm, cfg.Progress); err != nil {
		return nil, err
	}
	if err := p.defineStubs(ctx, name, cfg, exports); err != nil {
		return nil, err
	}
	if err := checkImports(name, p.main, exports); err != nil {
		return nil, err
	}
	if len(cfg.Invoke) > 0 {
		if _, err := encodeCalls(name, p.main, cfg.Invoke); err != nil {
			return nil, err
		}
	} else if _, ok := p.main.ExportedFunctions()["_start"]; !ok {
		return nil, &InvokeError{fmt.Sprintf("%s exports no _start function: not a WASI command (a reactor or a library? --invoke NAME[:ARG,...] calls its exports)", name)}
	}
	p.compileTime = time.Since(start)
	return p, nil
}

func (p *Program) compile(ctx context.Context, name string, wasm []byte, progress io.Writer) (wazero.CompiledModule, error) {
	start := time.Now()
	if len(wasm) < 1<<20 {
		progress = nil
	}
	if progress != nil {
		fmt.Fprintf(progress, "pathprof: compiling %s (%.1f MB)\n", name, float64(len(wasm))/1e6)
	}
	c, err := p.rt.CompileModule(ctx, wasm)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", name, err)
	}
	if progress != nil {
		fmt.Fprintf(progress, "pathprof: compiled %s in %v\n", name, time.Since(start).Round(time.Millisecond))
	}
	return c, nil
}

// checkImports checks the imports wazero exposes before instantiation;
// wazero itself reports the rest (globals, tables, tags, signature
// mismatches), with less context.
func checkImports(importer string, c wazero.CompiledModule, exports map[string]wazero.CompiledModule) error {
	available := make([]string, 0, len(exports))
	for name := range exports {
		available = append(available, name)
	}
	slices.Sort(available)

	check := func(kind string, def api.ExportDefinition, exported func(wazero.CompiledModule, string) bool) error {
		module, name, _ := def.Import()
		provider, ok := exports[module]
		if ok && exported(provider, name) {
			return nil
		}
		return &ImportError{Importer: importer, Module: module, Name: name, Kind: kind,
			Available: available, MissingModule: !ok}
	}
	for _, f := range c.ImportedFunctions() {
		err := check("func", f, func(m wazero.CompiledModule, name string) bool {
			_, ok := m.ExportedFunctions()[name]
			return ok
		})
		if err != nil {
			return err
		}
	}
	for _, mem := range c.ImportedMemories() {
		err := check("memory", mem, func(m wazero.CompiledModule, name string) bool {
			_, ok := m.ExportedMemories()[name]
			return ok
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// CompileTime is how long Compile spent compiling the program and Modules.
func (p *Program) CompileTime() time.Duration { return p.compileTime }

// Close releases the compiled code; the Program must not be used after.
func (p *Program) Close(ctx context.Context) error {
	var errs []error
	if p.rt != nil {
		errs = append(errs, p.rt.Close(ctx))
	}
	if p.cache != nil {
		errs = append(errs, p.cache.Close(ctx))
		trimOnce(p.cacheDir)
	}
	return errors.Join(errs...)
}

// Run runs the program once with the run-time fields of cfg.
//
// A program that exits, with any code, is not an error. A trap is returned
// as an error and also recorded in Result.Trap. If the Program was compiled
// with Interruptible and ctx is done before the program finishes, the
// program is stopped and the error wraps ctx.Err().
func (p *Program) Run(ctx context.Context, cfg Config) (res Result, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	res.CompileTime = p.compileTime
	if p.listener != nil {
		ctx = experimental.WithFunctionListenerFactory(ctx, p.listener)
	}
	mems := &memories{}
	defer mems.release() // after the instances close (deferred later)
	ctx = experimental.WithMemoryAllocator(ctx, mems)

	mc, err := moduleConfig(cfg)
	if err != nil {
		return res, err
	}
	p.startStubs()
	// On one thread from start to end, so that its CPU time is the run's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, cpuStart := time.Now(), cputime.Thread()
	defer func() {
		res.RunTime = time.Since(start)
		if c := cputime.Thread(); cpuStart > 0 && c > 0 {
			res.CPUTime = c - cpuStart
		}
		res.StubCalls = p.stubCalls()
	}()

	// Closing in reverse order mirrors instantiation and ensures no
	// instance outlives a module it imports from.
	var instances []api.Module
	defer func() {
		for _, m := range slices.Backward(instances) {
			m.Close(context.WithoutCancel(ctx))
		}
	}()
	byName := make(map[string]api.Module, len(p.modules))
	for _, m := range p.modules {
		inst, err := p.rt.InstantiateModule(ctx, m.compiled, wazero.NewModuleConfig().WithName(m.name))
		if err != nil {
			return res, fmt.Errorf("instantiate %s: %w", m.name, err)
		}
		instances = append(instances, inst)
		byName[m.name] = inst
	}

	name := programName(cfg)
	// _start is called explicitly rather than as a start function so
	// that instantiation failures and traps during the run stay apart.
	mod, err := p.rt.InstantiateModule(ctx, p.main, mc.WithName("").WithStartFunctions())
	if err != nil {
		return res, fmt.Errorf("instantiate %s: %w", name, err)
	}
	instances = append(instances, mod)

	live := maps.Clone(byName)
	live[ProgramKey] = mod
	cfg.Live.set(live)
	defer cfg.Live.set(nil) // before the memories are released
	if cfg.Started != nil {
		cfg.Started()
	}
	var callErr error
	if len(cfg.Invoke) > 0 {
		args, err := encodeCalls(name, p.main, cfg.Invoke)
		if err != nil {
			return res, err
		}
		callErr = invoke(ctx, mod, cfg.Invoke, args, &res)
	} else {
		_, callErr = mod.ExportedFunction("_start").Call(ctx)
	}
	res.ExitCode, res.Exited = 0, true
	var exit *sys.ExitError
	switch {
	case callErr == nil:
	case errors.As(callErr, &exit) && !interrupted(ctx, exit):
		res.ExitCode = exit.ExitCode()
	case ctx.Err() != nil:
		res.ExitCode, res.Exited = 1, false
		err = fmt.Errorf("%s interrupted: %w", name, ctx.Err())
	default:
		res.ExitCode, res.Exited, res.Trap = 1, false, callErr
		err = fmt.Errorf("%s trapped: %w", name, callErr)
	}

	if cfg.AfterRun != nil {
		byName[ProgramKey] = mod
		if aerr := cfg.AfterRun(ctx, byName); aerr != nil {
			err = errors.Join(err, aerr)
		}
	}
	return res, err
}

// interrupted tells wazero's exit for a done context apart from a program
// that happens to exit with one of the two codes wazero reserves for it.
func interrupted(ctx context.Context, exit *sys.ExitError) bool {
	code := exit.ExitCode()
	return ctx.Err() != nil && (code == sys.ExitCodeContextCanceled || code == sys.ExitCodeDeadlineExceeded)
}

func programName(cfg Config) string {
	if cfg.ProgramName != "" {
		return cfg.ProgramName
	}
	return DefaultProgramName
}

func moduleConfig(cfg Config) (wazero.ModuleConfig, error) {
	// NewModuleConfig's clocks and random source are already the
	// deterministic fakes; WithSysWalltime and friends must never be used.
	mc := wazero.NewModuleConfig().
		WithArgs(append([]string{programName(cfg)}, cfg.Args...)...)
	for _, kv := range cfg.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("environment entry %q is not of the form KEY=VALUE", kv)
		}
		mc = mc.WithEnv(k, v)
	}
	if cfg.Stdin != nil {
		mc = mc.WithStdin(plainReader{cfg.Stdin})
	}
	if cfg.Stdout != nil {
		mc = mc.WithStdout(plainWriter{cfg.Stdout})
	}
	if cfg.Stderr != nil {
		mc = mc.WithStderr(plainWriter{cfg.Stderr})
	}
	if len(cfg.Dirs) > 0 {
		fs := wazero.NewFSConfig()
		for _, d := range cfg.Dirs {
			if d.HostDir == "" || d.GuestPath == "" {
				return nil, fmt.Errorf("mount %+v needs both a host directory and a guest path", d)
			}
			if d.ReadOnly {
				fs = fs.WithReadOnlyDirMount(d.HostDir, d.GuestPath)
			} else {
				fs = fs.WithDirMount(d.HostDir, d.GuestPath)
			}
		}
		mc = mc.WithFSConfig(fs)
	}
	return mc, nil
}

// plainWriter and plainReader hide what stands behind the program's
// standard streams. wazero reports an *os.File as what it is (a terminal, a
// character device such as /dev/null, a pipe), and wasi-libc buffers stdout
// by line on a character device and fully otherwise: the same input would
// take other paths depending on where the output goes. Behind these, every
// stream is the same kind of file in every run.
type plainWriter struct{ w io.Writer }

func (p plainWriter) Write(b []byte) (int, error) { return p.w.Write(b) }

type plainReader struct{ r io.Reader }

func (p plainReader) Read(b []byte) (int, error) { return p.r.Read(b) }
