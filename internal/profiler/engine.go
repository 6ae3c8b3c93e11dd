package profiler

// This file holds the engines that run the copies: wazero, in this
// process, and node, whose WebAssembly compiler compiles a function when
// it is first called, so that a copy of a big module starts at once where
// wazero compiles every function first.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pathprof/pathprof/internal/counters"
	"github.com/pathprof/pathprof/internal/noderun"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/tempfiles"
)

// Engine says what runs the copies.
type Engine string

// The engines.
const (
	EngineWazero Engine = "wazero"
	EngineNode   Engine = "node"
)

// ParseEngine reads an engine's name; the empty name is wazero.
func ParseEngine(s string) (Engine, error) {
	switch Engine(s) {
	case "", EngineWazero:
		return EngineWazero, nil
	case EngineNode:
		return EngineNode, nil
	}
	return "", fmt.Errorf("unknown engine %q (wazero or node)", s)
}

// nodeUnsupported says which of cfg's fields node's runner cannot honour:
// it gives a program WASI and nothing else.
func nodeUnsupported(cfg runner.Config) error {
	var what []string
	if len(cfg.Stubs) > 0 || cfg.StubMissing {
		what = append(what, "stubs")
	}
	if len(cfg.Invoke) > 0 {
		what = append(what, "invoked exports")
	}
	if len(cfg.Modules) > 0 || cfg.HostModules != nil {
		what = append(what, "other modules")
	}
	if cfg.Listener != nil {
		what = append(what, "regions")
	}
	if what != nil {
		return fmt.Errorf("engine node runs WASI commands only, without %s", strings.Join(what, " or "))
	}
	return nil
}

// runNode runs the copy under node with the run-time fields of cfg and
// reads its counts back. Its directories are node's preopens (a read-only
// one keeps only the rights that read), and its clocks and random source
// are wazero's (run.cjs), so that it follows the paths a wazero run
// follows.
func (p *CopyProgram) runNode(ctx context.Context, cfg runner.Config) *CopyRun {
	r := &CopyRun{res: p.res, Counts: counters.Counts{}}
	fail := func(err error) *CopyRun {
		r.Err = err
		return r
	}
	dir, err := tempfiles.MkdirTemp("", "pathprof-node-run-")
	if err != nil {
		return fail(err)
	}
	defer tempfiles.RemoveAll(dir)
	spec := noderun.Spec{ProgramName: cfg.ProgramName, Args: cfg.Args, Env: cfg.Env,
		Stdin: cfg.Stdin, Stdout: cfg.Stdout, Stderr: cfg.Stderr}
	if spec.ProgramName == "" {
		spec.ProgramName = runner.DefaultProgramName
	}
	for _, d := range cfg.Dirs {
		spec.Preopens = append(spec.Preopens, noderun.Preopen{Guest: d.GuestPath, Host: d.HostDir, ReadOnly: d.ReadOnly})
	}
	out := filepath.Join(dir, "counts.out")
	if cfg.Started != nil {
		cfg.Started()
	}
	code, err := p.node.Run(ctx, spec, out)
	if err != nil {
		return fail(fmt.Errorf("engine node: %w", err))
	}
	if msg, err := os.ReadFile(out + ".error"); err == nil {
		r.Err = fmt.Errorf("under node: %s", msg)
	}
	nr, err := ReadNodeRun(p.res, out, uint32(code))
	if err != nil {
		r.ReadErr = err
		if r.Err == nil && errors.Is(err, os.ErrNotExist) {
			r.Err = fmt.Errorf("node exited with %d before the program ran", code)
		}
		return r
	}
	nr.Err = r.Err
	return nr
}
