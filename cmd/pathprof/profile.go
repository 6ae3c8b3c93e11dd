package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pathprof/pathprof/internal/history"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/report"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/tempfiles"
	"github.com/pathprof/pathprof/profile"
)

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// runFlags are the flags that describe a program's run.
type runFlags struct {
	env   multiFlag
	dirs  multiFlag
	stdin string
	cache string
	// stubs and stubMissing provide imports nothing else does.
	stubs       multiFlag
	stubMissing bool
	// invoke calls exports in place of _start.
	invoke multiFlag
	// inherit is pathprof's own standard input, the program's without
	// --stdin.
	inherit inherited
}

func (r *runFlags) register(fs *flag.FlagSet) {
	fs.Var(&r.env, "env", "set an environment variable `K=V` for the program (repeatable; the host's environment is never passed)")
	fs.Var(&r.dirs, "dir", "mount host directory `HOST[:GUEST][:ro]` at GUEST (default: the same path), read-write, or read-only with :ro (repeatable)")
	fs.StringVar(&r.stdin, "stdin", "", "feed `FILE` to the program's standard input (default: pathprof's own, unless it is a terminal)")
	fs.StringVar(&r.cache, "cache", defaultCache(), "compilation cache `DIR` (\"\" for none)")
	fs.Var(&r.stubs, "stub", "provide the function import `MODULE.NAME[=RESULT]`, which nothing else does, as a stub that returns zero or RESULT (repeatable)")
	fs.BoolVar(&r.stubMissing, "stub-missing", false, "provide every function import that nothing else does as a stub that returns zero")
	fs.Var(&r.invoke, "invoke", "run a reactor or library: call _initialize if exported, then the export `NAME[:ARG,...]` (i32, i64, f32, f64 arguments; repeatable, in order) in place of _start, and print what it returns")
}

func defaultCache() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "pathprof", "wazero")
	}
	return ""
}

// program is the runner configuration of the flags that concern the
// program rather than its input: its name, the compilation cache, stubs
// and the exports to invoke.
func (r *runFlags) program(module string) (runner.Config, error) {
	cfg := runner.Config{
		ProgramName: filepath.Base(module),
		CacheDir:    r.cache,
		StubMissing: r.stubMissing,
	}
	for _, c := range r.invoke {
		call, err := runner.ParseCall(c)
		if err != nil {
			return cfg, err
		}
		cfg.Invoke = append(cfg.Invoke, call)
	}
	for _, st := range r.stubs {
		s, err := runner.ParseStub(st)
		if err != nil {
			return cfg, err
		}
		cfg.Stubs = append(cfg.Stubs, s)
	}
	return cfg, nil
}

// config turns the flags into a runner configuration.
func (r *runFlags) config(module string, args []string, stdout, stderr io.Writer) (runner.Config, error) {
	cfg, err := r.program(module)
	if err != nil {
		return cfg, err
	}
	cfg.Args, cfg.Stdout, cfg.Stderr = args, stdout, stderr
	for _, e := range r.env {
		if !strings.Contains(e, "=") {
			return cfg, fmt.Errorf("--env %q: want K=V", e)
		}
		cfg.Env = append(cfg.Env, e)
	}
	if cfg.Dirs, err = r.mounts(); err != nil {
		return cfg, err
	}
	if r.stdin != "" {
		b, err := os.ReadFile(r.stdin)
		if err != nil {
			return cfg, fmt.Errorf("--stdin: %w", err)
		}
		cfg.Stdin = bytes.NewReader(b)
	} else {
		b, err := r.inherit.input()
		if err != nil {
			return cfg, err
		}
		if b != nil {
			cfg.Stdin = bytes.NewReader(b)
		}
	}
	return cfg, nil
}

// mounts are the --dir flags' mounts, each host directory checked.
func (r *runFlags) mounts() ([]runner.Mount, error) {
	var ms []runner.Mount
	for _, d := range r.dirs {
		m, err := parseDir(d)
		if err != nil {
			return nil, err
		}
		if fi, err := os.Stat(m.HostDir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("--dir %s: not a directory", m.HostDir)
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// parseDir parses a --dir value, HOST[:GUEST][:ro|:rw]. HOST ends at the
// first colon, and the guest path, the host's by default, runs to the
// end but for a last field ro (read-only) or rw (read-write, the
// default): a guest path that itself ends in ":ro" or ":rw" is written
// with the mode after it (HOST:/x:ro:rw mounts /x:ro read-write).
func parseDir(v string) (runner.Mount, error) {
	rest, ro := v, false
	for _, mode := range []string{":ro", ":rw"} {
		if r, ok := strings.CutSuffix(v, mode); ok {
			rest, ro = r, mode == ":ro"
			break
		}
	}
	host, guest, ok := strings.Cut(rest, ":")
	if !ok {
		guest = host
	}
	switch {
	case host == "":
		return runner.Mount{}, fmt.Errorf("--dir %q: no host directory (want HOST[:GUEST][:ro])", v)
	case guest == "":
		return runner.Mount{}, fmt.Errorf("--dir %q: no guest path after the colon (want HOST[:GUEST][:ro])", v)
	}
	return runner.Mount{HostDir: host, GuestPath: guest, ReadOnly: ro}, nil
}

// load checks that the output file out can be written, reads the module
// and builds its run configuration, or says why not and returns the exit
// code: 1 for an output or a module that cannot be used, 2 for flags that
// do not make sense. The output is checked first, so that a typo in it
// costs no run.
func (r *runFlags) load(path, out string, args []string, stdout, stderr io.Writer) ([]byte, runner.Config, int) {
	if !checkOutput(out, stderr) {
		return nil, runner.Config{}, 1
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return nil, runner.Config{}, 1
	}
	startHeap(len(orig))
	cfg, err := r.config(path, args, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return nil, runner.Config{}, 2
	}
	return orig, cfg, 0
}

// parseWithRun registers the runner flags on fs, whose own flags are
// already registered, and parses args as valgrind and wazero take them:
// pathprof's flags, then the command's operands (operands of them), and
// everything after the last operand is the program's, flags included; a
// "--" there is dropped, so the older "MODULE -- ARGS" still works. ok is
// false when parsing failed or an operand is missing (after saying why).
// osp, whose --show takes no operand, passes -operands: the caller then
// checks them with hasOperands.
func parseWithRun(fs *flag.FlagSet, args []string, operands int) (rf *runFlags, progArgs []string, ok bool) {
	rf = &runFlags{}
	rf.register(fs)
	own, progArgs := splitProgram(fs, args, max(operands, -operands))
	if err := fs.Parse(own); err != nil {
		return nil, nil, false
	}
	if operands > 0 && !hasOperands(fs, operands) {
		return nil, nil, false
	}
	return rf, progArgs, true
}

// hasOperands reports whether fs parsed n operands, and says which are
// missing when not.
func hasOperands(fs *flag.FlagSet, n int) bool {
	if fs.NArg() >= n {
		return true
	}
	fmt.Fprintf(fs.Output(), "pathprof %s: missing %s\n%s\n(\"pathprof %s -h\" lists the flags)\n",
		fs.Name(), strings.Join(operandNames[fs.Name()][fs.NArg():n], " and "), usageOf(fs.Name()), fs.Name())
	return false
}

// operandNames names the operands of the commands that run a program, for
// the message that says one is missing.
var operandNames = map[string][]string{
	"profile":   {"MODULE"},
	"test":      {"MODULE|PACKAGE"},
	"osp":       {"MODULE"},
	"osp-score": {"MODULE"},
	"exec":      {"DIR", "COPY"},
}

// splitProgram splits args into pathprof's (flags first, then up to
// operands operands) and the program's: whatever follows the last
// operand, without a leading "--". A "--" before the operands ends
// pathprof's flags.
func splitProgram(fs *flag.FlagSet, args []string, operands int) (own, prog []string) {
	var flags, ops []string
	for i := 0; i < len(args); i++ {
		if len(ops) == operands {
			rest := args[i:]
			if len(rest) > 0 && rest[0] == "--" {
				rest = rest[1:]
			}
			return append(flags, ops...), rest
		}
		a := args[i]
		if a == "--" {
			rest := args[i+1:]
			n := min(operands-len(ops), len(rest))
			ops = append(ops, rest[:n]...)
			return append(append(flags, "--"), ops...), rest[n:]
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := strings.TrimPrefix(a[1:], "-")
			if f := fs.Lookup(name); f != nil && !isBool(f) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		ops = append(ops, a)
	}
	return append(flags, ops...), nil
}

func cmdProfile(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("profile", stderr)
	strategy := fs.String("strategy", string(profile.SBL), "profiling strategy: sbl, pbl or p3")
	copies := fs.Int("copies", 0, "number of copies `K` for pbl and p3 (default 4)")
	jobs := fs.Int("jobs", 0, "compile and run at most `N` copies at once (default: as many as there are cores; with --runs, N runs at once, default 1)")
	weights := fs.String("weights", "", "place the probes (and plan pbl and p3) by the edge frequencies of an earlier `PROFILE` of this module: fewer probe hits where it ran most")
	out := fs.String("o", "pathprof.json", "write the profile to `FILE`")
	quiet := fs.Bool("q", false, "no progress lines on stderr")
	top := fs.Int("top", 0, "after the run, print the report with the `N` hottest paths to stderr")
	counterModule := fs.Bool("counter-module", false, "keep the counters in a counter module the copies call, not in the program's memory above what it sees (an access beyond the program's memory then traps as in the original)")
	timeout := fs.Duration("timeout", 0, "stop the run after `D` (such as 90s or 10m) and write the profile as it stands, marked interrupted; exit 124")
	every := fs.Duration("snapshot-every", 0, "every `D` (at least 1s) while the program runs, write the profile as it stands, marked as a snapshot, so that a crash or a kill loses at most D of the run")
	markers := fs.String("region", "", "count only the paths that end between calls of the imports `MODULE.START,MODULE.END` (stubbed unless WASI's)")
	regionFunc := fs.String("region-func", "", "count only the paths that end while the function `NAME` (or index) is on the stack")
	runsFile := fs.String("runs", "", "profile each run of the runs `FILE` (JSON: per run a label, args, stdin, env, mounts), --jobs at once, into one profile with each path's counts by run; --timeout then applies to each run")
	label := fs.String("label", "", "the run's `LABEL` in the profile (default: the module's name and the arguments)")
	engineName := fs.String("engine", "wazero", "run the copies in `ENGINE`: wazero, or node (on PATH), which compiles a function when it is first called, so that the copies of a big module start at once; node runs WASI commands only, and reads the counts when a copy has finished")
	uncovered := fs.String("uncovered-from", "", "count only what the earlier profile `BASE` of this module did not cover: no probes in functions it covered whole, PSPP on the edges of its uncovered paths elsewhere; the profile lists the paths newly covered")
	defHistory, _ := history.DefaultDir()
	historyDir := fs.String("history", defHistory, "keep every complete profile in `DIR`, and plan pbl and p3 without --weights by the previous profile kept there for the module or an earlier build at its path")
	noHistory := fs.Bool("no-history", false, "neither read previous profiles nor keep this one")
	rf, progArgs, ok := parseWithRun(fs, args, 1)
	if !ok {
		return 2
	}
	engine, err := profiler.ParseEngine(*engineName)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: --engine: %v\n", err)
		return 2
	}
	if engine == profiler.EngineNode && (*runsFile != "" || *every != 0) {
		fmt.Fprintln(stderr, "pathprof: --engine node: not with --runs or --snapshot-every")
		return 2
	}
	if *every != 0 && *every < minSnapshotEvery {
		fmt.Fprintf(stderr, "pathprof: --snapshot-every %v: at least %v\n", *every, minSnapshotEvery)
		return 2
	}
	path := fs.Arg(0)
	var store *history.Store
	if !*noHistory && *historyDir != "" {
		store = &history.Store{Dir: *historyDir}
	}
	if *runsFile != "" {
		return profileRuns(runsFlags{runs: *runsFile, module: path, out: *out, strategy: *strategy, copies: *copies, jobs: *jobs,
			weights: *weights, quiet: *quiet, top: *top, counterModule: *counterModule, timeout: *timeout, every: *every, label: *label,
			markers: *markers, regionFunc: *regionFunc, uncovered: *uncovered, rf: rf, progArgs: progArgs, history: store}, stdout, stderr)
	}
	// From here to the program's start pathprof only prepares, which a
	// stop abandons at once.
	interrupt, stop, started := interrupts(*timeout, stderr)
	defer stop()
	orig, cfg, code := rf.load(path, *out, progArgs, stdout, stderr)
	if code != 0 {
		return code
	}
	cfg.Started = started
	region, err := regionOf(orig, *markers, *regionFunc)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	var progress io.Writer = stderr
	if *quiet {
		progress = nil
	}
	rf.noteInput(progress)
	st, k, code := strategyCopies(*strategy, *copies, stderr)
	if code != 0 {
		return code
	}
	popt, wsrc, err := planOptions(orig, *weights)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	base, err := uncoveredBase(*uncovered, orig, st)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	p, runErr := profiler.Profile(context.Background(), orig, profiler.Options{
		Label:         *label,
		Partition:     popt,
		Weights:       wsrc,
		History:       store,
		Strategy:      st,
		Copies:        k,
		Jobs:          *jobs,
		ModulePath:    path,
		Run:           cfg,
		Progress:      progress,
		Instrument:    instrument.Options{SeparateCounters: *counterModule},
		Interrupt:     interrupt,
		SnapshotEvery: *every,
		Region:        region,
		Engine:        engine,
		UncoveredFrom: base,
		UncoveredName: *uncovered,
		Snapshot: func(p *profile.Profile) error {
			if err := profile.WriteFile(*out, p); err != nil {
				return err
			}
			if progress != nil {
				fmt.Fprintf(progress, "pathprof: snapshot after %.0fs: wrote %s (%d paths executed in %d functions)\n", p.Interrupted.Seconds, *out, countPaths(p), countFuncs(p))
			}
			return nil
		},
	})
	if p == nil {
		fmt.Fprintf(stderr, "pathprof: %s: %v\n", path, runErr)
		return 1
	}
	if err := profile.WriteFile(*out, p); err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	printInvoked(stdout, p)
	if g := p.Region; g != nil && g.Opened == 0 {
		what := g.Func + " was never called"
		if g.Func == "" {
			what = g.Start + " was never called"
		}
		fmt.Fprintf(stderr, "pathprof: warning: the region never opened (%s): %s counts no paths\n", what, *out)
	}
	noteNewPaths(stderr, p)
	if in := p.Interrupted; in != nil {
		fmt.Fprintf(stderr, "pathprof: %v\npathprof: wrote %s (marked interrupted): %d paths executed in %d functions\n", runErr, *out, countPaths(p), countFuncs(p))
		return interruptedCode(in)
	}
	if runErr != nil {
		return incomplete(stderr, runErr, *out, p.ExitCode)
	}
	if progress != nil {
		fmt.Fprintf(progress, "pathprof: wrote %s: %d paths executed in %d functions, probe hits per copy:", *out, countPaths(p), countFuncs(p))
		for _, r := range p.Runs {
			fmt.Fprintf(progress, " %d", r.ProbeHits)
		}
		fmt.Fprintln(progress)
	}
	if *top > 0 {
		r, err := report.Build(p, report.Options{Top: *top, Module: orig, ModulePath: path})
		if err == nil {
			err = r.WriteText(stderr)
		}
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: report: %v\n", err)
			return 1
		}
	}
	return int(p.ExitCode)
}

// strategyCopies checks the strategy and copies flags and returns the
// strategy and k, or the exit code 2 having said why not.
func strategyCopies(strategy string, copies int, stderr io.Writer) (profile.Strategy, int, int) {
	st, err := profile.ParseStrategy(strategy)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return "", 0, 2
	}
	k := copies
	switch st {
	case profile.SBL:
		if k > 1 {
			fmt.Fprintln(stderr, "pathprof: sbl runs one copy; use --strategy pbl or p3 for more")
			return "", 0, 2
		}
		k = 1
	default:
		if k == 0 {
			k = 4
		}
		if k < 1 {
			fmt.Fprintln(stderr, "pathprof: --copies must be at least 1")
			return "", 0, 2
		}
	}
	return st, k, 0
}

// minSnapshotEvery is the shortest --snapshot-every: each snapshot's
// garbage stays in memory until the run ends (profiler.keepHeadroom).
const minSnapshotEvery = time.Second

// printInvoked prints what each --invoke call returned, one line each,
// after the program's own output.
func printInvoked(stdout io.Writer, p *profile.Profile) {
	for _, in := range p.Inputs {
		printCalls(stdout, in.Invoked)
	}
}

func printCalls(stdout io.Writer, calls []profile.Invocation) {
	for _, c := range calls {
		if len(c.Results) == 0 {
			fmt.Fprintf(stdout, "%s\n", c.Call)
			continue
		}
		fmt.Fprintf(stdout, "%s = %s\n", c.Call, strings.Join(c.Results, ", "))
	}
}

// regionOf is the region of --region or --region-func, nil for neither.
func regionOf(orig []byte, markers, fn string) (*profiler.Region, error) {
	switch {
	case markers != "" && fn != "":
		return nil, errors.New("--region and --region-func cannot be given together")
	case markers != "":
		return profiler.ParseMarkers(markers)
	case fn != "":
		return profiler.FuncRegion(orig, fn)
	}
	return nil, nil
}

// reasonTimeout is the reason of an interruption at --timeout.
const reasonTimeout = "timeout"

// interruptedCode is the exit code of a run interrupted by in: 124 at
// the timeout, 130 at a signal.
func interruptedCode(in *profile.Interruption) int {
	if in.Reason == reasonTimeout {
		return 124
	}
	return 130
}

// interrupts returns the channel that tells a run to stop, the function
// that stops listening, and started, which the run calls when a program
// starts (runner.Config.Started): listen's, with the timeout, if not 0,
// counted from now.
func interrupts(timeout time.Duration, stderr io.Writer) (<-chan string, func(), func()) {
	s := listen(stderr)
	s.after(timeout)
	return s.c, s.close, s.started
}

// stopper stops a command at SIGINT, SIGTERM or its timeout. Until a
// program starts (started) pathprof only prepares (reads, analyses,
// plans, instruments, compiles): the first signal, or the timeout, ends
// it at once, with 130 (124 at the timeout), removing what it was
// writing and writing nothing more. Once a program runs, the first sends
// its reason on c, and a second signal exits at once, with 130, writing
// nothing more and removing what it was writing.
type stopper struct {
	c       chan string
	running atomic.Bool
	stderr  io.Writer
	sigs    chan os.Signal
	timer   atomic.Pointer[time.Timer]
	closed  sync.Once
}

// listen makes a stopper listening for the signals.
func listen(stderr io.Writer) *stopper {
	s := &stopper{c: make(chan string, 1), stderr: stderr, sigs: make(chan os.Signal, 2)}
	signal.Notify(s.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for sig := range s.sigs {
			name := signalName(sig)
			if !s.send(name) {
				fmt.Fprintf(stderr, "pathprof: %s again: exiting at once\n", name)
				// The profile being written is a temporary file
				// until it is renamed: it goes too.
				tempfiles.Exit(130)
			}
			fmt.Fprintf(stderr, "pathprof: %s: writing the profile as it stands (again to exit at once)\n", name)
		}
	}()
	return s
}

// signalName names SIGINT or SIGTERM.
func signalName(sig os.Signal) string {
	if sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

func (s *stopper) send(reason string) bool {
	if !s.running.Load() {
		abandon(reason, s.stderr)
	}
	select {
	case s.c <- reason:
		return true
	default:
		return false
	}
}

// after stops the command once d (if not 0) has passed from now.
func (s *stopper) after(d time.Duration) {
	if d > 0 {
		s.timer.Store(time.AfterFunc(d, func() { s.send(reasonTimeout) }))
	}
}

// started says that a program runs.
func (s *stopper) started() { s.running.Store(true) }

// close stops listening.
func (s *stopper) close() {
	s.closed.Do(func() {
		signal.Stop(s.sigs)
		close(s.sigs)
		if t := s.timer.Load(); t != nil {
			t.Stop()
		}
	})
}

// abandon ends pathprof, stopped by reason before any program ran: what
// it was writing is removed (tempfiles.Exit), and nothing else is written.
func abandon(reason string, stderr io.Writer) {
	fmt.Fprintf(stderr, "pathprof: %s before the program started: stopped, nothing written\n", reason)
	code := 130
	if reason == reasonTimeout {
		code = 124
	}
	tempfiles.Exit(code)
}

func countPaths(p *profile.Profile) int {
	n := 0
	for _, f := range p.Functions {
		n += len(f.Paths)
	}
	return n
}

func countFuncs(p *profile.Profile) int {
	n := 0
	for _, f := range p.Functions {
		if len(f.Paths) > 0 {
			n++
		}
	}
	return n
}

// incomplete says that the run failed and its output file out was written
// marked incomplete, and returns pathprof's exit code: the program's own,
// or 1 where it did not run (a missing import) or exited 0.
func incomplete(stderr io.Writer, runErr error, out string, exitCode uint32) int {
	fmt.Fprintf(stderr, "pathprof: %v\npathprof: wrote %s (marked incomplete)\n", runErr, out)
	var ie *runner.ImportError
	if errors.As(runErr, &ie) || exitCode == 0 {
		return 1
	}
	return int(exitCode)
}
