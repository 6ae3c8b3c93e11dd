// Package bench measures what path profiling costs on a suite of real WASI
// programs, and describes and prepares that suite.
//
// A suite is a directory holding suite.json (the manifest) and the files
// it names. Each program runs uninstrumented and instrumented in turns on
// the same input; medians of the run times give the overhead, and every
// instrumented run must print what the uninstrumented one printed.
package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pathprof/pathprof/internal/atomicfile"
	"github.com/pathprof/pathprof/internal/runner"
)

// ManifestName is the manifest's file name inside a suite directory.
const ManifestName = "suite.json"

// ManifestVersion is the manifest format this package reads and writes.
const ManifestVersion = 1

// TempMount is the host side of a mount that gets a fresh empty directory
// for every run, so that files one run leaves behind cannot change the
// next run's paths.
const TempMount = "@tmp"

// Suite is a parsed manifest.
//
// The manifest is JSON:
//
//	{
//	  "version": 1,
//	  "go_version": "go1.26.8",
//	  "validation_rule": "...",
//	  "programs": [
//	    {"name": "calc", "wasm": "c/calc.wasm", "stdin": "c/calc.in",
//	     "expect_stdout": "c/calc.expected", "expect_exit_code": 0, "quick": true},
//	    {"name": "lu", "wasm": "kernels/lu.wasm", "expect_stdout": "kernels/lu.expected",
//	     "validation": true},
//	    {"name": "regexp.test", "wasm": "go/go1.26.8/regexp.test.wasm",
//	     "args": ["-test.short"], "env": ["PWD=/usr/local/go/src/regexp"],
//	     "mounts": ["/usr/local/go/src/regexp:/usr/local/go/src/regexp:ro", "@tmp:/tmp"]}
//	  ]
//	}
//
// Relative file names (wasm, stdin, expect_stdout, the host side of a
// mount) are relative to the suite directory.
type Suite struct {
	Version int `json:"version"`
	// GoVersion is the toolchain that built the suite's Go programs.
	GoVersion string `json:"go_version,omitempty"`
	// ValidationRule states which programs are in the validation set
	// (Program.Validation), the third of the suite that no change is tuned
	// on and that pathprof bench reports apart; Prepare writes
	// ValidationRuleText.
	ValidationRule string    `json:"validation_rule,omitempty"`
	Programs       []Program `json:"programs"`

	// Dir is the suite directory; it is not part of the manifest.
	Dir string `json:"-"`
}

// Program is one benchmark program with its fixed input.
type Program struct {
	Name string `json:"name"`
	// Origin says where the program comes from ("testdata/c", "go std",
	// "debian", ...); Prepare replaces only programs it made.
	Origin string `json:"origin,omitempty"`
	// Wasm is the module's file.
	Wasm string `json:"wasm"`
	// Args are argv[1:]; argv[0] is the module's file name.
	Args []string `json:"args,omitempty"`
	// Env entries are KEY=VALUE; nothing else is in the environment.
	Env []string `json:"env,omitempty"`
	// Stdin is a file fed to standard input; empty input without it.
	Stdin string `json:"stdin,omitempty"`
	// Mounts are "HOST:GUEST", "HOST:GUEST:ro" (read-only) or "HOST"
	// (mounted at the same path). HOST may be TempMount.
	Mounts []string `json:"mounts,omitempty"`
	// ExpectStdout is a file holding the exact expected standard output.
	ExpectStdout string `json:"expect_stdout,omitempty"`
	// ExpectExitCode is the expected exit code, if set.
	ExpectExitCode *uint32 `json:"expect_exit_code,omitempty"`
	// Quick puts the program in the --quick subset.
	Quick bool `json:"quick,omitempty"`
	// Validation puts the program in the validation set (Suite.ValidationRule).
	Validation bool `json:"validation,omitempty"`
	// Big marks a program whose module is large enough (tens of megabytes)
	// that compiling and running it takes minutes: pathprof bench runs it
	// only when asked (--big, or by name).
	Big bool `json:"big,omitempty"`
}

// Mount is a parsed mount entry.
type Mount struct {
	Host     string // a directory, or TempMount
	Guest    string
	ReadOnly bool
}

// ParseMount parses a mount entry without looking at the file system.
func ParseMount(s string) (Mount, error) {
	parts := strings.Split(s, ":")
	var m Mount
	switch len(parts) {
	case 1:
		m.Host, m.Guest = parts[0], parts[0]
	case 2:
		m.Host, m.Guest = parts[0], parts[1]
	case 3:
		if parts[2] != "ro" {
			return m, fmt.Errorf("mount %q: the third field may only be \"ro\"", s)
		}
		m.Host, m.Guest, m.ReadOnly = parts[0], parts[1], true
	default:
		return m, fmt.Errorf("mount %q: want HOST:GUEST or HOST:GUEST:ro", s)
	}
	if m.Host == "" {
		return m, fmt.Errorf("mount %q: empty host directory", s)
	}
	if m.Host == TempMount && len(parts) == 1 {
		return m, fmt.Errorf("mount %q: a temporary directory needs a guest path (%s:/tmp)", s, TempMount)
	}
	if !strings.HasPrefix(m.Guest, "/") {
		return m, fmt.Errorf("mount %q: guest path %q is not absolute", s, m.Guest)
	}
	return m, nil
}

// Load reads DIR/suite.json and checks it, including that every file it
// names exists.
func Load(dir string) (*Suite, error) {
	path := filepath.Join(dir, ManifestName)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.Dir = dir
	if err := s.checkFiles(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse decodes and validates a manifest; unknown fields are errors, so
// that a misspelt field is not silently ignored.
func Parse(data []byte) (*Suite, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Suite
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the manifest")
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Validate checks the manifest's structure (not the files it names).
func (s *Suite) Validate() error {
	if s.Version != ManifestVersion {
		return fmt.Errorf("version %d, want %d", s.Version, ManifestVersion)
	}
	if len(s.Programs) == 0 {
		return errors.New("no programs")
	}
	seen := map[string]bool{}
	for i := range s.Programs {
		p := &s.Programs[i]
		if err := p.validate(); err != nil {
			if p.Name == "" {
				return fmt.Errorf("program %d: %w", i, err)
			}
			return fmt.Errorf("program %q: %w", p.Name, err)
		}
		if seen[p.Name] {
			return fmt.Errorf("program %q is listed twice", p.Name)
		}
		seen[p.Name] = true
	}
	return nil
}

func (p *Program) validate() error {
	if p.Name == "" {
		return errors.New("no name")
	}
	if strings.ContainsAny(p.Name, " \t\n|/\\") {
		return errors.New("the name may not hold spaces, '|' or slashes")
	}
	if p.Wasm == "" {
		return errors.New("no wasm file")
	}
	for _, e := range p.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return fmt.Errorf("environment entry %q: want KEY=VALUE", e)
		}
	}
	guests := map[string]bool{}
	for _, ms := range p.Mounts {
		m, err := ParseMount(ms)
		if err != nil {
			return err
		}
		if guests[m.Guest] {
			return fmt.Errorf("guest path %q is mounted twice", m.Guest)
		}
		guests[m.Guest] = true
	}
	return nil
}

// checkFiles checks that the files a loaded suite names exist.
func (s *Suite) checkFiles() error {
	for i := range s.Programs {
		p := &s.Programs[i]
		for _, f := range []struct{ field, name string }{
			{"wasm", p.Wasm}, {"stdin", p.Stdin}, {"expect_stdout", p.ExpectStdout},
		} {
			if f.name == "" {
				continue
			}
			if fi, err := os.Stat(s.Path(f.name)); err != nil {
				return fmt.Errorf("program %q: %s: %w", p.Name, f.field, err)
			} else if fi.IsDir() {
				return fmt.Errorf("program %q: %s %s is a directory", p.Name, f.field, f.name)
			}
		}
		for _, ms := range p.Mounts {
			m, _ := ParseMount(ms)
			if m.Host == TempMount {
				continue
			}
			if fi, err := os.Stat(s.Path(m.Host)); err != nil || !fi.IsDir() {
				return fmt.Errorf("program %q: mount %q: %s is not a directory", p.Name, ms, s.Path(m.Host))
			}
		}
	}
	return nil
}

// Path resolves a file name of the manifest against the suite directory.
func (s *Suite) Path(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(s.Dir, filepath.FromSlash(name))
}

// Program returns the program called name.
func (s *Suite) Program(name string) (*Program, bool) {
	for i := range s.Programs {
		if s.Programs[i].Name == name {
			return &s.Programs[i], true
		}
	}
	return nil, false
}

// Write writes the manifest to s.Dir/suite.json, through a temporary file
// so that an interrupted write leaves the old manifest.
func (s *Suite) Write() error {
	if err := s.Validate(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(s.Dir, ManifestName), append(data, '\n'))
}

// runConfig is the run-time configuration of one run of p. The caller
// must call cleanup after the run: it removes the run's fresh temporary
// directories.
func (s *Suite) runConfig(p *Program) (cfg runner.Config, cleanup func(), err error) {
	cfg = runner.Config{
		ProgramName: filepath.Base(p.Wasm),
		Args:        p.Args,
		Env:         p.Env,
		Stdin:       bytes.NewReader(nil),
	}
	if p.Stdin != "" {
		b, err := os.ReadFile(s.Path(p.Stdin))
		if err != nil {
			return cfg, func() {}, err
		}
		cfg.Stdin = bytes.NewReader(b)
	}
	cfg.Dirs, cleanup, err = s.Mounts(p)
	return cfg, cleanup, err
}

// Mounts are p's mounts for one run, with a fresh directory for each
// TempMount; cleanup removes those.
func (s *Suite) Mounts(p *Program) (dirs []runner.Mount, cleanup func(), err error) {
	var temps []string
	cleanup = func() {
		for _, d := range temps {
			os.RemoveAll(d)
		}
	}
	defer func() {
		if err != nil {
			cleanup()
		}
	}()
	for _, ms := range p.Mounts {
		m, err := ParseMount(ms)
		if err != nil {
			return nil, cleanup, err
		}
		host := m.Host
		if host == TempMount {
			host, err = os.MkdirTemp("", "pathprof-bench-")
			if err != nil {
				return nil, cleanup, err
			}
			temps = append(temps, host)
		} else {
			host = s.Path(host)
		}
		dirs = append(dirs, runner.Mount{HostDir: host, GuestPath: m.Guest, ReadOnly: m.ReadOnly})
	}
	return dirs, cleanup, nil
}

// writeFileAtomic writes data to path, making path's directory first.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data, 0o644)
}
