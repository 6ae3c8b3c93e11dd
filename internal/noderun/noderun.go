// Package noderun holds the script that runs an instrumented program under
// node's WASI (with its counter module, when it has one), so that copies
// can run on machines without pathprof, and a helper that runs it.
package noderun

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// Script is run.cjs: node run.cjs PROGRAM.wasm COUNTERS.wasm|- COUNTS.out [ARGS...].
//
//go:embed run.cjs
var Script []byte

// Result is what a run under node produced.
type Result struct {
	Stdout, Stderr []byte
	ExitCode       int
	// Counters is the counter area after the run: the counter module's
	// memory, or the part of the program's memory holding its counters.
	Counters []byte
	// Calls is the JSON of the call counters of a copy that shares out
	// calls (run.cjs's COUNTS.out.calls), or nil.
	Calls []byte
}

// Run runs program with its counter module (nil: its counters are in its
// own memory) under node, which must be on PATH (exec.ErrNotFound
// otherwise).
func Run(ctx context.Context, program, countersMod []byte, args []string, stdin io.Reader) (*Result, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pathprof-node-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	files := map[string][]byte{"run.cjs": Script, "program.wasm": program}
	countersPath := "-"
	if countersMod != nil {
		countersPath = filepath.Join(dir, "counters.wasm")
		files["counters.wasm"] = countersMod
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, err
		}
	}
	out := filepath.Join(dir, "counts.out")
	cmd := exec.CommandContext(ctx, node, append([]string{"--no-warnings", filepath.Join(dir, "run.cjs"), filepath.Join(dir, "program.wasm"), countersPath, out}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, &stderr
	err = cmd.Run()
	res := &Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.ExitCode = ee.ExitCode()
	} else if err != nil {
		return nil, err
	}
	if res.Counters, err = os.ReadFile(out); err != nil {
		return res, fmt.Errorf("node run wrote no counters: %v\n%s", err, stderr.Bytes())
	}
	if res.Calls, err = os.ReadFile(out + ".calls"); errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return res, err
}
