package testprogs

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The kinds of SpecModule, named after the spec test commands that
// reference the modules.
const (
	SpecKindModule         = "module"                // valid; instantiates
	SpecKindInvalid        = "assert_invalid"        // decodes, fails validation
	SpecKindMalformed      = "assert_malformed"      // fails decoding
	SpecKindUnlinkable     = "assert_unlinkable"     // valid; its imports cannot be satisfied
	SpecKindUninstantiable = "assert_uninstantiable" // valid; traps while instantiating
)

// SpecModule is one binary module of the WebAssembly spec test suite as
// converted by wast2json and shipped in wazero's module.
type SpecModule struct {
	// Feature is the wazero folder the module comes from: "v1", "v2",
	// "threads", "tail-call", "extended-const", "exception-handling" or
	// "typed-function-references". The folder's proposal must be enabled
	// to decode or validate the module.
	Feature string
	// Kind is one of the SpecKind constants.
	Kind string
	// Path is the .wasm file.
	Path string
	// Source is the wast2json output that references the module, and Line
	// the line of the command in the original .wast file.
	Source string
	Line   int
	// Text is the expected error for the assert_ kinds, for example
	// "type mismatch"; engines word their errors differently, so it is a
	// hint rather than something to match exactly.
	Text string
}

// SpecTestDir returns wazero's internal/integration_test/spectest directory
// in the module cache, downloading the module if needed.
func SpecTestDir(t testing.TB) string {
	t.Helper()
	e := env(t)
	specDirOnce.Do(func() { specDir, specDirErr = findSpecTestDir(e) })
	if specDirErr != nil {
		t.Fatal(specDirErr)
	}
	return specDir
}

var (
	specDirOnce sync.Once
	specDir     string
	specDirErr  error

	specModulesOnce sync.Once
	specModules     []SpecModule
	specModulesErr  error
)

const wazeroModule = "github.com/tetratelabs/wazero"

func findSpecTestDir(e *goEnv) (string, error) {
	out, err := goCmd(e, "list", "-m", "-f", "{{.Dir}}", wazeroModule)
	if err != nil {
		return "", err
	}
	root := strings.TrimSpace(string(out))
	if root == "" {
		// go list -m reports no Dir for a module not yet in the cache.
		out, err := goCmd(e, "mod", "download", "-json", wazeroModule)
		if err != nil {
			return "", err
		}
		var m struct{ Dir string }
		if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
			return "", fmt.Errorf("go mod download %s: no directory in %q", wazeroModule, out)
		}
		root = m.Dir
	}
	dir := filepath.Join(root, "internal", "integration_test", "spectest")
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("wazero's spec tests are not where expected: %w", err)
	}
	return dir, nil
}

// SpecModules returns every binary module referenced by the spec tests of
// every feature folder of SpecTestDir, in a fixed order. Text modules
// (.wat, used by some assert_malformed commands) are left out.
func SpecModules(t testing.TB) []SpecModule {
	t.Helper()
	dir := SpecTestDir(t)
	specModulesOnce.Do(func() { specModules, specModulesErr = loadSpecModules(dir) })
	if specModulesErr != nil {
		t.Fatal(specModulesErr)
	}
	return slices.Clone(specModules)
}

func loadSpecModules(dir string) ([]SpecModule, error) {
	// Both layouts have been used by wazero: FEATURE/testdata/*.json and
	// FEATURE/*.json.
	var files []string
	for _, pattern := range []string{"*/testdata/*.json", "*/*.json"} {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	slices.Sort(files)

	var mods []SpecModule
	for _, f := range files {
		rel, err := filepath.Rel(dir, f)
		if err != nil {
			return nil, err
		}
		feature, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		ms, err := parseSpecJSON(f, feature)
		if err != nil {
			return nil, err
		}
		mods = append(mods, ms...)
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("no spec test modules under %s", dir)
	}
	return mods, nil
}

func parseSpecJSON(file, feature string) ([]SpecModule, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var spec struct {
		Commands []struct {
			Type       string `json:"type"`
			Line       int    `json:"line"`
			Filename   string `json:"filename"`
			ModuleType string `json:"module_type"`
			Text       string `json:"text"`
		} `json:"commands"`
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var mods []SpecModule
	for _, c := range spec.Commands {
		// Commands such as assert_return carry no module; "module" has
		// no module_type in older wast2json output, meaning binary.
		if c.Filename == "" || (c.ModuleType != "" && c.ModuleType != "binary") {
			continue
		}
		switch c.Type {
		case SpecKindModule, SpecKindInvalid, SpecKindMalformed, SpecKindUnlinkable, SpecKindUninstantiable:
		default:
			return nil, fmt.Errorf("%s:%d: unknown command %q with a module", file, c.Line, c.Type)
		}
		path := filepath.Join(filepath.Dir(file), c.Filename)
		if _, err := os.Stat(path); err != nil {
			return nil, errors.Join(fmt.Errorf("%s:%d: missing module", file, c.Line), err)
		}
		mods = append(mods, SpecModule{
			Feature: feature,
			Kind:    c.Type,
			Path:    path,
			Source:  file,
			Line:    c.Line,
			Text:    c.Text,
		})
	}
	return mods, nil
}
