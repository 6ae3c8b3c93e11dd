package testprogs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pathprof/pathprof/internal/proglist"
	"github.com/pathprof/pathprof/internal/runner"
)

// CProgram is one of the C programs committed under testdata/c, built by
// testdata/c/build.sh with clang for wasm32-wasi, with DWARF.
type CProgram struct {
	Name   string   // e.g. "calc", or "vm-O0" for an -O0 build of vm.c
	Wasm   string   // path of the module
	Source string   // path of the C file
	Opt    string   // optimisation flag it was built with, e.g. "-O2"
	Args   []string // argv[1:] for the run
	// Stdin is the path of the file to feed to standard input, or "".
	Stdin string
	// WantStdout and WantExitCode are what a native build of Source
	// printed and exited with on these inputs.
	WantStdout   string
	WantExitCode uint32
}

// Config is the runner configuration of the program's run: its arguments
// and, if it reads one, its input as a bytes.Reader, which a caller may
// rewind to run again.
func (p CProgram) Config(t testing.TB) runner.Config {
	t.Helper()
	cfg := runner.Config{Args: p.Args}
	if p.Stdin != "" {
		b, err := os.ReadFile(p.Stdin)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Stdin = bytes.NewReader(b)
	}
	return cfg
}

// CPrograms returns the committed C programs in the order of
// testdata/c/programs.txt.
func CPrograms(t testing.TB) []CProgram { return CProgramsIn(t, "programs.txt") }

// CProgramsIn returns the committed C programs of another list in
// testdata/c, such as programs-O0.txt, in its order.
func CProgramsIn(t testing.TB, list string) []CProgram {
	t.Helper()
	dir := filepath.Join(ModuleRoot(t), "testdata", "c")
	progs, err := loadCPrograms(dir, list)
	if err != nil {
		t.Fatal(err)
	}
	return progs
}

// CProgramByName returns the committed C program called name.
func CProgramByName(t testing.TB, name string) CProgram {
	t.Helper()
	for _, p := range CPrograms(t) {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no C test program named %q in testdata/c/programs.txt", name)
	return CProgram{}
}

func loadCPrograms(dir, name string) ([]CProgram, error) {
	list, err := proglist.ReadCList(dir, name)
	if err != nil {
		return nil, err
	}
	var progs []CProgram
	for _, c := range list {
		p := CProgram{
			Name:         c.Name,
			Wasm:         filepath.Join(dir, c.Name+".wasm"),
			Source:       filepath.Join(dir, c.Source),
			Opt:          c.Opt,
			Args:         c.Args,
			WantExitCode: c.ExitCode,
		}
		if c.Stdin != "" {
			p.Stdin = filepath.Join(dir, c.Stdin)
		}
		stdout, err := os.ReadFile(filepath.Join(dir, p.Name+".expected"))
		if err != nil {
			return nil, err
		}
		p.WantStdout = string(stdout)
		for _, f := range []string{p.Wasm, p.Source} {
			if _, err := os.Stat(f); err != nil {
				return nil, fmt.Errorf("%s: %w (run testdata/c/build.sh)", c.Name, err)
			}
		}
		progs = append(progs, p)
	}
	return progs, nil
}
