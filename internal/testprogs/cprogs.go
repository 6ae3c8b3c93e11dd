package testprogs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
func CPrograms(t testing.TB) []CProgram {
	t.Helper()
	dir := filepath.Join(ModuleRoot(t), "testdata", "c")
	progs, err := loadCPrograms(dir)
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

func loadCPrograms(dir string) ([]CProgram, error) {
	manifest := filepath.Join(dir, "programs.txt")
	data, err := os.ReadFile(manifest)
	if err != nil {
		return nil, err
	}
	var progs []CProgram
	sc := bufio.NewScanner(bytes.NewReader(data))
	for lineno := 1; sc.Scan(); lineno++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) < 4 {
			return nil, fmt.Errorf("%s:%d: want NAME SOURCE OPT STDIN [ARGS...]", manifest, lineno)
		}
		p := CProgram{
			Name:   fields[0],
			Wasm:   filepath.Join(dir, fields[0]+".wasm"),
			Source: filepath.Join(dir, fields[1]),
			Opt:    fields[2],
			Args:   fields[4:],
		}
		if fields[3] != "-" {
			p.Stdin = filepath.Join(dir, fields[3])
		}
		stdout, err := os.ReadFile(filepath.Join(dir, p.Name+".expected"))
		if err != nil {
			return nil, err
		}
		p.WantStdout = string(stdout)
		code, err := os.ReadFile(filepath.Join(dir, p.Name+".exitcode"))
		if err != nil {
			return nil, err
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(code)), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%s.exitcode: %w", p.Name, err)
		}
		p.WantExitCode = uint32(n)
		for _, f := range []string{p.Wasm, p.Source} {
			if _, err := os.Stat(f); err != nil {
				return nil, fmt.Errorf("%s:%d: %w (run testdata/c/build.sh)", manifest, lineno, err)
			}
		}
		progs = append(progs, p)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return progs, nil
}
