// Package runs profiles many runs of one module (a runs file, a test
// binary's tests) on a few workers and merges their profiles into one,
// with each path's counts attributed to the runs that executed it.
package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pathprof/pathprof/internal/atomicfile"
	"github.com/pathprof/pathprof/internal/runner"
)

// Spec is one run: its label and its input. Paths in it are as the runs
// file gives them, resolved against the file's directory by ReadFile.
type Spec struct {
	// Label names the run in the profile and in reports; unique in a
	// runs file.
	Label string   `json:"label"`
	Args  []string `json:"args"`
	// Stdin is a file fed to the program's standard input; "" for none.
	Stdin string `json:"stdin"`
	// Env entries are "K=V"; the host's environment is never passed.
	Env    []string `json:"env"`
	Mounts []Mount  `json:"mounts"`
	// Timeout, if set, stops the run after it (a Go duration such as
	// "90s") and keeps its counts as they stood, marked interrupted.
	Timeout Duration `json:"timeout,omitempty"`
}

// Mount is a host directory the run sees at Guest ("" for the same path).
type Mount struct {
	Host     string `json:"host"`
	Guest    string `json:"guest"`
	ReadOnly bool   `json:"read_only"`
	// Fresh marks an empty directory made for the run (runner.Mount).
	// It is not read from runs files: pathprof makes such directories.
	Fresh bool `json:"-"`
}

// Duration is a time.Duration written as a Go duration string.
type Duration time.Duration

// UnmarshalJSON reads a duration such as "90s" or "10m".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timeout %s is not a string such as \"90s\"", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return fmt.Errorf("timeout %q is not a positive duration such as \"90s\"", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// file is the runs file: an object, so that it can grow fields.
type file struct {
	Runs []Spec `json:"runs"`
}

// ReadFile reads the runs file at path; errors name the file and the run.
// Relative stdin files and mounts are taken from the file's directory,
// and must exist.
func ReadFile(path string) ([]Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	specs, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dir := filepath.Dir(path)
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	for i := range specs {
		s := &specs[i]
		if s.Stdin = abs(s.Stdin); s.Stdin != "" {
			if fi, err := os.Stat(s.Stdin); err != nil || fi.IsDir() {
				return nil, fmt.Errorf("%s: run %q: stdin %s is not a readable file", path, s.Label, s.Stdin)
			}
		}
		for j := range s.Mounts {
			m := &s.Mounts[j]
			if m.Guest == "" {
				m.Guest = m.Host
			}
			m.Host = abs(m.Host)
			if fi, err := os.Stat(m.Host); err != nil || !fi.IsDir() {
				return nil, fmt.Errorf("%s: run %q: mount %s is not a directory", path, s.Label, m.Host)
			}
		}
	}
	return specs, nil
}

// WriteFile writes specs as a runs file that ReadFile reads back as
// they are: their paths should be absolute.
func WriteFile(path string, specs []Spec) error {
	b, err := json.MarshalIndent(file{Runs: specs}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'), 0o644)
}

// Parse reads a runs file's contents: {"runs": [RUN, ...]}. A run
// without a label is labelled "run N" (from 1); labels must differ.
func Parse(data []byte) ([]Spec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a runs file: %v", err)
	}
	if dec.More() {
		return nil, errors.New("not a runs file: more after the JSON object")
	}
	if len(f.Runs) == 0 {
		return nil, errors.New("no runs (want {\"runs\": [{\"label\": ..., \"args\": [...]}, ...]})")
	}
	seen := map[string]int{}
	for i := range f.Runs {
		s := &f.Runs[i]
		if s.Label == "" {
			s.Label = fmt.Sprintf("run %d", i+1)
		}
		if j, ok := seen[s.Label]; ok {
			return nil, fmt.Errorf("runs %d and %d are both labelled %q", j+1, i+1, s.Label)
		}
		seen[s.Label] = i
		for _, e := range s.Env {
			if !strings.Contains(e, "=") {
				return nil, fmt.Errorf("run %q: env %q: want K=V", s.Label, e)
			}
		}
		for _, m := range s.Mounts {
			if m.Host == "" {
				return nil, fmt.Errorf("run %q: a mount without a host directory", s.Label)
			}
		}
	}
	return f.Runs, nil
}

// Config is base with the run's input: its arguments, environment,
// mounts and standard input, read now. Base gives the rest (the program's
// name, stubs, exports to invoke).
func (s *Spec) Config(base runner.Config) (runner.Config, error) {
	cfg := base
	cfg.Args, cfg.Env, cfg.Dirs, cfg.Stdin = s.Args, s.Env, nil, nil
	for _, m := range s.Mounts {
		cfg.Dirs = append(cfg.Dirs, runner.Mount{HostDir: m.Host, GuestPath: m.Guest, ReadOnly: m.ReadOnly, Fresh: m.Fresh})
	}
	if s.Stdin != "" {
		b, err := os.ReadFile(s.Stdin)
		if err != nil {
			return cfg, fmt.Errorf("stdin: %w", err)
		}
		cfg.Stdin = bytes.NewReader(b)
	}
	return cfg, nil
}
