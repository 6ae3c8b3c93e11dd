package main

// This file is "pathprof profile --runs FILE": many runs of one module,
// profiled on --jobs workers and merged with each path's counts by run.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pathprof/pathprof/internal/history"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/report"
	"github.com/pathprof/pathprof/internal/runs"
	"github.com/pathprof/pathprof/profile"
)

// runsFlags are profile's flags as --runs takes them.
type runsFlags struct {
	runs, module, out, strategy, weights, label string
	markers, regionFunc, uncovered              string
	copies, jobs, top                           int
	quiet, counterModule                        bool
	timeout, every                              time.Duration
	rf                                          *runFlags
	progArgs                                    []string
	// history keeps the profile for later runs and plans pbl and p3 by
	// the previous one (nil: --no-history).
	history *history.Store
}

// profileRuns profiles every run of the runs file. Its exit code is 0
// when every run ended well, 1 when one failed (the profile is written
// with it marked) or nothing could run, 2 for flags that do not make
// sense, and 130 when a signal stopped the runs.
func profileRuns(f runsFlags, stdout, stderr io.Writer) int {
	// The input of each run comes from the runs file alone.
	for _, c := range []struct {
		set  bool
		flag string
	}{{len(f.rf.env) > 0, "--env"}, {len(f.rf.dirs) > 0, "--dir"}, {f.rf.stdin != "", "--stdin"},
		{len(f.progArgs) > 0, "program arguments"}, {f.label != "", "--label"}, {f.every != 0, "--snapshot-every"}} {
		if c.set {
			fmt.Fprintf(stderr, "pathprof: --runs gives each run its input: %s does not go with it\n", c.flag)
			return 2
		}
	}
	st, k, code := strategyCopies(f.strategy, f.copies, stderr)
	if code != 0 {
		return code
	}
	if !checkOutput(f.out, stderr) {
		return 1
	}
	specs, err := runs.ReadFile(f.runs)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	orig, err := os.ReadFile(f.module)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	startHeap(len(orig))
	return profileSpecs(f, st, k, orig, specs, stderr)
}

// profileSpecs profiles the runs specs of the module orig, as --runs
// does, and writes the profile; its exit code is profileRuns'.
func profileSpecs(f runsFlags, st profile.Strategy, k int, orig []byte, specs []runs.Spec, stderr io.Writer) int {
	stop, unlisten, started := interrupts(0, stderr)
	defer unlisten()
	popt, wsrc, err := planOptions(orig, f.weights)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	region, err := regionOf(orig, f.markers, f.regionFunc)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	base, err := uncoveredBase(f.uncovered, orig, st)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	prog, err := f.rf.program(f.module)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 2
	}
	var progress io.Writer = stderr
	if f.quiet {
		progress = nil
	}
	prog.Started = started
	workers := f.jobs
	if workers < 1 {
		workers = 1
	}
	if progress != nil {
		fmt.Fprintf(progress, "pathprof: %d runs of %s, %d at once\n", len(specs), f.module, min(workers, len(specs)))
	}
	// The programs' output is not shown, but the end of a failed run's
	// standard error usually says why it failed.
	tails := make([]*tail, len(specs))
	p, results, err := runs.Profile(context.Background(), orig, specs, runs.Options{
		Profile: profiler.Options{Strategy: st, Copies: k, Partition: popt, Weights: wsrc, ModulePath: f.module, Progress: progress,
			Instrument: instrument.Options{SeparateCounters: f.counterModule}, Run: prog, Region: region,
			UncoveredFrom: base, UncoveredName: f.uncovered, History: f.history},
		Workers: workers,
		Timeout: f.timeout,
		Stop:    stop,
		Output: func(i int, _ *runs.Spec) (io.Writer, io.Writer) {
			tails[i] = &tail{}
			return nil, tails[i]
		},
		Progress: runsProgress(stderr, f.quiet, tails),
	})
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %s: %v\n", f.module, err)
		return 1
	}
	if err := profile.WriteFile(f.out, p); err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	failed := 0
	for _, r := range results {
		if r.Err != nil {
			failed++
		}
	}
	if progress != nil || failed > 0 {
		fmt.Fprintf(stderr, "pathprof: wrote %s: %d runs, %d failed; %d paths executed in %d functions\n", f.out, len(results), failed, countPaths(p), countFuncs(p))
	}
	noteNewPaths(stderr, p)
	if f.top > 0 {
		r, err := report.Build(p, report.Options{Top: f.top, Module: orig, ModulePath: f.module})
		if err == nil {
			err = r.WriteText(stderr)
		}
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: report: %v\n", err)
			return 1
		}
	}
	switch {
	case p.Interrupted != nil && p.Interrupted.Reason != reasonTimeout:
		return 130
	case failed > 0:
		return 1
	}
	return 0
}

// runsProgress writes to w a line per run that ended (with quiet, per run
// that failed): runs done of all, the run's label and outcome, and the
// time the others will take.
func runsProgress(w io.Writer, quiet bool, tails []*tail) func(runs.Progress) {
	return func(pg runs.Progress) {
		if quiet && pg.Last.Err == nil {
			return
		}
		outcome := fmt.Sprintf("%.2fs", pg.Last.Seconds)
		if pg.Last.Err != nil {
			// A trap's message goes on with its stack, a line a frame.
			msg, _, _ := strings.Cut(pg.Last.Err.Error(), "\n")
			outcome = "failed: " + msg
		}
		left := ""
		switch {
		case pg.Left >= 10*time.Second:
			left = fmt.Sprintf(", about %s left", pg.Left.Round(time.Second))
		case pg.Left > 0:
			left = fmt.Sprintf(", about %s left", pg.Left.Round(100*time.Millisecond))
		}
		fmt.Fprintf(w, "pathprof: run %d of %d done (%s, %s)%s\n", pg.Done, pg.Total, pg.Last.Label, outcome, left)
		if t := tails[pg.Last.Index]; pg.Last.Err != nil && t != nil {
			for _, line := range t.lines() {
				fmt.Fprintf(w, "    %s\n", line)
			}
		}
	}
}

// tailLines is how many of a failed run's last lines of standard error
// are shown.
const tailLines = 5

// tail keeps the last lines written to it, and no more than a few
// kilobytes however long the lines.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > 8<<10 {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-4<<10:]...)
	}
	return len(b), nil
}

// lines returns the last tailLines lines, each cut to 200 bytes.
func (t *tail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ls := strings.Split(strings.TrimRight(string(t.buf), "\n"), "\n")
	if len(ls) == 1 && ls[0] == "" {
		return nil
	}
	ls = ls[max(0, len(ls)-tailLines):]
	for i, l := range ls {
		if len(l) > 200 {
			ls[i] = l[:200] + "…"
		}
	}
	return ls
}

// uncoveredBase reads the profile of --uncovered-from, nil without it,
// and checks that it is a profile of orig.
func uncoveredBase(path string, orig []byte, st profile.Strategy) (*profile.Profile, error) {
	if path == "" {
		return nil, nil
	}
	if st != profile.SBL {
		return nil, fmt.Errorf("--uncovered-from plans one copy: --strategy %s does not go with it", st)
	}
	base, err := profile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(orig)
	if got := hex.EncodeToString(sum[:]); base.Module.SHA256 != got {
		return nil, fmt.Errorf("--uncovered-from %s is a profile of another module (sha256 %s, this module's %s)", path, base.Module.SHA256, got)
	}
	return base, nil
}

// noteNewPaths says how many paths a profile made with --uncovered-from
// newly covered.
func noteNewPaths(w io.Writer, p *profile.Profile) {
	if u := p.UncoveredFrom; u != nil {
		fmt.Fprintf(w, "pathprof: %d paths newly covered beyond %s\n", len(u.NewPaths), u.Base)
	}
}
