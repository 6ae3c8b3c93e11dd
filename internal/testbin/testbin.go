// Package testbin speaks the protocols of test binaries: it tells Go,
// Rust libtest and GoogleTest binaries apart, asks one for its tests and
// gives the arguments that run one test alone, so that each test can be
// profiled as a run of its own.
package testbin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/pathprof/pathprof/internal/runner"
)

// Protocol is how a test binary lists and runs its tests.
type Protocol string

const (
	// Go is a Go test binary (go test -c): -test.list, -test.run.
	Go Protocol = "go"
	// Rust is a Rust libtest harness (rustc --test): --list, --exact.
	Rust Protocol = "rust"
	// GTest is a GoogleTest binary: --gtest_list_tests, --gtest_filter.
	GTest Protocol = "gtest"
)

// Protocols are the protocols known, in the order Detect tries them.
var Protocols = []Protocol{GTest, Go, Rust}

// ParseProtocol reads a protocol's name.
func ParseProtocol(s string) (Protocol, error) {
	for _, p := range Protocols {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown test protocol %q (want go, rust or gtest)", s)
}

// markers are strings each kind of binary holds in its data whether or
// not it keeps its names: its harness's own flag names and help text.
var markers = map[Protocol][]string{
	GTest: {"gtest_list_tests"},
	Go:    {"test.paniconexit0"},
	Rust:  {"Exactly match filters rather than by substring"},
}

// Detect says which protocol the module's harness speaks, from strings
// its harness keeps in the module.
func Detect(module []byte) (Protocol, error) {
	for _, p := range Protocols {
		for _, m := range markers[p] {
			if bytes.Contains(module, []byte(m)) {
				return p, nil
			}
		}
	}
	return "", errors.New("not a test binary pathprof knows (Go, Rust libtest, GoogleTest); --protocol says which it is")
}

// ListArgs are the arguments that make a binary of protocol p list its
// tests on standard output without running them.
func ListArgs(p Protocol) []string {
	switch p {
	case Go:
		return []string{"-test.list", "."}
	case Rust:
		return []string{"--list", "--format", "terse"}
	case GTest:
		return []string{"--gtest_list_tests"}
	}
	return nil
}

// RunArgs are the arguments that run the test name alone.
func RunArgs(p Protocol, name string) []string {
	switch p {
	case Go:
		return []string{"-test.run", "^" + regexp.QuoteMeta(name) + "$"}
	case Rust:
		return []string{"--exact", name}
	case GTest:
		return []string{"--gtest_filter=" + name}
	}
	return nil
}

// maxTests bounds what a listing may name, so that a binary that prints
// without end cannot exhaust memory.
const maxTests = 1 << 20

// ParseList reads the listing a binary of protocol p printed: the tests
// it can run one at a time, in its order. Go's benchmarks, which
// -test.run does not run, and libtest's benchmarks are left out.
func ParseList(p Protocol, out []byte) ([]string, error) {
	var tests []string
	seen := map[string]bool{}
	add := func(name string) error {
		if len(tests) == maxTests {
			return fmt.Errorf("more than %d tests", maxTests)
		}
		if !seen[name] {
			seen[name] = true
			tests = append(tests, name)
		}
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	suite := ""
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		switch p {
		case Go:
			// Names, one a line: tests, examples, fuzz targets and
			// benchmarks; after them the harness may say "ok".
			name := strings.TrimSpace(line)
			if strings.ContainsAny(name, " \t") || !isGoTestName(name) {
				continue
			}
			if strings.HasPrefix(name, "Benchmark") {
				continue
			}
			if err := add(name); err != nil {
				return nil, err
			}
		case Rust:
			// "NAME: test" or "NAME: bench"; the terse format adds no
			// summary, the pretty one a count after a blank line.
			name, kind, ok := strings.Cut(line, ": ")
			if !ok || name == "" || strings.Contains(kind, " ") {
				continue
			}
			if kind == "test" {
				if err := add(name); err != nil {
					return nil, err
				}
			}
		case GTest:
			// "Suite." then "  Test" lines, either maybe followed by
			// "  # TypeParam = ..." or "  # GetParam() = ...". What
			// else a main prints ("Running main() from ...") is no
			// suite, and ends the one before.
			if i := strings.Index(line, "#"); i >= 0 {
				line = strings.TrimRight(line[:i], " ")
			}
			if !strings.HasPrefix(line, " ") {
				suite = ""
				if strings.HasSuffix(line, ".") && !strings.Contains(line, " ") {
					suite = line
				}
				continue
			}
			name := strings.TrimSpace(line)
			if suite == "" || name == "" || strings.Contains(name, " ") {
				continue
			}
			if err := add(suite + name); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unknown test protocol %q", p)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return tests, nil
}

// isGoTestName reports whether name is what the testing package lists:
// a function name starting with Test, Example, Fuzz or Benchmark.
func isGoTestName(name string) bool {
	for _, pre := range []string{"Test", "Example", "Fuzz", "Benchmark"} {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	return false
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// List runs the module, uninstrumented, with the listing arguments of
// protocol p added to cfg's and returns its tests. cfg gives the rest of
// the input: the environment and mounts the tests run with, since a Go
// TestMain runs before listing too.
func List(ctx context.Context, module []byte, p Protocol, cfg runner.Config) ([]string, error) {
	var stdout, stderr bytes.Buffer
	cfg.Args = append(append([]string{}, cfg.Args...), ListArgs(p)...)
	cfg.Stdout, cfg.Stderr, cfg.Stdin = &limited{&stdout}, &limited{&stderr}, nil
	res, err := runner.Run(ctx, module, cfg)
	if err == nil && res.Trap != nil {
		err = res.Trap
	}
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit code %d", res.ExitCode)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		if msg != "" {
			err = fmt.Errorf("%w (%s)", err, clip(msg))
		}
		return nil, fmt.Errorf("listing the tests (%s): %w", strings.Join(cfg.Args, " "), err)
	}
	tests, err := ParseList(p, stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("listing the tests: %w", err)
	}
	return tests, nil
}

// limited keeps the first 64 MB written to it and drops the rest.
type limited struct{ b *bytes.Buffer }

func (l *limited) Write(p []byte) (int, error) {
	if room := 64<<20 - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
