package main

// This file tests that a program reads pathprof's own standard input when
// it is a file or a pipe and --stdin is not given.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/profile"
)

// withStdin runs f with stdinFile replaced: "pipe" feeds path's contents
// through a pipe; any other kind opens path (a file or a device).
func withStdin(t *testing.T, kind, path string, f func()) {
	t.Helper()
	var in *os.File
	switch kind {
	case "pipe":
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			w.Write(data)
			w.Close()
		}()
		in = r
	default:
		var err error
		if in, err = os.Open(path); err != nil {
			t.Fatal(err)
		}
	}
	old := stdinFile
	stdinFile = in
	defer func() {
		stdinFile = old
		in.Close()
	}()
	f()
}

// TestInheritedStdin runs calc, which reads its input from stdin, with
// calc.in given as a file and as a pipe on pathprof's standard input: every
// command that runs a program gives it the input (and every P3 copy the
// same bytes), for the same output and profiles as --stdin calc.in. A
// device that is not /dev/null stands in for a terminal: empty input, and
// pathprof says so unless -q.
func TestInheritedStdin(t *testing.T) {
	p := testprogs.CProgramByName(t, "calc")
	dir := t.TempDir()
	read := func(path string) *profile.Profile {
		t.Helper()
		prof, err := profile.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return prof
	}
	want := filepath.Join(dir, "want.json")
	if code, out, errs := runCmd("profile", "-q", "-o", want, "--stdin", p.Stdin, p.Wasm); code != int(p.WantExitCode) || out != p.WantStdout {
		t.Fatalf("--stdin: exit %d: %s", code, errs)
	}
	wantProf := read(want)
	copies := filepath.Join(dir, "copies")
	if code, _, errs := runCmd("instrument", "--copies", "3", "-o", copies, p.Wasm); code != 0 {
		t.Fatalf("instrument: exit %d: %s", code, errs)
	}

	for _, kind := range []string{"file", "pipe"} {
		for _, strategy := range []string{"sbl", "p3"} {
			got := filepath.Join(dir, kind+"-"+strategy+".json")
			withStdin(t, kind, p.Stdin, func() {
				code, out, errs := runCmd("profile", "-q", "--strategy", strategy, "-o", got, p.Wasm)
				if code != int(p.WantExitCode) || out != p.WantStdout {
					t.Fatalf("%s, %s: exit %d, stdout %q: %s", kind, strategy, code, out, errs)
				}
			})
			if ok, diff := wantProf.Equal(read(got)); !ok {
				t.Errorf("%s, %s: the profile differs from --stdin's: %s", kind, strategy, diff)
			}
		}
		withStdin(t, kind, p.Stdin, func() {
			code, out, errs := runCmd("exec", "-o", filepath.Join(dir, "part.json"), copies, "1")
			if code != int(p.WantExitCode) || out != p.WantStdout {
				t.Errorf("%s, exec: exit %d, stdout %q: %s", kind, code, out, errs)
			}
		})
		withStdin(t, kind, p.Stdin, func() {
			code, out, errs := runCmd("osp", "-q", "-o", filepath.Join(dir, "osp.json"), p.Wasm)
			if code != int(p.WantExitCode) || out != p.WantStdout {
				t.Errorf("%s, osp: exit %d, stdout %q: %s", kind, code, out, errs)
			}
		})
		// osp-score runs the program more than once: each run must get
		// the input, or their outputs differ and it fails.
		withStdin(t, kind, p.Stdin, func() {
			code, out, errs := runCmd("osp-score", "-o", filepath.Join(dir, "score.json"), p.Wasm)
			if code != 0 || errs != "" {
				t.Errorf("%s, osp-score: exit %d: %s%s", kind, code, out, errs)
			}
		})
	}

	// A terminal: empty input, said on stderr unless -q; /dev/null: empty
	// input, said nowhere.
	var empty string
	withStdin(t, "device", os.DevNull, func() {
		var errs string
		_, empty, errs = runCmd("profile", "-o", filepath.Join(dir, "null.json"), p.Wasm)
		if strings.Contains(errs, "terminal") {
			t.Errorf("/dev/null: %s", errs)
		}
	})
	if empty == p.WantStdout {
		t.Fatal("calc prints the same on empty input: the test cannot tell inputs apart")
	}
	for _, quiet := range []bool{false, true} {
		args := []string{"profile", "-o", filepath.Join(dir, "tty.json"), p.Wasm}
		if quiet {
			args = append(args[:1], append([]string{"-q"}, args[1:]...)...)
		}
		withStdin(t, "device", "/dev/zero", func() {
			_, out, errs := runCmd(args...)
			said := strings.Contains(errs, "standard input is a terminal: the program gets empty input")
			if out != empty || said == quiet {
				t.Errorf("terminal, -q %v: stdout %q (want %q), stderr %q", quiet, out, empty, errs)
			}
		})
	}
}
