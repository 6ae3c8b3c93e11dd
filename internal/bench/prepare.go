package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pathprof/pathprof/internal/gobuild"
	"github.com/pathprof/pathprof/internal/proglist"
)

// PrepareOptions configure Prepare.
type PrepareOptions struct {
	// Source is the root of the pathprof source tree, which holds the C
	// programs (testdata/c) and the Go program (testdata/go/hello). By
	// default it is found by walking up from the current directory.
	Source string
	// Go is the go command; default "go" from $PATH.
	Go string
	// Progress receives a line per step; nil for none.
	Progress io.Writer
	// Debian also builds the C programs from Debian source packages with
	// bench/debian/build.sh, which needs APT, clang-14 for wasm32-wasi and
	// the network (or installs them as root). Without it, Debian programs
	// of an earlier preparation are kept as they are.
	Debian bool
	// Shell runs the build script; default "bash".
	Shell string
	// Big also fetches the large prebuilt programs (npm.go) with npm, at
	// pinned versions checked against their digests, and, with Debian,
	// builds the big Debian programs of bench/debian-big, each on its own:
	// one that fails is left out and reported by a PartialError.
	// Without it, big programs of an earlier preparation are kept as they
	// are.
	Big bool
	// NPM is the npm command; default "npm" from $PATH.
	NPM string
}

// Origins of the programs Prepare makes. Programs of other origins in an
// existing manifest are kept as they are.
const (
	OriginC       = "testdata/c"
	OriginGo      = "testdata/go"
	OriginGoStd   = "go std"
	OriginGoTools = "go cmd"
	OriginDebian  = "debian"
	OriginKernels = "bench/kernels"
	OriginNPM     = "npm"
	// OriginDebianBig is the big Debian programs (DebianBigDir), built
	// with --big unless --no-debian.
	OriginDebianBig = "debian-big"
)

// KernelsDir holds the kernels, relative to the source tree.
const KernelsDir = "bench/kernels"

// ValidationRuleText is the rule that fixes the validation set, as the
// manifest states it (Suite.ValidationRule).
const ValidationRuleText = "fixed when the programs were added, before any measurement: " +
	"the kernels that bench/kernels/programs.txt marks valid and the big programs (prebuilt or Debian) other than yosys; " +
	"not the programs of testdata/c, Go and the small Debian ones, which earlier changes were tuned on, " +
	"nor the kernel shapes (filter, apsp, fft, bsearch) and the 30 MB module (yosys) that changes target"

// stdTests are the standard-library packages whose test binaries are in
// the suite, with the name of the binary.
var stdTests = []struct{ pkg, name string }{
	{"regexp", "regexp.test"},
	{"sort", "sort.test"},
	{"strconv", "strconv.test"},
	{"compress/flate", "flate.test"},
	{"encoding/json", "json.test"},
}

// gofmtDirs are the parts of GOROOT/src that gofmt -l reads: well-formed
// Go only, so that it prints nothing and exits 0 (other directories hold
// testdata that is broken on purpose).
var gofmtDirs = []string{"go/ast", "go/printer", "strings", "fmt"}

// quick is the --quick subset: small C programs and the short Go runs,
// chosen to finish well inside five minutes on two cores.
var quick = map[string]bool{
	"calc": true, "vm": true, "sort": true, "wordfreq": true,
	"hello": true, "gofmt": true, "sort.test": true, "strconv.test": true,
}

// DefaultDir is the default suite directory.
func DefaultDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "pathprof", "bench-suite")
}

// Prepare makes or refreshes the suite in dir: it copies the committed C
// programs, builds the Go programs for wasip1 (kept under go/GOVERSION,
// so a second Prepare with the same toolchain builds nothing), and writes
// the manifest. With opt.Debian it also builds the Debian C programs,
// kept under debian/HASH where HASH covers bench/debian (the build script,
// its stubs and the Lua scripts), so they too are built once. Programs of
// the existing manifest that Prepare did not make are kept, after its own.
// A big Debian program that fails to build is left out: Prepare still
// writes the suite and returns it with a *PartialError.
func Prepare(dir string, opt PrepareOptions) (*Suite, error) {
	if opt.Go == "" {
		opt.Go = "go"
	}
	if opt.Source == "" {
		src, err := FindSource(".")
		if err != nil {
			return nil, err
		}
		opt.Source = src
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	progress := func(format string, args ...any) {
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "bench: "+format+"\n", args...)
		}
	}
	env, err := goEnv(opt.Go, opt.Source)
	if err != nil {
		return nil, err
	}
	s := &Suite{Version: ManifestVersion, GoVersion: env.GOVERSION, ValidationRule: ValidationRuleText, Dir: dir}

	cprogs, err := prepareC(dir, filepath.Join(opt.Source, "testdata", "c"))
	if err != nil {
		return nil, err
	}
	progress("copied %d C programs from %s", len(cprogs), filepath.Join(opt.Source, "testdata", "c"))
	s.Programs = append(s.Programs, cprogs...)
	kdir := filepath.Join(opt.Source, filepath.FromSlash(KernelsDir))
	kprogs, err := prepareKernels(dir, kdir)
	if err != nil {
		return nil, err
	}
	progress("copied %d kernels from %s", len(kprogs), kdir)

	gdir := filepath.Join("go", env.GOVERSION)
	build := func(name, pkg string, test bool, srcDir string) (string, error) {
		rel := filepath.ToSlash(filepath.Join(gdir, name+".wasm"))
		if srcDir != "" {
			// A program from the source tree changes with it, so its
			// sources are part of the cache key.
			h, err := hashDir(srcDir)
			if err != nil {
				return "", err
			}
			rel = filepath.ToSlash(filepath.Join(gdir, name+"-"+h[:12]+".wasm"))
		}
		out := s.Path(rel)
		if _, err := os.Stat(out); err == nil {
			return rel, nil
		}
		start := time.Now()
		progress("building %s for wasip1", name)
		if err := gobuild.Build(opt.Go, opt.Source, out, pkg, test); err != nil {
			return "", err
		}
		progress("built %s in %.1fs", name, time.Since(start).Seconds())
		return rel, nil
	}

	hello := filepath.Join(opt.Source, "testdata", "go", "hello")
	rel, err := build("hello", hello, false, hello)
	if err != nil {
		return nil, err
	}
	s.Programs = append(s.Programs, Program{Name: "hello", Origin: OriginGo, Wasm: rel, ExpectExitCode: u32(0)})

	rel, err = build("gofmt", "cmd/gofmt", false, "")
	if err != nil {
		return nil, err
	}
	empty := filepath.ToSlash(filepath.Join(gdir, "empty.txt"))
	if err := writeIfChanged(s.Path(empty), nil); err != nil {
		return nil, err
	}
	gofmt := Program{Name: "gofmt", Origin: OriginGoTools, Wasm: rel, Args: []string{"-l"},
		ExpectStdout: empty, ExpectExitCode: u32(0)}
	for _, d := range gofmtDirs {
		host := filepath.Join(env.GOROOT, "src", filepath.FromSlash(d))
		guest := "/goroot/src/" + d
		gofmt.Args = append(gofmt.Args, guest)
		gofmt.Mounts = append(gofmt.Mounts, host+":"+guest+":ro")
	}
	s.Programs = append(s.Programs, gofmt)

	pass := filepath.ToSlash(filepath.Join(gdir, "pass.txt"))
	if err := writeIfChanged(s.Path(pass), []byte("PASS\n")); err != nil {
		return nil, err
	}
	for _, t := range stdTests {
		rel, err := build(t.name, t.pkg, true, "")
		if err != nil {
			return nil, err
		}
		// The tests read testdata relative to their package directory
		// (compress/flate also ../../testdata), so GOROOT/src is mounted
		// where it is on the host, the package directory is the working
		// directory, and some tests write files under /tmp.
		srcDir := filepath.Join(env.GOROOT, "src")
		pkgDir := filepath.Join(srcDir, filepath.FromSlash(t.pkg))
		s.Programs = append(s.Programs, Program{
			Name: t.name, Origin: OriginGoStd, Wasm: rel,
			Args:           []string{"-test.short"},
			Env:            []string{"PWD=" + pkgDir},
			Mounts:         []string{srcDir + ":" + srcDir + ":ro", TempMount + ":/tmp"},
			ExpectStdout:   pass,
			ExpectExitCode: u32(0),
		})
	}
	for i := range s.Programs {
		s.Programs[i].Quick = quick[s.Programs[i].Name]
	}
	// After the Go programs, so that the rows of earlier reports keep
	// their order.
	s.Programs = append(s.Programs, kprogs...)
	var bigFailed error
	if opt.Debian {
		progs, err := prepareDebian(dir, opt, progress)
		if err != nil {
			return nil, err
		}
		s.Programs = append(s.Programs, progs...)
	}
	if opt.Big {
		progs, err := prepareNPM(dir, opt, progress)
		if err != nil {
			return nil, err
		}
		s.Programs = append(s.Programs, progs...)
		if opt.Debian {
			progs, err := prepareDebianBig(dir, opt, progress)
			s.Programs = append(s.Programs, progs...)
			if err != nil {
				bigFailed = err
			}
		}
	}

	// Programs added to the manifest by hand or by later preparation
	// steps (other origins) survive a refresh.
	if old, err := os.ReadFile(filepath.Join(dir, ManifestName)); err == nil {
		prev, err := Parse(old)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestName), err)
		}
		for _, p := range prev.Programs {
			if mine(p.Origin) || opt.Debian && p.Origin == OriginDebian || opt.Big && p.Origin == OriginNPM ||
				opt.Big && opt.Debian && p.Origin == OriginDebianBig {
				continue
			}
			if _, dup := s.Program(p.Name); dup {
				return nil, fmt.Errorf("%s: program %q (origin %q) has the name of a prepared program", ManifestName, p.Name, p.Origin)
			}
			s.Programs = append(s.Programs, p)
		}
	}
	if err := s.Write(); err != nil {
		return nil, err
	}
	if err := s.checkFiles(); err != nil {
		return nil, err
	}
	progress("suite %s: %d programs", dir, len(s.Programs))
	if bigFailed != nil {
		return s, &PartialError{Err: bigFailed}
	}
	return s, nil
}

// PartialError is Prepare's error when big Debian programs failed to
// build: the suite was written without them, and is returned beside it.
type PartialError struct{ Err error }

func (e *PartialError) Error() string {
	return fmt.Sprintf("the suite was prepared without what failed to build: %v", e.Err)
}

func (e *PartialError) Unwrap() error { return e.Err }

func mine(origin string) bool {
	switch origin {
	case OriginC, OriginKernels, OriginGo, OriginGoStd, OriginGoTools:
		return true
	}
	return false
}

func u32(v uint32) *uint32 { return &v }

// FindSource returns the root of the pathprof source tree that holds dir.
func FindSource(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			first, _, _ := bytes.Cut(data, []byte("\n"))
			if strings.TrimSpace(string(first)) == "module github.com/pathprof/pathprof" {
				return d, nil
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("%s is not inside the pathprof source tree, which holds the suite's C and Go programs (testdata/); run from inside it or name it", dir)
		}
		d = parent
	}
}

// prepareC copies the committed C programs and their inputs and expected
// outputs into dir/c, as listed in src/programs.txt
// (NAME SOURCE OPT STDIN [ARGS...]).
func prepareC(dir, src string) ([]Program, error) {
	list, err := proglist.ReadC(src)
	if err != nil {
		return nil, err
	}
	var progs []Program
	for _, c := range list {
		p := Program{Name: c.Name, Origin: OriginC, Wasm: "c/" + c.Name + ".wasm", Args: c.Args,
			ExpectStdout: "c/" + c.Name + ".expected", ExpectExitCode: u32(c.ExitCode)}
		files := []string{c.Name + ".wasm", c.Name + ".expected"}
		if c.Stdin != "" {
			p.Stdin = "c/" + c.Stdin
			files = append(files, c.Stdin)
		}
		if err := copyFiles(src, filepath.Join(dir, "c"), files...); err != nil {
			return nil, err
		}
		progs = append(progs, p)
	}
	return progs, nil
}

// prepareKernels copies the committed kernels and their expected outputs
// into dir/kernels, as listed in src/programs.txt (NAME SET SMALL). The
// benchmark runs them at their default sizes, without arguments.
func prepareKernels(dir, src string) ([]Program, error) {
	list, err := proglist.ReadKernels(src)
	if err != nil {
		return nil, err
	}
	var progs []Program
	for _, k := range list {
		if err := copyFiles(src, filepath.Join(dir, "kernels"), k.Name+".wasm", k.Name+".expected"); err != nil {
			return nil, err
		}
		progs = append(progs, Program{Name: k.Name, Origin: OriginKernels, Wasm: "kernels/" + k.Name + ".wasm",
			ExpectStdout: "kernels/" + k.Name + ".expected", ExpectExitCode: u32(0), Validation: k.Validation})
	}
	return progs, nil
}

// copyFiles copies the named files from src to dst, leaving alone those
// that are already the same.
func copyFiles(src, dst string, names ...string) error {
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return err
		}
		if err := writeIfChanged(filepath.Join(dst, name), b); err != nil {
			return err
		}
	}
	return nil
}

func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	return writeFileAtomic(path, data)
}

type goEnvVars struct {
	GOVERSION, GOROOT string
}

func goEnv(goCmd, dir string) (*goEnvVars, error) {
	out, err := gobuild.Cmd(goCmd, dir, "env", "-json", "GOVERSION", "GOROOT")
	if err != nil {
		return nil, err
	}
	var e goEnvVars
	if err := json.Unmarshal(out, &e); err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	if e.GOVERSION == "" || e.GOROOT == "" {
		return nil, errors.New("go env printed no GOVERSION or GOROOT")
	}
	return &e, nil
}

// hashDir hashes the names and contents of the regular files directly in
// dir.
func hashDir(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
