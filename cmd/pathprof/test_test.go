package main

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testbin"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/tracer"
	"github.com/pathprof/pathprof/profile"
)

// TestTestGoPackages runs pathprof test on Go packages of the standard
// library, which it builds for wasip1 itself, and checks that it profiled
// every test the binary lists, each as a run whose counts in the merged
// profile equal the profile of that test run alone (and, for the first
// test, the tracer's).
func TestTestGoPackages(t *testing.T) {
	for _, pkg := range []string{"sort", "strconv", "regexp"} {
		t.Run(pkg, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, pkg+".json")
			code, _, errs := runCmd("test", "--jobs", "2", "--cache", testprogs.WazeroCacheDir(t), "-o", out, pkg, "-test.short")
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errs)
			}
			bin := filepath.Join(dir, pkg+".test.wasm")
			if !strings.Contains(errs, "building the tests of "+pkg) || !strings.Contains(errs, ", 0 failed;") {
				t.Fatalf("progress:\n%s", errs)
			}
			got := readProfile(t, out)
			checkTestsAlone(t, bin, got, func(t *testing.T, test string) runner.Config {
				pkgDir := testprogs.StdPackageDir(t, pkg)
				return runner.Config{ProgramName: filepath.Base(bin), Args: append([]string{"-test.short"}, testbin.RunArgs(testbin.Go, test)...),
					Env: []string{"PWD=" + pkgDir}, CacheDir: testprogs.WazeroCacheDir(t),
					Dirs: []runner.Mount{{HostDir: pkgDir, GuestPath: pkgDir, ReadOnly: true}, {HostDir: t.TempDir(), GuestPath: "/tmp"}}}
			})
		})
	}
}

// checkTestsAlone checks the profile got of pathprof test on the module
// bin: its inputs are the tests the binary lists, and each input's
// counts are the profile of its test run alone with the configuration
// cfg gives; the first test's equal the tracer's too.
func checkTestsAlone(t *testing.T, bin string, got *profile.Profile, cfg func(t *testing.T, test string) runner.Config) {
	t.Helper()
	ctx := context.Background()
	orig, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	p, err := testbin.Detect(orig)
	if err != nil {
		t.Fatal(err)
	}
	listCfg := cfg(t, "")
	listCfg.Args = listCfg.Args[:len(listCfg.Args)-len(testbin.RunArgs(p, ""))]
	tests, err := testbin.List(ctx, orig, p, listCfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Inputs) != len(tests) || len(tests) < 3 {
		t.Fatalf("%d inputs, %d tests listed", len(got.Inputs), len(tests))
	}
	byLabel := map[string]int{}
	for i, in := range got.Inputs {
		byLabel[in.Label] = i
		if !in.Complete || in.ExitCode != 0 {
			t.Fatalf("test %s: %+v", in.Label, in)
		}
	}
	pr, err := profiler.Prepare(orig, profiler.Options{ModulePath: bin})
	if err != nil {
		t.Fatal(err)
	}
	w, err := pr.Compile(ctx, cfg(t, tests[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	for n, test := range tests {
		i, ok := byLabel[test]
		if !ok {
			t.Fatalf("test %s listed but not profiled", test)
		}
		c := cfg(t, test)
		alone, err := w.Profile(ctx, test, c, nil)
		if err != nil {
			t.Fatalf("%s alone: %v", test, err)
		}
		one, err := got.OfInput(i)
		if err != nil {
			t.Fatal(err)
		}
		if ok, diff := one.Equal(alone); !ok {
			t.Fatalf("test %s: its counts in pathprof test's profile differ from its run alone: %s", test, diff)
		}
		if n == 0 {
			tr, _, err := tracer.Run(ctx, orig, c)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(tracer.Counts(alone), tr.Paths) {
				t.Fatalf("test %s: profile differs from the tracer's", test)
			}
		}
	}
}

// TestTestRustAndGTest runs pathprof test on the committed Rust libtest
// and GoogleTest binaries (testdata/testbins), whose protocols it tells
// from the modules, and checks each test's counts against its run alone.
func TestTestRustAndGTest(t *testing.T) {
	for _, c := range []struct{ name, proto string }{{"shapes", "rust"}, {"stack", "gtest"}} {
		t.Run(c.proto, func(t *testing.T) {
			bin := filepath.Join(testprogs.ModuleRoot(t), "testdata", "testbins", c.name+".wasm")
			out := filepath.Join(t.TempDir(), c.name+".json")
			code, _, errs := runCmd("test", "--jobs", "2", "--cache", testprogs.WazeroCacheDir(t), "-o", out, bin)
			if code != 0 || !strings.Contains(errs, "("+c.proto+")") {
				t.Fatalf("exit %d\n%s", code, errs)
			}
			p := testbin.Protocol(c.proto)
			checkTestsAlone(t, bin, readProfile(t, out), func(t *testing.T, test string) runner.Config {
				return runner.Config{ProgramName: filepath.Base(bin), Args: testbin.RunArgs(p, test), CacheDir: testprogs.WazeroCacheDir(t)}
			})
		})
	}
}
