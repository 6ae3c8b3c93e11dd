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
	c, err := Write(program, countersMod)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	out := filepath.Join(c.dir, "counts.out")
	var stdout, stderr bytes.Buffer
	code, err := c.Run(ctx, Spec{Args: args, Stdin: stdin, Stdout: &stdout, Stderr: &stderr}, out)
	if err != nil {
		return nil, err
	}
	res := &Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: code}
	if res.Counters, err = os.ReadFile(out); err != nil {
		return res, fmt.Errorf("node run wrote no counters: %v\n%s", err, stderr.Bytes())
	}
	if res.Calls, err = os.ReadFile(out + ".calls"); errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return res, err
}
