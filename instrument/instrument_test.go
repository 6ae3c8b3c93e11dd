package instrument

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"pathprof/counters"
	"pathprof/internal/testprogs"
	"pathprof/noderun"
	"pathprof/profile"
	"pathprof/runner"
)

// runProfiled instruments a module, runs it, and returns the program's
// output and the profile's functions.
func runProfiled(t *testing.T, orig []byte, cfg runner.Config) (string, uint32, []profile.Function, *Result) {
	t.Helper()
	res, err := Instrument(orig, Options{})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, res.Module)
	var out bytes.Buffer
	var counts counters.Counts
	cfg.Stdout = &out
	cfg.Modules = []runner.NamedModule{{Name: counters.ModuleName, Wasm: res.Counters}}
	cfg.AfterRun = func(ctx context.Context, mods map[string]api.Module) error {
		mem := mods[counters.ModuleName].Memory()
		b, ok := mem.Read(0, mem.Size())
		if !ok {
			t.Fatal("cannot read counter memory")
		}
		counts, err = counters.Read(b)
		return err
	}
	r, err := runner.Run(context.Background(), res.Module, cfg)
	if err != nil {
		t.Fatal(err)
	}
	fs, _, err := res.Functions(counts)
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), r.ExitCode, fs, res
}

func validate(t *testing.T, mod []byte) {
	path, err := exec.LookPath("wasm-validate")
	if err != nil {
		return
	}
	f := filepath.Join(t.TempDir(), "m.wasm")
	if err := os.WriteFile(f, mod, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(path, "--enable-all", f).CombinedOutput(); err != nil {
		t.Fatalf("wasm-validate: %v\n%s", err, strings.TrimSpace(string(out)))
	}
}

func TestCPrograms(t *testing.T) {
	for _, p := range testprogs.CPrograms(t) {
		t.Run(p.Name, func(t *testing.T) {
			orig, err := os.ReadFile(p.Wasm)
			if err != nil {
				t.Fatal(err)
			}
			cfg := runner.Config{Args: p.Args, ProgramName: filepath.Base(p.Wasm)}
			if p.Stdin != "" {
				b, _ := os.ReadFile(p.Stdin)
				cfg.Stdin = bytes.NewReader(b)
			}
			out, code, fs, _ := runProfiled(t, orig, cfg)
			if out != p.WantStdout || code != p.WantExitCode {
				t.Fatalf("instrumented program: exit %d, want %d; output differs: %v", code, p.WantExitCode, out != p.WantStdout)
			}
			paths, execs := 0, uint64(0)
			for _, f := range fs {
				paths += len(f.Paths)
				for _, pa := range f.Paths {
					execs += pa.Count
				}
			}
			if paths == 0 {
				t.Fatal("no paths counted")
			}
			t.Logf("%d functions, %d distinct paths, %d path executions", len(fs), paths, execs)
		})
	}
}

// TestGoPrograms instruments Go programs (br_table dispatch in every
// function, if/else, huge path counts) and checks they behave as before.
func TestGoPrograms(t *testing.T) {
	dir := testprogs.StdPackageDir(t, "sort")
	progs := []struct {
		name string
		path string
		cfg  runner.Config
	}{
		{"hello", testprogs.GoHello(t), runner.Config{}},
		{"sort.test", testprogs.GoStdTest(t, "sort"), runner.Config{
			Args: []string{"-test.short"},
			Env:  []string{"PWD=" + dir},
			Dirs: []runner.Mount{{HostDir: dir, GuestPath: dir, ReadOnly: true}, {HostDir: t.TempDir(), GuestPath: "/tmp"}},
		}},
	}
	for _, p := range progs {
		t.Run(p.name, func(t *testing.T) {
			orig, err := os.ReadFile(p.path)
			if err != nil {
				t.Fatal(err)
			}
			cfg := p.cfg
			cfg.CacheDir = testprogs.WazeroCacheDir(t)
			var want bytes.Buffer
			cfg.Stdout = &want
			r0, err := runner.Run(context.Background(), orig, cfg)
			if err != nil {
				t.Fatal(err)
			}
			out, code, fs, res := runProfiled(t, orig, cfg)
			if out != want.String() || code != r0.ExitCode {
				t.Fatalf("instrumented program: exit %d, want %d\n%.1000s\nwant\n%.1000s", code, r0.ExitCode, out, want.String())
			}
			skipped, cut, paths := 0, 0, 0
			for i, f := range fs {
				if strings.HasPrefix(f.Status, "skipped") {
					skipped++
				}
				if len(res.Funcs[i].Cuts) > 0 {
					cut++
				}
				paths += len(f.Paths)
			}
			t.Logf("%d functions (%d skipped, %d cut), %d distinct paths", len(fs), skipped, cut, paths)
		})
	}
}

// TestNode runs instrumented C programs under node's WASI with the
// generated counter module: same output and exit code, same counts as
// under wazero.
func TestNode(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	for _, p := range testprogs.CPrograms(t) {
		t.Run(p.Name, func(t *testing.T) {
			orig, err := os.ReadFile(p.Wasm)
			if err != nil {
				t.Fatal(err)
			}
			stdin := func() io.Reader {
				if p.Stdin == "" {
					return strings.NewReader("")
				}
				b, _ := os.ReadFile(p.Stdin)
				return bytes.NewReader(b)
			}
			cfg := runner.Config{Args: p.Args, ProgramName: filepath.Base(p.Wasm), Stdin: stdin()}
			_, _, want, res := runProfiled(t, orig, cfg)
			nr, err := noderun.Run(context.Background(), res.Module, res.Counters, p.Args, stdin())
			if err != nil {
				t.Fatal(err)
			}
			if string(nr.Stdout) != p.WantStdout || uint32(nr.ExitCode) != p.WantExitCode {
				t.Fatalf("under node: exit %d, want %d; output differs: %v\n%s", nr.ExitCode, p.WantExitCode, string(nr.Stdout) != p.WantStdout, nr.Stderr)
			}
			counts, err := counters.Read(nr.Counters)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := res.Functions(counts)
			if err != nil {
				t.Fatal(err)
			}
			a := &profile.Profile{Functions: want}
			b := &profile.Profile{Functions: got}
			if ok, diff := a.Equal(b); !ok {
				t.Fatalf("node's counts differ from wazero's: %s", diff)
			}
		})
	}
}
