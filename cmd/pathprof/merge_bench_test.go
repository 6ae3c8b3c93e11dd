package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/runs"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/profile"
)

// BenchmarkMergeJSON merges the profiles of 1,000 runs of the
// encoding/json test binary (PATHPROF_MERGE_RUNS sets another number):
// each of its tests run alone, with -test.count 1, 2, ... until there are
// enough runs. The runs are profiled once, with --runs on two workers,
// and their profiles written one a file (each run's counts, as the merged
// profile attributes them); what is timed is "pathprof merge" of the
// files, a process of its own, whose peak resident memory is reported
// beside the files' total size. The merge must give back, byte for byte,
// the profile --runs wrote.
func BenchmarkMergeJSON(b *testing.B) {
	n := 1000
	if s := os.Getenv("PATHPROF_MERGE_RUNS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 2 {
			b.Fatalf("PATHPROF_MERGE_RUNS=%s: want a number of runs, at least 2", s)
		}
	}
	bin := pathprofBinary(b)
	wasm := testprogs.GoStdTest(b, "encoding/json")
	orig, err := os.ReadFile(wasm)
	if err != nil {
		b.Fatal(err)
	}
	base := testprogs.GoStdTestConfig(b, "encoding/json")
	base.CacheDir = testprogs.WazeroCacheDir(b)
	var list bytes.Buffer
	cfg := base
	cfg.Args, cfg.Stdout = []string{"-test.list", "^Test"}, &list
	if _, err := runner.Run(context.Background(), orig, cfg); err != nil {
		b.Fatal(err)
	}
	tests := strings.Fields(list.String())
	var specs []runs.Spec
	var mounts []runs.Mount
	for _, d := range base.Dirs {
		mounts = append(mounts, runs.Mount{Host: d.HostDir, Guest: d.GuestPath, ReadOnly: d.ReadOnly})
	}
	for count := 1; len(specs) < n; count++ {
		for _, t := range tests[:min(len(tests), n-len(specs))] {
			specs = append(specs, runs.Spec{Label: fmt.Sprintf("%s×%d", t, count), Env: base.Env, Mounts: mounts,
				Args: []string{"-test.short", "-test.run", "^" + t + "$", "-test.count", strconv.Itoa(count)}})
		}
	}
	start := time.Now()
	all, _, err := runs.Profile(context.Background(), orig, specs, runs.Options{Workers: 2,
		Profile: profiler.Options{ModulePath: wasm, Run: runner.Config{ProgramName: "encoding_json.test", CacheDir: base.CacheDir}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d runs of %d tests profiled in %v", len(specs), len(tests), time.Since(start).Round(time.Second))
	dir := b.TempDir()
	var want bytes.Buffer
	if err := profile.Write(&want, all); err != nil {
		b.Fatal(err)
	}
	var files []string
	var size int64
	for i := range all.Inputs {
		one, err := all.OfInput(i)
		if err != nil {
			b.Fatal(err)
		}
		f := filepath.Join(dir, fmt.Sprintf("run-%04d.json", i))
		if err := profile.WriteFile(f, one); err != nil {
			b.Fatal(err)
		}
		fi, _ := os.Stat(f)
		size += fi.Size()
		files = append(files, f)
	}
	out := filepath.Join(dir, "merged.json")
	// A child's maximum resident size as wait4 reports it includes this
	// process's at the fork, which profiling made large: GNU time, forked
	// from a small process, reports the merge's own.
	gnuTime, timeErr := exec.LookPath("/usr/bin/time")
	if timeErr != nil {
		b.Logf("no /usr/bin/time (Debian's time): peak memory not measured")
	}
	b.ResetTimer()
	var peak int64
	var cpu float64
	for range b.N {
		args := append([]string{"merge", "-q", "-o", out}, files...)
		cmd := exec.Command(bin, args...)
		if timeErr == nil {
			cmd = exec.Command(gnuTime, append([]string{"-f", "peak-KiB %M cpu %U %S", bin}, args...)...)
		}
		msg, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("merge: %v\n%s", err, msg)
		}
		if i := bytes.LastIndex(msg, []byte("peak-KiB ")); i >= 0 {
			var kib int64
			var user, sys float64
			if _, err := fmt.Sscanf(string(msg[i:]), "peak-KiB %d cpu %f %f", &kib, &user, &sys); err != nil {
				b.Fatalf("time: %v: %s", err, msg)
			}
			peak = max(peak, kib<<10)
			cpu += user + sys
		}
	}
	b.StopTimer()
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, want.Bytes()) {
		b.Fatal("merging the runs' profiles did not give back the profile of the runs")
	}
	if peak > 0 {
		// On a busy machine the merge's CPU time says more than its
		// wall-clock time.
		b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
		b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
	}
	b.ReportMetric(float64(size)/(1<<20), "input-MiB")
	b.ReportMetric(float64(len(got))/(1<<20), "output-MiB")
	b.ReportMetric(float64(len(files)), "profiles")
}
