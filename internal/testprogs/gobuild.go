package testprogs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pathprof/pathprof/internal/gobuild"
)

// BuildOptions selects what BuildGo builds.
type BuildOptions struct {
	// Test builds the package's test binary (go test -c) instead of the
	// package itself (go build).
	Test bool
	// Flags are extra build flags, such as "-trimpath" or "-gcflags=-N -l".
	Flags []string
}

// BuildGo builds the Go package pkg for GOOS=wasip1 GOARCH=wasm and returns
// the path of the module, which the caller must not modify.
//
// pkg is an import path ("regexp", "cmd/gofmt", "github.com/pathprof/pathprof/testdata/go/hello")
// or a directory; a relative directory must start with "./" or "../" and is
// taken relative to the current directory, as the go command would.
//
// Results are cached across processes under CacheDir. Standard-library
// builds are keyed by the Go toolchain; other builds also by the contents
// of every main-module package they depend on and the versions of the
// others, so an edit to a test program is picked up.
func BuildGo(t testing.TB, pkg string, opts BuildOptions) string {
	t.Helper()
	if strings.HasPrefix(pkg, "./") || strings.HasPrefix(pkg, "../") || pkg == "." || pkg == ".." {
		abs, err := filepath.Abs(pkg)
		if err != nil {
			t.Fatal(err)
		}
		pkg = abs
	}
	// Anything that can end the test runs before once.Do: a Goexit inside
	// it would mark the build done with neither a result nor an error.
	e := env(t)
	dir := filepath.Join(CacheDir(t), "go")
	key := pkg + "\x00" + fmt.Sprint(opts.Test) + "\x00" + strings.Join(opts.Flags, "\x00")
	v, _ := builds.LoadOrStore(key, &build{})
	b := v.(*build)
	b.once.Do(func() { b.path, b.err = buildGo(t, e, dir, pkg, opts) })
	if b.err != nil {
		t.Fatalf("build %s for wasip1: %v", pkg, b.err)
	}
	return b.path
}

// GoStdTest returns the test binary of the standard-library package pkg.
// Its tests look for testdata relative to the package's source directory,
// so run it with that directory (StdPackageDir) mounted at its host path,
// PWD set to it, and a writable /tmp for tests that create files.
func GoStdTest(t testing.TB, pkg string) string {
	t.Helper()
	return BuildGo(t, pkg, BuildOptions{Test: true})
}

// Gofmt returns gofmt built for wasip1.
func Gofmt(t testing.TB) string {
	t.Helper()
	return BuildGo(t, "cmd/gofmt", BuildOptions{})
}

// GoHello returns testdata/go/hello built for wasip1.
func GoHello(t testing.TB) string {
	t.Helper()
	return BuildGo(t, filepath.Join(ModuleRoot(t), "testdata", "go", "hello"), BuildOptions{})
}

// GoHelloStableOutput returns what GoHello prints before its "entropy:"
// lines, which print values a Go program normally gets from the host and
// so are only fixed under a deterministic runtime.
func GoHelloStableOutput(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ModuleRoot(t), "testdata", "go", "hello", "expected.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// LargestModule returns the largest module the tests use: the test binary
// of encoding/json, about 16 MB with some 10,000 functions.
func LargestModule(t testing.TB) string {
	t.Helper()
	return GoStdTest(t, "encoding/json")
}

// StdPackageDir returns the source directory of a standard-library package.
func StdPackageDir(t testing.TB, pkg string) string {
	t.Helper()
	return filepath.Join(env(t).GOROOT, "src", filepath.FromSlash(pkg))
}

// ModuleRoot returns the root directory of the pathprof module.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	return filepath.Dir(env(t).GOMOD)
}

// CacheDir returns the directory shared by all test processes for built
// programs; $PATHPROF_TESTPROGS_CACHE overrides the default under the
// user cache directory. Deleting it is always safe.
func CacheDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("PATHPROF_TESTPROGS_CACHE")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		dir = filepath.Join(base, "pathprof-testprogs")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// WazeroCacheDir returns a directory for wazero's compilation cache, so
// that tests running large modules compile each only once per machine.
func WazeroCacheDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(CacheDir(t), "wazero")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

type build struct {
	once sync.Once
	path string
	err  error
}

// builds deduplicates builds within a process; parallel tests asking for
// the same program wait for one build.
var builds sync.Map

func buildGo(t testing.TB, e *goEnv, dir, pkg string, opts BuildOptions) (string, error) {
	key, err := cacheKey(e, pkg, opts)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// The name is for people looking at the cache; the key makes it unique.
	name := strings.ReplaceAll(pkg, "/", "_")
	if filepath.IsAbs(pkg) {
		name = filepath.Base(pkg)
	}
	if opts.Test {
		name += ".test"
	}
	path := filepath.Join(dir, name+"-"+key[:16]+".wasm")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}

	start := time.Now()
	if err := gobuild.Build(e.goTool, filepath.Dir(e.GOMOD), path, pkg, opts.Test, opts.Flags...); err != nil {
		return "", err
	}
	if fi, err := os.Stat(path); err == nil {
		t.Logf("built %s for wasip1 in %v: %.1f MB", name, time.Since(start).Round(10*time.Millisecond), float64(fi.Size())/1e6)
	}
	return path, nil
}

// cacheKey identifies everything the build output depends on.
func cacheKey(e *goEnv, pkg string, opts BuildOptions) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "v1\x00%s\x00%s\x00%s\x00%s\x00%v\x00%q\x00%s\x00",
		e.GOVERSION, e.GOROOT, e.GOFLAGS, e.GOWASM, opts.Test, opts.Flags, pkg)
	if !isStd(e, pkg) {
		if err := hashDeps(h, e, pkg, opts.Test); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// isStd reports whether pkg is in the standard library (or cmd), whose
// sources are fixed for a given toolchain. Like the go command it treats
// paths whose first element lacks a dot as standard, except the main
// module's own.
func isStd(e *goEnv, pkg string) bool {
	if filepath.IsAbs(pkg) {
		return false
	}
	first, _, _ := strings.Cut(pkg, "/")
	return !strings.Contains(first, ".") && first != e.modulePath
}

type listedPackage struct {
	ImportPath string
	Dir        string
	Standard   bool
	Module     *struct {
		Path    string
		Version string
		Main    bool
	}
	GoFiles, CgoFiles, EmbedFiles, TestGoFiles, XTestGoFiles []string
}

// hashDeps adds to h the dependencies of pkg outside the standard library:
// file contents for main-module packages, module versions for the rest.
func hashDeps(h io.Writer, e *goEnv, pkg string, test bool) error {
	args := []string{"list", "-deps", "-json=ImportPath,Dir,Standard,Module,GoFiles,CgoFiles,EmbedFiles,TestGoFiles,XTestGoFiles"}
	if test {
		args = append(args, "-test")
	}
	out, err := goCmd(e, append(args, pkg)...)
	if err != nil {
		return err
	}
	gomod, err := os.ReadFile(e.GOMOD)
	if err != nil {
		return err
	}
	fmt.Fprintf(h, "go.mod\x00%s\x00", gomod)
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("go list: %w", err)
		}
		if p.Standard {
			continue
		}
		fmt.Fprintf(h, "pkg\x00%s\x00", p.ImportPath)
		if p.Module != nil && !p.Module.Main {
			fmt.Fprintf(h, "%s@%s\x00", p.Module.Path, p.Module.Version)
			continue
		}
		files := slices.Concat(p.GoFiles, p.CgoFiles, p.EmbedFiles, p.TestGoFiles, p.XTestGoFiles)
		slices.Sort(files)
		for _, f := range slices.Compact(files) {
			data, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s\x00%d\x00", f, len(data))
			h.Write(data)
		}
	}
}

type goEnv struct {
	GOVERSION, GOROOT, GOMOD, GOFLAGS, GOWASM string
	modulePath                                string
	goTool                                    string
}

var (
	envOnce   sync.Once
	envResult *goEnv
	envErr    error
)

// env queries the go command once per process.
func env(t testing.TB) *goEnv {
	t.Helper()
	envOnce.Do(func() { envResult, envErr = loadEnv() })
	if envErr != nil {
		t.Fatal(envErr)
	}
	return envResult
}

func loadEnv() (*goEnv, error) {
	tool, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("the go command is needed to build test programs: %w", err)
	}
	e := &goEnv{goTool: tool}
	out, err := gobuild.Cmd(e.goTool, "", "env", "-json", "GOVERSION", "GOROOT", "GOMOD", "GOFLAGS", "GOWASM")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(out, e); err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	if e.GOMOD == "" || e.GOMOD == os.DevNull {
		return nil, errors.New("not inside the pathprof module: go env GOMOD is empty")
	}
	out, err = gobuild.Cmd(e.goTool, filepath.Dir(e.GOMOD), "list", "-m", "-f", "{{.Path}}")
	if err != nil {
		return nil, err
	}
	e.modulePath = strings.TrimSpace(string(out))
	return e, nil
}

// goCmd runs the go command in the module root for wasip1 and returns its
// standard output.
func goCmd(e *goEnv, args ...string) ([]byte, error) {
	return gobuild.Cmd(e.goTool, filepath.Dir(e.GOMOD), args...)
}
