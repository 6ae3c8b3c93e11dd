package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pathprof/pathprof/internal/atomicfile"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/jshost"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/runs"
	"github.com/pathprof/pathprof/profile"
)

// cmdInstrument writes the copies of a strategy into a directory.
func cmdInstrument(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("instrument", stderr)
	strategy := fs.String("strategy", string(profile.P3), "profiling strategy: sbl, pbl or p3")
	k := fs.Int("copies", 4, "number of copies `K`")
	out := fs.String("o", "", "write the copies, counter modules, manifest and node runner into `DIR`")
	weights := fs.String("weights", "", "place the probes (and plan pbl and p3) by the edge frequencies of an earlier `PROFILE` of this module")
	counterModule := fs.Bool("counter-module", false, "keep the counters in counter modules the copies call, not in the program's memory above what it sees")
	runsFile := fs.String("runs", "", "also write work units, every copy on each run of the runs `FILE`, for exec --unit, submit and collect")
	host := fs.String("host", "wasi", "where the copies run: wasi (pathprof exec, node's WASI) or js (a JavaScript host's own loader, with pathprof.mjs; implies --counter-module)")
	if err := fs.Parse(interleaved(fs, args)); err != nil {
		return 2
	}
	var manHost string
	switch *host {
	case "wasi":
	case "js":
		// The host may grow the memory itself (emscripten's glue does),
		// over counters kept at its top.
		manHost, *counterModule = profiler.HostJS, true
	default:
		fmt.Fprintf(stderr, "pathprof: --host %q: want wasi or js\n", *host)
		return 2
	}
	if fs.NArg() != 1 || *out == "" {
		fs.Usage()
		return 2
	}
	st, err := profile.ParseStrategy(*strategy)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 2
	}
	if st == profile.SBL {
		*k = 1
	}
	if *runsFile != "" && manHost != "" {
		fmt.Fprintln(stderr, "pathprof: --runs writes units that pathprof exec runs: not with --host js")
		return 2
	}
	var specs []runs.Spec
	if *runsFile != "" {
		var err error
		if specs, err = runs.ReadFile(*runsFile); err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
	}
	path := fs.Arg(0)
	if !checkOutputDir(*out, stderr) {
		return 1
	}
	// No program runs here: a stop abandons the copies at once.
	stops := listen(stderr)
	defer stops.close()
	orig, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	startHeap(len(orig))
	popt, wsrc, err := planOptions(orig, *weights)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	cs, err := profiler.Build(orig, st, *k, instrument.Options{SeparateCounters: *counterModule}, popt)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %s: %v\n", path, err)
		return 1
	}
	man, err := profiler.WriteDir(*out, path, orig, cs, cs.WeightedBy(popt.Weights != nil, wsrc), manHost)
	if err == nil && *runsFile != "" {
		err = writeUnits(*out, specs, man)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %d copies of %s to %s (%s)\n", len(cs.Copy), path, *out, *strategy)
	if cs.FellBack {
		fmt.Fprintln(stdout, "p3's splits would make more probe hits than pbl's on the run of --weights: the copies are pbl's")
	}
	if what := cs.SharedSummary(); what != "" {
		fmt.Fprintf(stdout, "%s are shared out among the copies: run every copy on the same input\n", what)
	}
	if manHost == profiler.HostJS {
		fmt.Fprintf(stdout, "run each in the host, loading COPY.wasm with %s (docs/js-hosts.md)\n", filepath.Join(*out, jshost.FileName))
		fmt.Fprintf(stdout, "then: pathprof merge -o profile.json PARTS...\n")
		return 0
	}
	if *runsFile != "" {
		fmt.Fprintf(stdout, "%d work units (%d copies × %d runs): pathprof exec %s --unit I, or pathprof submit --engine slurm|kubernetes %s\n", len(man.Units), len(cs.Copy), len(man.Runs), *out, *out)
		fmt.Fprintf(stdout, "then: pathprof collect %s\n", *out)
		return 0
	}
	counterArg := "-"
	if *counterModule {
		counterArg = "COUNTERS.wasm"
	}
	fmt.Fprintf(stdout, "run each: pathprof exec %s COPY [-- ARGS...]  or  node %s COPY.wasm %s COUNTS.out [ARGS...]\n", *out, filepath.Join(*out, "run.cjs"), counterArg)
	fmt.Fprintf(stdout, "then: pathprof merge -o profile.json %s\n", filepath.Join(*out, "part-*.json"))
	return 0
}

// planOptions reads the edge frequencies of an earlier profile, if given,
// and says what they are.
func planOptions(orig []byte, weightsPath string) (partition.Options, *profile.Weights, error) {
	if weightsPath == "" {
		return partition.Options{}, nil, nil
	}
	p, err := profile.ReadFile(weightsPath)
	if err != nil {
		return partition.Options{}, nil, err
	}
	res, err := profiler.Analyze(orig)
	if err != nil {
		return partition.Options{}, nil, err
	}
	if p.Module.SHA256 != "" && p.Module.SHA256 != res.SHA256 {
		return partition.Options{}, nil, fmt.Errorf("%s is a profile of another module", weightsPath)
	}
	w, err := res.Result.EdgeFrequencies(p.Functions)
	if err != nil {
		return partition.Options{}, nil, fmt.Errorf("%s: %v", weightsPath, err)
	}
	return partition.Options{Weights: w}, &profile.Weights{Source: profile.WeightsProfile, SHA256: res.SHA256}, nil
}

// cmdExec runs one copy (or converts its counts from a node run) into a part.
func cmdExec(args []string, stdout, stderr io.Writer) int {
	if hasUnit(args) {
		return execUnit(args, stdout, stderr)
	}
	fs := newFlagSet("exec", stderr)
	out := fs.String("o", "", "write the part to `FILE` (default DIR/part-COPY.json)")
	countsFile := fs.String("counts", "", "do not run: read the counter memory a node run wrote to `FILE`")
	exitCode := fs.Int("exit-code", 0, "with --counts: the exit code of the node run")
	outputFile := fs.String("output", "", "with --counts: a `FILE` holding the node run's stdout followed by its stderr, to check the copies agree")
	timeout := fs.Duration("timeout", 0, "stop the run after `D` (such as 90s or 10m) and write the part as it stands, marked interrupted; exit 124")
	quiet := fs.Bool("q", false, "no progress line on stderr")
	unitFlags(fs)
	rf, progArgs, ok := parseWithRun(fs, args, 2)
	if !ok {
		return 2
	}
	// Until the copy runs, exec only prepares, which a stop abandons.
	stops := listen(stderr)
	defer stops.close()
	dir := fs.Arg(0)
	var c int
	if _, err := fmt.Sscan(fs.Arg(1), &c); err != nil {
		fmt.Fprintf(stderr, "pathprof: copy %q is not a number\n", fs.Arg(1))
		return 2
	}
	man, orig, err := profiler.ReadManifest(dir)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	startHeap(len(orig))
	if c < 0 || c >= man.Copies {
		fmt.Fprintf(stderr, "pathprof: copy %d: %s has copies 0 to %d\n", c, dir, man.Copies-1)
		return 2
	}
	if *out == "" {
		*out = filepath.Join(dir, fmt.Sprintf("part-%d.json", c))
	}
	if !checkOutput(*out, stderr) {
		return 1
	}
	res, err := man.BuildCopy(dir, orig, c)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	var part *profiler.Part
	code := 0
	if *countsFile != "" {
		run, err := profiler.ReadNodeRun(res, *countsFile, uint32(*exitCode))
		sum := profiler.OutputHash()
		if err == nil && *outputFile != "" {
			err = hashFile(sum, *outputFile)
		}
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		part = profiler.NewPart(man, c, run, sum.Sum(nil))
	} else {
		// The output passes through and is hashed as it comes: none is kept.
		sum := profiler.OutputHash()
		cfg, err := rf.config(man.Module.Path, progArgs, io.MultiWriter(stdout, sum), io.MultiWriter(stderr, sum))
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 2
		}
		rf.noteInput(stderr)
		if !*quiet {
			fmt.Fprintf(stderr, "pathprof: running copy %d of %s\n", c, dir)
		}
		run, in, ok := runCopy(dir, man, res, cfg, stops, *timeout, stderr)
		if !ok {
			return 1
		}
		part = profiler.NewPart(man, c, run, sum.Sum(nil))
		code = copyCode(part, run, in, stderr)
	}
	if !writePart(*out, part, stderr) {
		return 1
	}
	return code
}

// runCopy runs one copy of dir's on cfg, stopped by a signal or after
// timeout (0: none). ok is false, after saying why, when the copy could
// not run at all (a missing import): there is no part to write.
func runCopy(dir string, man *profiler.Manifest, res *instrument.Result, cfg runner.Config, stops *stopper, timeout time.Duration, stderr io.Writer) (*profiler.CopyRun, *profile.Interruption, bool) {
	stops.after(timeout)
	cfg.Started = stops.started
	run, in := profiler.RunCopyUntil(context.Background(), res, cfg, stops.c)
	var ie *runner.ImportError
	if errors.As(run.Err, &ie) || runner.IsSetupError(run.Err) {
		fmt.Fprintf(stderr, "pathprof: %v\n", run.Err)
		if man.Host == profiler.HostJS {
			fmt.Fprintf(stderr, "pathprof: %s was written for a JavaScript host: run its copies there with %s (docs/js-hosts.md)\n", dir, filepath.Join(dir, jshost.FileName))
		}
		return nil, nil, false
	}
	return run, in, true
}

// copyCode marks the part of a run interrupted by in (if not nil) and
// returns exec's exit code for it: the program's, 1 for a trap, 124 or
// 130 for a stop.
func copyCode(part *profiler.Part, run *profiler.CopyRun, in *profile.Interruption, stderr io.Writer) int {
	code := int(run.Result.ExitCode)
	if in != nil {
		part.Interrupted = in
		code = interruptedCode(in)
		fmt.Fprintf(stderr, "pathprof: interrupted by %s after %.2fs: counts read while the program ran\n", in.Reason, in.Seconds)
	} else if err := run.Failure(); err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// writePart writes part to out, whole or not at all.
func writePart(out string, part *profiler.Part, stderr io.Writer) bool {
	b, err := json.MarshalIndent(part, "", " ")
	if err == nil {
		err = atomicfile.WriteFile(out, append(b, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return false
	}
	if part.Interrupted != nil {
		fmt.Fprintf(stderr, "pathprof: wrote %s (marked interrupted)\n", out)
	}
	return true
}

// hashFile writes the file at path to h.
func hashFile(h io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(h, f)
	return err
}

// cmdMerge merges the parts of a directory's copies into one profile.
func cmdMerge(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("merge", stderr)
	out := fs.String("o", "pathprof.json", "write the profile to `FILE`")
	dir := fs.String("dir", "", "the copies' `DIR` (default: the directory of the first part)")
	quiet := fs.Bool("q", false, "no progress lines on stderr (merging profiles)")
	if err := fs.Parse(interleaved(fs, args)); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	if !checkOutput(*out, stderr) {
		return 1
	}
	if isProfile(fs.Arg(0)) {
		if *dir != "" {
			fmt.Fprintln(stderr, "pathprof: --dir is for parts, not profiles")
			return 2
		}
		var progress io.Writer = stderr
		if *quiet {
			progress = nil
		}
		return mergeProfiles(fs.Args(), *out, stdout, stderr, progress)
	}
	var parts []*profiler.Part
	for _, p := range fs.Args() {
		part, err := profiler.ReadPart(p)
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		parts = append(parts, part)
	}
	if *dir == "" {
		*dir = filepath.Dir(fs.Arg(0))
	}
	// Merging builds every copy again for its numberings, as collect does.
	if fi, err := os.Stat(filepath.Join(*dir, "original.wasm")); err == nil {
		startHeap(int(fi.Size()))
	}
	man, _, cs, err := profiler.ReadDir(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	prof, err := profiler.MergeParts(man, cs, parts)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	if err := profile.WriteFile(*out, prof); err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	if !prof.Complete {
		fmt.Fprintf(stderr, "pathprof: wrote %s, marked incomplete: %s\n", *out, prof.Incomplete)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s: %d copies merged\n", *out, len(parts))
	return 0
}
