package main

// This file is "pathprof test": a test binary's tests, each profiled as a
// run of its own and merged with each path's counts by test.

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pathprof/pathprof/internal/gobuild"
	"github.com/pathprof/pathprof/internal/history"
	"github.com/pathprof/pathprof/internal/runs"
	"github.com/pathprof/pathprof/internal/tempfiles"
	"github.com/pathprof/pathprof/internal/testbin"
	"github.com/pathprof/pathprof/profile"
)

func cmdTest(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("test", stderr)
	strategy := fs.String("strategy", string(profile.SBL), "profiling strategy: sbl, pbl or p3")
	copies := fs.Int("copies", 0, "number of copies `K` for pbl and p3 (default 4)")
	jobs := fs.Int("jobs", 1, "profile `N` tests at once")
	weights := fs.String("weights", "", "place the probes by the edge frequencies of an earlier `PROFILE` of this module")
	out := fs.String("o", "pathprof.json", "write the profile to `FILE`")
	quiet := fs.Bool("q", false, "no progress lines on stderr, but for tests that fail")
	top := fs.Int("top", 0, "after the runs, print the report with the `N` hottest paths to stderr")
	counterModule := fs.Bool("counter-module", false, "keep the counters in a counter module the copies call")
	timeout := fs.Duration("timeout", 0, "stop a test after `D` (such as 90s) and keep its counts as they stand, marked interrupted")
	proto := fs.String("protocol", "", "the binary's test protocol, `go|rust|gtest` (default: told from the module)")
	only := fs.String("run", "", "profile only the tests whose names match the regular expression `REGEXP`")
	uncovered := fs.String("uncovered-from", "", "count only what the earlier profile `BASE` of this binary did not cover (see profile)")
	binary := fs.String("binary", "", "with a Go package, write its test binary to `FILE` (default PKG.test.wasm beside the profile)")
	defHistory, _ := history.DefaultDir()
	historyDir := fs.String("history", defHistory, "keep every complete profile in `DIR`, and plan pbl and p3 without --weights by the previous profile kept there for the binary (see profile)")
	noHistory := fs.Bool("no-history", false, "neither read previous profiles nor keep this one")
	rf, progArgs, ok := parseWithRun(fs, args, 1)
	if !ok {
		return 2
	}
	// Building the package and listing its tests only prepare: a stop
	// abandons them at once, writing nothing (the runs listen anew).
	prep := listen(stderr)
	defer prep.close()
	if len(rf.invoke) > 0 {
		fmt.Fprintln(stderr, "pathprof: test runs a binary's tests through its _start: --invoke does not go with it")
		return 2
	}
	var match *regexp.Regexp
	if *only != "" {
		var err error
		if match, err = regexp.Compile(*only); err != nil {
			fmt.Fprintf(stderr, "pathprof: --run: %v\n", err)
			return 2
		}
	}
	st, k, code := strategyCopies(*strategy, *copies, stderr)
	if code != 0 {
		return code
	}
	if !checkOutput(*out, stderr) {
		return 1
	}
	f := runsFlags{module: fs.Arg(0), out: *out, strategy: *strategy, copies: *copies, jobs: *jobs, weights: *weights,
		quiet: *quiet, top: *top, counterModule: *counterModule, timeout: *timeout, uncovered: *uncovered, rf: rf}
	if !*noHistory && *historyDir != "" {
		f.history = &history.Store{Dir: *historyDir}
	}
	// Every test's input: the flags' environment and mounts, and with a
	// Go package what its tests expect of go test.
	base := runs.Spec{Env: []string(rf.env), Stdin: rf.stdin}
	for _, e := range base.Env {
		if !strings.Contains(e, "=") {
			fmt.Fprintf(stderr, "pathprof: --env %q: want K=V\n", e)
			return 2
		}
	}
	dirs, err := rf.mounts()
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 2
	}
	for _, d := range dirs {
		base.Mounts = append(base.Mounts, runs.Mount{Host: d.HostDir, Guest: d.GuestPath, ReadOnly: d.ReadOnly})
	}
	freshTmp := false
	if fi, err := os.Stat(f.module); err != nil || fi.IsDir() {
		// Not a module file: a Go package, built here as go test does.
		bin, dir, err := buildGoTest(f.module, *binary, *out, f.quiet, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		f.module = bin
		base.Env = append(append([]string{}, base.Env...), "PWD="+dir)
		base.Mounts = append(base.Mounts, runs.Mount{Host: dir, Guest: dir, ReadOnly: true})
		freshTmp = true
		if *proto == "" {
			*proto = string(testbin.Go)
		}
	} else if *binary != "" {
		fmt.Fprintln(stderr, "pathprof: --binary is for a Go package, which pathprof builds")
		return 2
	}
	orig, err := os.ReadFile(f.module)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	startHeap(len(orig))
	var p testbin.Protocol
	if *proto != "" {
		p, err = testbin.ParseProtocol(*proto)
	} else {
		p, err = testbin.Detect(orig)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %s: %v\n", f.module, err)
		return 1
	}
	tmps := &tempDirs{}
	defer tmps.remove()
	spec := func(label string, args []string) (runs.Spec, error) {
		s := base
		s.Label, s.Args = label, args
		if freshTmp {
			dir, err := tmps.make()
			if err != nil {
				return s, err
			}
			s.Mounts = append(append([]runs.Mount{}, s.Mounts...), runs.Mount{Host: dir, Guest: "/tmp", Fresh: true})
		}
		return s, nil
	}
	cfg, err := rf.program(f.module)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 2
	}
	ls, err := spec("list", progArgs)
	if err == nil {
		cfg, err = ls.Config(cfg)
	}
	var tests []string
	if err == nil {
		if !f.quiet {
			fmt.Fprintf(stderr, "pathprof: listing the tests of %s (%s)\n", f.module, p)
		}
		tests, err = testbin.List(context.Background(), orig, p, cfg)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %s: %v\n", f.module, err)
		return 1
	}
	var specs []runs.Spec
	for _, t := range tests {
		if match != nil && !match.MatchString(t) {
			continue
		}
		s, err := spec(t, append(append([]string{}, progArgs...), testbin.RunArgs(p, t)...))
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		specs = append(specs, s)
	}
	if len(specs) == 0 {
		what := "lists no tests"
		if match != nil {
			what = fmt.Sprintf("lists %d tests, none matching --run %s", len(tests), *only)
		}
		fmt.Fprintf(stderr, "pathprof: %s %s\n", f.module, what)
		return 1
	}
	prep.close()
	return profileSpecs(f, st, k, orig, specs, stderr)
}

// buildGoTest builds the test binary of the Go package pkg for wasip1 at
// bin (by default PKG.test.wasm in out's directory) and returns it and
// the package's directory.
func buildGoTest(pkg, bin, out string, quiet bool, stderr io.Writer) (string, string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", "", fmt.Errorf("%s is not a module file, and building it as a Go package needs the go command: %v", pkg, err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", "", err
	}
	listed, err := gobuild.Cmd(goTool, wd, "list", "-f", "{{.Dir}}\t{{.Name}}", pkg)
	if err != nil {
		return "", "", fmt.Errorf("%s is neither a module file nor a Go package: %v", pkg, goError(err))
	}
	dir, name, _ := strings.Cut(strings.TrimSpace(string(listed)), "\t")
	if strings.Contains(dir, "\n") {
		return "", "", fmt.Errorf("%s names more than one package: give one", pkg)
	}
	if bin == "" {
		bin = filepath.Join(filepath.Dir(out), name+".test.wasm")
	}
	if !quiet {
		fmt.Fprintf(stderr, "pathprof: building the tests of %s for wasip1 into %s\n", pkg, bin)
	}
	if err := gobuild.Build(goTool, wd, bin, pkg, true); err != nil {
		return "", "", fmt.Errorf("building %s: %v", pkg, goError(err))
	}
	return bin, dir, nil
}

// goError is the go command's error err in a line: the first line of
// its standard error, which says what went wrong, else the command.
func goError(err error) string {
	cmd, stderr, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
	if line, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n"); line != "" {
		return line
	}
	return cmd
}

// tempDirs are the fresh directories the tests get as /tmp, removed
// when the runs end.
type tempDirs struct{ dirs []string }

func (t *tempDirs) make() (string, error) {
	dir, err := tempfiles.MkdirTemp("", "pathprof-test-tmp-")
	if err == nil {
		t.dirs = append(t.dirs, dir)
	}
	return dir, err
}

func (t *tempDirs) remove() {
	for _, d := range t.dirs {
		tempfiles.RemoveAll(d)
	}
}
