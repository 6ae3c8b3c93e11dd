package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pathprof/pathprof/internal/bench"
)

func cmdBench(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench", stderr)
	quick := fs.Bool("quick", false, fmt.Sprintf("only the quick subset, %d runs each unless --runs says otherwise", bench.QuickRuns))
	suiteDir := fs.String("suite", bench.DefaultDir(), "suite `DIR` (holding suite.json); prepared on first use")
	out := fs.String("o", "bench-out", "write results.md and results.json into `DIR`")
	runs := fs.Int("runs", 0, fmt.Sprintf("timed runs of each build per program (default %d)", bench.DefaultRuns))
	prepare := fs.Bool("prepare", false, "prepare (or refresh) the suite and exit: copy the C programs and kernels, build the Go programs and the Debian C programs")
	noDebian := fs.Bool("no-debian", false, "prepare without building the Debian programs (which need apt-get source and clang-14); the first --quick run never builds them")
	big := fs.Bool("big", false, "with --prepare: also fetch the big prebuilt programs (yosys, clang: tens of megabytes each) with npm and, unless --no-debian, build the big Debian program (glslang); otherwise: also run them")
	src := fs.String("src", "", "the pathprof source tree for --prepare (default: found from the current directory)")
	var only multiFlag
	fs.Var(&only, "only", "run only the program `NAME` (repeatable)")
	cache := fs.String("cache", defaultCache(), "compilation cache `DIR` (\"\" for none)")
	quiet := fs.Bool("q", false, "no progress lines on stderr")
	from := fs.String("from", "", "run nothing: write results.md, results.json and the chart into -o DIR from an earlier run's results.json `FILE`")
	strategies := fs.Bool("strategies", false, "also measure PBL and P3 at k = 2, 4, 8: hit shares, profile equality, slowest copy's time")
	hitsOnly := fs.Bool("hits-only", false, "with --strategies: only plan the copies and compute their hits from SBL's profile; do not time them, nor run them unless they share out calls or loops")
	prefixPlans := fs.Bool("prefix-plans", false, "with --strategies: also plan PBL and P3 by the profile of the run's first tenth (a snapshot of an SBL run at a tenth of its time) and report those plans' hit shares")
	ospMode := fs.Bool("osp", false, "measure OSP instead: overhead of sampling, and accuracy against every subpath counted exactly")
	var of ospFlags
	of.register(fs)
	sweep := fs.String("sweep", "", "with --osp: other `BYTES` bounds, comma-separated, at which each program is sampled again (untimed) and scored")
	set := map[string]bool{}
	if err := fs.Parse(interleaved(fs, args)); err != nil {
		return 2
	}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if fs.NArg() != 0 || *runs < 0 || (*hitsOnly || *prefixPlans) && !*strategies || *ospMode && *strategies {
		fs.Usage()
		return 2
	}
	if !*ospMode {
		for _, name := range []string{"memory", "lengths", "skip", "seed", "compact", "concise", "sweep"} {
			if set[name] {
				fmt.Fprintf(stderr, "pathprof: --%s goes with --osp\n", name)
				return 2
			}
		}
	}
	if *from != "" {
		// The report format or the chart may change after a long run;
		// its raw results are enough to write them again.
		if err := rewrite(*from, *out, stdout); err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		return 0
	}
	var progress io.Writer = stderr
	if *quiet {
		progress = nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	popt := bench.PrepareOptions{Source: *src, Progress: progress, Debian: !*noDebian, Big: *big && *prepare}
	if *prepare {
		if _, err := bench.Prepare(*suiteDir, popt); err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		return 0
	}
	var s *bench.Suite
	var err error
	if _, serr := os.Stat(filepath.Join(*suiteDir, bench.ManifestName)); errors.Is(serr, os.ErrNotExist) {
		if progress != nil {
			fmt.Fprintf(progress, "bench: no suite in %s yet: preparing it\n", *suiteDir)
		}
		// The quick subset has no Debian programs, so it must not need
		// what building them needs (root or clang-14, APT's sources).
		popt.Debian = popt.Debian && !*quick
		s, err = bench.Prepare(*suiteDir, popt)
		// What did build is measured; what did not is said.
		if partial := (*bench.PartialError)(nil); errors.As(err, &partial) {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			err = nil
		}
	} else {
		s, err = bench.Load(*suiteDir)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}

	if !*quick && len(only) == 0 && progress != nil && !hasOrigin(s, bench.OriginDebian) {
		fmt.Fprintf(progress, "bench: the suite has no Debian programs: pathprof bench --prepare builds them\n")
	}
	if *ospMode {
		return benchOSP(ctx, s, &of, *sweep, bench.OSPOptions{Runs: *runs, Quick: *quick, Only: only, CacheDir: *cache, Progress: progress},
			args, *out, stdout, stderr)
	}
	sts := []bench.Variant{bench.SBL}
	if *strategies {
		sts = append(sts, bench.Partitioned...)
	}
	rep, err := bench.Run(ctx, s, bench.Options{
		Strategies:  sts,
		HitsOnly:    *hitsOnly,
		PrefixPlans: *prefixPlans,
		Runs:        *runs,
		Quick:       *quick,
		Only:        only,
		Big:         *big,
		CacheDir:    *cache,
		Progress:    progress,
	})
	if rep == nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	return finishBench(rep, err, args, *out, progress, stdout, stderr)
}

// benchReport is either kind of benchmark report.
type benchReport interface {
	Info() *bench.RunInfo
	Failures() (failed, programs int)
	WriteFiles(dir string) error
	WriteMarkdown(w io.Writer) error
}

// finishBench writes rep into the directory out and prints its tables,
// unless err says the run was cut short; it returns the exit code.
func finishBench(rep benchReport, err error, args []string, out string, progress, stdout, stderr io.Writer) int {
	rep.Info().Command = strings.TrimSpace("pathprof bench " + strings.Join(args, " "))
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	if err := rep.WriteFiles(out); err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	if err := rep.WriteMarkdown(stdout); err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	if progress != nil {
		fmt.Fprintf(progress, "bench: wrote %s and %s\n", filepath.Join(out, bench.MarkdownName), filepath.Join(out, bench.JSONName))
	}
	if failed, n := rep.Failures(); failed > 0 {
		fmt.Fprintf(stderr, "pathprof: %d of %d programs FAILED (see the table)\n", failed, n)
		return 1
	}
	return 0
}

func hasOrigin(s *bench.Suite, origin string) bool {
	for _, p := range s.Programs {
		if p.Origin == origin {
			return true
		}
	}
	return false
}

// rewrite writes results.md (and the chart, if any) again into dir from
// an earlier run's results.json, and prints the table.
func rewrite(from, dir string, stdout io.Writer) error {
	kind, err := bench.ReportKind(from)
	if err != nil {
		return err
	}
	var rep benchReport
	if kind == bench.KindOSP {
		rep, err = bench.ReadOSPReport(from)
	} else {
		rep, err = bench.ReadReport(from)
	}
	if err != nil {
		return err
	}
	if err := rep.WriteFiles(dir); err != nil {
		return err
	}
	return rep.WriteMarkdown(stdout)
}

// benchOSP runs pathprof bench --osp.
func benchOSP(ctx context.Context, s *bench.Suite, of *ospFlags, sweep string, opt bench.OSPOptions, args []string, out string, stdout, stderr io.Writer) int {
	var err error
	if opt.Sampling, err = of.options(); err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 2
	}
	for _, f := range strings.Split(sweep, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		var m byteSize
		if err := m.Set(f); err != nil {
			fmt.Fprintf(stderr, "pathprof: --sweep %q: %v\n", f, err)
			return 2
		}
		opt.Sweep = append(opt.Sweep, int(m))
	}
	rep, err := bench.RunOSP(ctx, s, opt)
	if rep == nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	return finishBench(rep, err, args, out, opt.Progress, stdout, stderr)
}
