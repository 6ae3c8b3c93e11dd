package noderun

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/pathprof/pathprof/internal/tempfiles"
)

// Copy is an instrumented program written where node loads it, to be run
// any number of times: node compiles a module's functions as they are
// first called, so a big copy starts at once.
type Copy struct {
	node, dir, countersPath string
}

// Write writes program and its counter module (nil: its counters are in
// its own memory) with the script to a fresh directory. node must be on
// PATH (exec.ErrNotFound otherwise).
func Write(program, countersMod []byte) (*Copy, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, err
	}
	dir, err := tempfiles.MkdirTemp("", "pathprof-node-")
	if err != nil {
		return nil, err
	}
	c := &Copy{node: node, dir: dir, countersPath: "-"}
	// wazero's random source (math/rand seeded with 42, as
	// wazero's platform.NewFakeRandSource) as far as a run may read it.
	random := make([]byte, randomBytes)
	rand.New(rand.NewSource(42)).Read(random)
	files := map[string][]byte{"run.cjs": Script, "program.wasm": program, "random.bin": random}
	if countersMod != nil {
		c.countersPath = filepath.Join(dir, "counters.wasm")
		files["counters.wasm"] = countersMod
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// randomBytes is how much of wazero's random stream a run under Copy.Run
// may read.
const randomBytes = 1 << 20

// Spec is what one run gives the program.
type Spec struct {
	ProgramName string
	Args        []string
	// Env entries have the form "KEY=VALUE".
	Env []string
	// Preopens are the directories the program sees, in order.
	Preopens       []Preopen
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Preopen is a directory the program sees: the host directory Host at
// the guest path Guest, read-only if ReadOnly (run.cjs then drops every
// WASI right that writes from it before the program's first call).
type Preopen struct {
	Guest, Host string
	ReadOnly    bool
}

// Run runs the copy once; the counter area goes to countsOut (and the
// call counters to countsOut.calls, as Run's Result.Calls). It returns the
// program's exit code; err is set only when node could not be run.
func (c *Copy) Run(ctx context.Context, spec Spec, countsOut string) (int, error) {
	env := map[string]string{}
	for _, kv := range spec.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	preopens := make([][]string, len(spec.Preopens))
	for i, p := range spec.Preopens {
		preopens[i] = []string{p.Guest, p.Host}
		if p.ReadOnly {
			preopens[i] = append(preopens[i], "ro")
		}
	}
	conf, err := json.Marshal(map[string]any{"argv0": spec.ProgramName, "env": env, "preopens": preopens,
		"random": filepath.Join(c.dir, "random.bin")})
	if err != nil {
		return 0, err
	}
	confPath := countsOut + ".config.json"
	if err := os.WriteFile(confPath, conf, 0o644); err != nil {
		return 0, err
	}
	defer os.Remove(confPath)
	args := []string{"--no-warnings", filepath.Join(c.dir, "run.cjs"), "--config", confPath,
		filepath.Join(c.dir, "program.wasm"), c.countersPath, countsOut}
	cmd := exec.CommandContext(ctx, c.node, append(args, spec.Args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = spec.Stdin, spec.Stdout, spec.Stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return ee.ExitCode(), nil
	}
	return 0, err
}

// Close removes the copy's directory.
func (c *Copy) Close() error { return tempfiles.RemoveAll(c.dir) }
