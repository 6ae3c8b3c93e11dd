package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/pathprof/pathprof/internal/atomicfile"
	"github.com/pathprof/pathprof/internal/osp"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/tempfiles"
	"github.com/pathprof/pathprof/profile"
)

// ospFlags are the sampling flags of osp and osp-score.
type ospFlags struct {
	memory  byteSize
	lengths string
	skip    float64
	seed    uint64
	compact bool
	concise bool
}

func (o *ospFlags) register(fs *flag.FlagSet) {
	o.memory = osp.DefaultMemory
	fs.Var(&o.memory, "memory", "bound the hot list to `BYTES` (a K or M suffix multiplies by 1024 or 1024²)")
	fs.StringVar(&o.lengths, "lengths", "2,4,8,16,32,64", "subpath `LENGTHS` in blocks, comma-separated (each sample records the longest)")
	fs.Float64Var(&o.skip, "skip", osp.DefaultMeanSkip, "mean number of block entries `N` between samples")
	fs.Uint64Var(&o.seed, "seed", 0, "seed `N` of the skips and hot-list coin flips")
	fs.BoolVar(&o.compact, "compact", true, "code subpaths by the module's block model, in a third of the bytes (--compact=false: as differences of block ids)")
	fs.BoolVar(&o.concise, "concise", false, "keep concise samples instead of counting samples: a hot subpath's elements counted one in τ")
}

// parse parses a sampling command's arguments (see parseWithRun) and
// turns its sampling flags into options; ok is false when either failed,
// after saying why.
func (o *ospFlags) parse(fs *flag.FlagSet, args []string, operands int, stderr io.Writer) (*runFlags, []string, osp.Options, bool) {
	rf, progArgs, ok := parseWithRun(fs, args, operands)
	if !ok {
		return nil, nil, osp.Options{}, false
	}
	opt, err := o.options()
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return nil, nil, osp.Options{}, false
	}
	return rf, progArgs, opt, true
}

func (o *ospFlags) options() (osp.Options, error) {
	opt := osp.Options{Memory: int(o.memory), MeanSkip: o.skip, Seed: o.seed, Plain: !o.compact, Concise: o.concise}
	for _, f := range strings.Split(o.lengths, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return opt, fmt.Errorf("--lengths %q: %v", o.lengths, err)
		}
		opt.Lengths = append(opt.Lengths, n)
	}
	if o.memory <= 0 {
		return opt, fmt.Errorf("--memory must be positive")
	}
	if !(o.skip >= 1) {
		return opt, fmt.Errorf("--skip %v: want at least 1", o.skip)
	}
	return opt, opt.Check()
}

// byteSize is a flag value in bytes with an optional K or M suffix.
type byteSize int

func (b *byteSize) String() string { return strconv.Itoa(int(*b)) }

func (b *byteSize) Set(s string) error {
	mult := 1
	switch {
	case strings.HasSuffix(s, "K") || strings.HasSuffix(s, "k"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M") || strings.HasSuffix(s, "m"):
		mult, s = 1<<20, s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > (1<<31)/mult {
		return fmt.Errorf("want a positive number of bytes")
	}
	*b = byteSize(n * mult)
	return nil
}

// cmdOSP samples hot subpaths of a run (online subpath profiling) and
// writes the profile; with --show it prints a written profile's report.
func cmdOSP(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("osp", stderr)
	var of ospFlags
	of.register(fs)
	out := fs.String("o", "pathprof-osp.json", "write the profile to `FILE`")
	top := fs.Int("top", 0, "after the run, print the `N` hottest subpaths of each length to stderr (with --show: to stdout, default 5)")
	quiet := fs.Bool("q", false, "no progress lines on stderr")
	show := fs.String("show", "", "print the report of the OSP profile `PROFILE` instead of running anything")
	modFlag := fs.String("module", "", "with --show: the profiled module `FILE` (default: the one the profile names)")
	rf, progArgs, opt, ok := of.parse(fs, args, -1, stderr)
	if !ok {
		return 2
	}
	if *show != "" {
		if fs.NArg() != 0 {
			fs.Usage()
			return 2
		}
		n := *top
		if n == 0 {
			n = 5
		}
		return showOSP(*show, *modFlag, n, stdout, stderr)
	}
	if !hasOperands(fs, 1) {
		return 2
	}
	path := fs.Arg(0)
	// A stop before the program starts abandons the command; after, it
	// ends the sampling, and the samples so far are written.
	stops := listen(stderr)
	defer stops.close()
	orig, cfg, code := rf.load(path, *out, progArgs, stdout, stderr)
	if code != 0 {
		return code
	}
	cfg.Started = func() {
		stops.started()
		if !*quiet {
			fmt.Fprintf(stderr, "pathprof: sampling a run of %s\n", path)
		}
	}
	opt.Stop = stops.c
	if !*quiet {
		rf.noteInput(stderr)
	}
	prof, res, runErr := osp.Run(context.Background(), orig, opt, cfg)
	if prof == nil {
		fmt.Fprintf(stderr, "pathprof: %s: %v\n", path, runErr)
		return 1
	}
	prof.Module.Path = path
	if err := osp.WriteFile(*out, prof); err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	if in := (*osp.Interrupted)(nil); errors.As(runErr, &in) {
		fmt.Fprintf(stderr, "pathprof: %v\npathprof: wrote %s (marked incomplete): %d samples\n", runErr, *out, prof.Sampling.Samples)
		return 130
	}
	for _, r := range res.Returned {
		printCalls(stdout, []profile.Invocation{{Call: r.Call.String(), Results: r.Results}})
	}
	if runErr != nil {
		return incomplete(stderr, runErr, *out, res.ExitCode)
	}
	if !*quiet {
		fmt.Fprintf(stderr, "pathprof: wrote %s: %d samples in %d block entries, %d subpaths kept in a %d-byte hot list (bound %d)\n",
			*out, prof.Sampling.Samples, prof.Run.BlockEntries, prof.Memory.Pairs, prof.Memory.HotListBytes, prof.Memory.Bound)
	}
	if *top > 0 {
		loc, err := osp.NewLocator(prof, orig)
		if err == nil {
			err = osp.WriteReport(stderr, prof, loc, *top)
		}
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: report: %v\n", err)
			return 1
		}
	}
	return int(res.ExitCode)
}

// showOSP prints the report of a written OSP profile.
func showOSP(path, modPath string, top int, stdout, stderr io.Writer) int {
	prof, err := osp.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	var loc *osp.Locator
	module, name, warn, err := findModule(prof.Module.Path, prof.Module.SHA256, path, modPath)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	if module != nil {
		if loc, err = osp.NewLocator(prof, module); err != nil {
			fmt.Fprintf(stderr, "pathprof: %s: %v\n", name, err)
			return 1
		}
	} else {
		fmt.Fprintf(stderr, "pathprof: warning: %s; blocks are shown as file offsets (--module FILE gives the module)\n", warn)
	}
	if err := osp.WriteReport(stdout, prof, loc, top); err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	return 0
}

// cmdOSPScore runs a program twice, once sampling and once counting every
// subpath of the sampled lengths exactly, and prints how well the samples
// found the truly hottest subpaths.
func cmdOSPScore(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("osp-score", stderr)
	var of ospFlags
	of.register(fs)
	profPath := fs.String("profile", "", "score the OSP profile `FILE` (of this module and input) instead of sampling")
	out := fs.String("o", "", "also write the score as JSON to `FILE`")
	top := fs.Int("top", 0, "list the true `N` hottest subpaths of each length with their estimates")
	unbounded := fs.Bool("unbounded", false, "also score the samples counted with no memory bound, the hot list's windows and every window of each sample: what more memory or more windows could find")
	rf, progArgs, opt, ok := of.parse(fs, args, 1, stderr)
	if !ok {
		return 2
	}
	if *unbounded && *profPath != "" {
		fmt.Fprintln(stderr, "pathprof: --unbounded counts the samples of a sampling run: it cannot score a --profile")
		return 2
	}
	path := fs.Arg(0)
	if *out != "" && !checkOutput(*out, stderr) {
		return 1
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	startHeap(len(orig))
	ins, err := osp.Instrument(orig)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %s: %v\n", path, err)
		return 1
	}
	// Its score needs both runs whole: a stop ends it at once.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer func() {
		// Closed once no signal can come, which ends the goroutine.
		signal.Stop(sigs)
		close(sigs)
	}()
	go func() {
		if sig, ok := <-sigs; ok {
			fmt.Fprintf(stderr, "pathprof: %s: stopped, nothing written\n", signalName(sig))
			tempfiles.Exit(130)
		}
	}()
	ctx := context.Background()

	// Each run gets its own configuration (stdin read afresh); the
	// program's output is kept to check that the runs behaved alike.
	type output struct {
		stdout, stderr bytes.Buffer
		code           uint32
	}
	config := func(o *output) (runner.Config, error) { return rf.config(path, progArgs, &o.stdout, &o.stderr) }
	compileCfg, err := config(&output{})
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 2
	}
	rf.noteInput(stderr)
	so := osp.ScoreOptions{Sampling: opt, Unbounded: *unbounded}
	var sample *osp.Program
	if *profPath != "" {
		if so.Profile, err = osp.ReadFile(*profPath); err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		if so.Profile.Module.SHA256 != ins.SHA256 {
			fmt.Fprintf(stderr, "pathprof: %s is not a profile of %s (sha256 %s, the module's %s)\n", *profPath, path, so.Profile.Module.SHA256, ins.SHA256)
			return 1
		}
	} else {
		if sample, err = osp.Compile(ctx, ins, osp.ModeSample, compileCfg); err != nil {
			fmt.Fprintf(stderr, "pathprof: %s: %v\n", path, err)
			return 1
		}
		defer sample.Close(context.WithoutCancel(ctx))
	}
	trace, err := osp.Compile(ctx, ins, osp.ModeTrace, compileCfg)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %s: %v\n", path, err)
		return 1
	}
	defer trace.Close(context.WithoutCancel(ctx))
	var first *output
	so.Run = func(what string, run func(runner.Config) (runner.Result, error)) error {
		o := &output{}
		cfg, err := config(o)
		if err != nil {
			return err
		}
		res, err := run(cfg)
		if err != nil {
			return fmt.Errorf("%s: %v", what, err)
		}
		o.code = res.ExitCode
		if first == nil {
			first = o
		} else if first.stdout.String() != o.stdout.String() || first.stderr.String() != o.stderr.String() || first.code != o.code {
			return errors.New("the sampled and the traced run printed or exited differently: the runs are not comparable")
		}
		return nil
	}
	rs, err := osp.ScoreRun(ctx, sample, trace, so)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	prof, ex, score := rs.Profile, rs.Exact, rs.Score
	if *profPath == "" {
		prof.Module.Path = path
	}
	fmt.Fprintf(stdout, "%s: %d block entries; %d samples (mean skip %g, seed %d); hot list %d bytes (bound %d), %d subpaths\n",
		path, ex.Blocks, prof.Sampling.Samples, prof.Sampling.MeanSkip, prof.Sampling.Seed, prof.Memory.HotListBytes, prof.Memory.Bound, prof.Memory.Pairs)
	if err := score.WriteText(stdout); err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	for _, u := range rs.Unbounded {
		what := "the hot list's windows"
		if u.Every {
			what = "every window of each sample"
		}
		fmt.Fprintf(stdout, "\nThe same samples counted with no bound, %s:\n", what)
		if err := u.Score.WriteText(stdout); err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
	}
	if *top > 0 {
		for _, r := range score.Lengths {
			a := r.At[len(r.At)-1]
			fmt.Fprintf(stdout, "\nlength %d, true top %d:\n", r.Length, min(*top, len(a.Top)))
			for i, s := range a.Top[:min(*top, len(a.Top))] {
				rank := "not sampled"
				if s.Rank > 0 {
					rank = fmt.Sprintf("rank %d", s.Rank)
				}
				fmt.Fprintf(stdout, "  #%d  exact %d  estimate %.0f  (%s)\n", i+1, s.Exact, s.Estimate, rank)
			}
		}
	}
	if *out != "" {
		b, err := json.MarshalIndent(struct {
			Module       string               `json:"module"`
			BlockEntries uint64               `json:"block_entries"`
			Sampling     osp.Sampling         `json:"sampling"`
			Memory       osp.Memory           `json:"memory"`
			Score        *osp.Score           `json:"score"`
			Unbounded    []osp.UnboundedScore `json:"unbounded,omitempty"`
		}{path, ex.Blocks, prof.Sampling, prof.Memory, score, rs.Unbounded}, "", " ")
		if err == nil {
			err = atomicfile.WriteFile(*out, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
	}
	return 0
}
