package osp

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"pathprof/internal/testprogs"
	"pathprof/runner"
)

// program is a benchmark program with its inputs.
type program struct {
	name  string
	path  string
	args  []string
	env   []string
	stdin string // file
	dirs  func(t *testing.T) []runner.Mount
	// want is the expected standard output, if known.
	want string
}

func (p program) config(t *testing.T, stdout *bytes.Buffer) runner.Config {
	cfg := runner.Config{
		ProgramName: filepath.Base(p.path),
		Args:        p.args,
		Env:         p.env,
		Stdout:      stdout,
		CacheDir:    testprogs.WazeroCacheDir(t),
	}
	if p.stdin != "" {
		b, err := os.ReadFile(p.stdin)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Stdin = bytes.NewReader(b)
	}
	if p.dirs != nil {
		cfg.Dirs = p.dirs(t)
	}
	return cfg
}

// benchPrograms are the committed C programs, the Go hello program and
// the sort package's test binary.
func benchPrograms(t *testing.T, withGo bool) []program {
	var ps []program
	for _, c := range testprogs.CPrograms(t) {
		ps = append(ps, program{name: c.Name, path: c.Wasm, args: c.Args, stdin: c.Stdin, want: c.WantStdout})
	}
	if !withGo {
		return ps
	}
	ps = append(ps, program{name: "hello", path: testprogs.GoHello(t)})
	dir := testprogs.StdPackageDir(t, "sort")
	ps = append(ps, program{name: "sort.test", path: testprogs.GoStdTest(t, "sort"), args: []string{"-test.short"},
		env: []string{"PWD=" + dir},
		dirs: func(t *testing.T) []runner.Mount {
			return []runner.Mount{{HostDir: dir, GuestPath: dir, ReadOnly: true}, {HostDir: t.TempDir(), GuestPath: "/tmp"}}
		}})
	return ps
}
