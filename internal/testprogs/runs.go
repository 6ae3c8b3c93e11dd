package testprogs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pathprof/pathprof/internal/proglist"
	"github.com/pathprof/pathprof/internal/runner"
)

// Run is a module and the input of one run of it.
type Run struct {
	Name  string
	Path  string
	Args  []string
	Env   []string
	Stdin string // a file
	Dirs  func(t testing.TB) []runner.Mount
	// Want is the expected standard output, if known.
	Want string
}

// Config is the runner configuration of the run, with standard output
// going to stdout and the shared compilation cache.
func (r Run) Config(t testing.TB, stdout *bytes.Buffer) runner.Config {
	cfg := runner.Config{
		ProgramName: filepath.Base(r.Path),
		Args:        r.Args,
		Env:         r.Env,
		Stdout:      stdout,
		CacheDir:    WazeroCacheDir(t),
	}
	if r.Stdin != "" {
		b, err := os.ReadFile(r.Stdin)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Stdin = bytes.NewReader(b)
	}
	if r.Dirs != nil {
		cfg.Dirs = r.Dirs(t)
	}
	return cfg
}

// CRuns are the committed C programs on their inputs.
func CRuns(t testing.TB) []Run {
	var rs []Run
	for _, c := range CPrograms(t) {
		rs = append(rs, Run{Name: c.Name, Path: c.Wasm, Args: c.Args, Stdin: c.Stdin, Want: c.WantStdout})
	}
	return rs
}

// GoTestRun is the test binary of a standard-library package, run as
// GoStdTestConfig says, named PKG.test.
func GoTestRun(t testing.TB, pkg string) Run {
	cfg := GoStdTestConfig(t, pkg)
	return Run{Name: pkg + ".test", Path: GoStdTest(t, pkg), Args: cfg.Args, Env: cfg.Env,
		Dirs: func(t testing.TB) []runner.Mount { return stdTestMounts(t, pkg) }}
}

// GoStdTestConfig is the runner configuration of the test binary of a
// standard-library package: -test.short, in the package's directory
// (mounted read-only at its host path, with PWD set), with a fresh /tmp.
func GoStdTestConfig(t testing.TB, pkg string) runner.Config {
	return runner.Config{Args: []string{"-test.short"}, Env: []string{"PWD=" + StdPackageDir(t, pkg)}, Dirs: stdTestMounts(t, pkg)}
}

func stdTestMounts(t testing.TB, pkg string) []runner.Mount {
	dir := StdPackageDir(t, pkg)
	return []runner.Mount{{HostDir: dir, GuestPath: dir, ReadOnly: true}, {HostDir: t.TempDir(), GuestPath: "/tmp"}}
}

// KernelRuns are the benchmark's kernels (bench/kernels) at the small
// sizes their list gives, expecting what a native build printed.
func KernelRuns(t testing.TB) []Run {
	t.Helper()
	dir := filepath.Join(ModuleRoot(t), "bench", "kernels")
	list, err := proglist.ReadKernels(dir)
	if err != nil {
		t.Fatal(err)
	}
	var rs []Run
	for _, k := range list {
		want, err := os.ReadFile(filepath.Join(dir, k.Name+".small.expected"))
		if err != nil {
			t.Fatalf("%v (run bench/kernels/build.sh)", err)
		}
		rs = append(rs, Run{Name: "kernel-" + k.Name, Path: filepath.Join(dir, k.Name+".wasm"), Args: []string{k.Small}, Want: string(want)})
	}
	return rs
}
