package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pathprof/pathprof/internal/proglist"
)

// DebianScript is the build script of the Debian programs, relative to
// the source tree.
const DebianScript = "bench/debian/build.sh"

// DebianBigDir holds the builds of the big Debian programs, relative to
// the source tree: each subdirectory with a build.sh is one build, whose
// directory also holds its list, programs.txt, which the script copies
// into its output with the files it names. Each is built, cached and may
// fail on its own, so that one program that does not build on a machine
// leaves the others in the suite.
const DebianBigDir = "bench/debian-big"

// debianBuild is a build script and where Prepare keeps what it builds.
type debianBuild struct {
	script string // relative to the source tree
	sub    string // the directory under the suite that holds the builds
	what   string // what the script builds, for progress lines
	skip   string // the flag that prepares the suite without them
	parse  func(data []byte, rel string) ([]Program, error)
}

var (
	debianSmall = debianBuild{script: DebianScript, sub: "debian", what: "the Debian programs",
		skip: "--no-debian", parse: parseDebianList}
)

// debianBigBuilds lists the builds of DebianBigDir in the source tree src,
// in the order of their names.
func debianBigBuilds(src string) ([]debianBuild, error) {
	ents, err := os.ReadDir(filepath.Join(src, filepath.FromSlash(DebianBigDir)))
	if err != nil {
		return nil, err
	}
	var builds []debianBuild
	for _, e := range ents {
		script := path.Join(DebianBigDir, e.Name(), "build.sh")
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(src, filepath.FromSlash(script))); err != nil {
			continue
		}
		builds = append(builds, debianBuild{script: script, sub: "debian-big/" + e.Name(),
			what: "the big Debian program " + e.Name(), skip: "--no-debian or without --big", parse: parseDebianBigList})
	}
	if len(builds) == 0 {
		return nil, fmt.Errorf("%s holds no build (DIR/build.sh)", DebianBigDir)
	}
	return builds, nil
}

// prepareDebian builds the Debian C programs with bench/debian/build.sh
// into dir/debian/HASH, unless an earlier preparation did, and returns
// their manifest entries.
func prepareDebian(dir string, opt PrepareOptions, progress func(string, ...any)) ([]Program, error) {
	return prepareBuild(debianSmall, dir, opt, progress)
}

// prepareDebianBig builds the big Debian programs, each build of
// DebianBigDir into dir/debian-big/NAME/HASH unless an earlier preparation
// did, and returns the manifest entries of those that built. A build that
// fails is reported and the others go on: the error lists every failed
// build, beside the programs of the rest.
func prepareDebianBig(dir string, opt PrepareOptions, progress func(string, ...any)) ([]Program, error) {
	builds, err := debianBigBuilds(opt.Source)
	if err != nil {
		return nil, err
	}
	var progs []Program
	var failed []error
	for _, b := range builds {
		ps, err := prepareBuild(b, dir, opt, progress)
		if err != nil {
			progress("%s failed; the suite goes on without it", b.script)
			failed = append(failed, err)
			continue
		}
		progs = append(progs, ps...)
	}
	return progs, errors.Join(failed...)
}

// prepareBuild runs b's script into dir/SUB/HASH, where HASH covers the
// script's directory, unless an earlier preparation did, and returns the
// manifest entries of the programs.txt it wrote.
func prepareBuild(b debianBuild, dir string, opt PrepareOptions, progress func(string, ...any)) ([]Program, error) {
	scriptDir := filepath.Join(opt.Source, filepath.FromSlash(path.Dir(b.script)))
	h, err := hashTree(scriptDir)
	if err != nil {
		return nil, err
	}
	rel := b.sub + "/" + h[:12]
	final := filepath.Join(dir, filepath.FromSlash(rel))
	list := filepath.Join(final, "programs.txt")
	if _, err := os.Stat(list); err != nil {
		if err := buildDebian(b, final, opt, progress); err != nil {
			return nil, err
		}
	}
	data, err := os.ReadFile(list)
	if err != nil {
		return nil, err
	}
	progs, err := b.parse(data, rel)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", list, err)
	}
	progress("%d programs of %s in %s", len(progs), b.script, final)
	return progs, nil
}

// buildDebian runs b's build script into a fresh directory and renames it
// to final when the script succeeded, so that an interrupted or failed
// build is never taken for a finished one. Builds made from other versions
// of the script are removed.
func buildDebian(b debianBuild, final string, opt PrepareOptions, progress func(string, ...any)) error {
	shell := opt.Shell
	if shell == "" {
		shell = "bash"
	}
	start := time.Now()
	err := intoDir(final, ".build-", func(tmp string) error {
		progress("building %s (%s): fetches source packages, needs clang-14 for wasm32-wasi", b.what, b.script)
		cmd := exec.Command(shell, filepath.Join(opt.Source, filepath.FromSlash(b.script)), tmp)
		cmd.Dir = opt.Source
		// The script's own progress lines are worth seeing live: fetching
		// and building takes a minute or more. Without a progress writer
		// only the end of its output is kept, for the error message.
		tail := &tailWriter{max: 4000}
		var w io.Writer = tail
		if opt.Progress != nil {
			w = io.MultiWriter(tail, opt.Progress)
		}
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Run(); err != nil {
			msg := strings.TrimSpace(string(tail.bytes()))
			if opt.Progress != nil {
				msg = "see its output above"
			}
			return fmt.Errorf("%s: %v (%s); pathprof bench --prepare %s prepares the suite without %s", b.script, err, msg, b.skip, b.what)
		}
		return nil
	})
	if err != nil {
		return err
	}
	progress("built %s in %.0fs", b.what, time.Since(start).Seconds())
	parent := filepath.Dir(final)
	ents, err := os.ReadDir(parent)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() && e.Name() != filepath.Base(final) && !strings.HasPrefix(e.Name(), ".build-") {
			os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
	return nil
}

// intoDir runs fill on a fresh directory beside final and renames it to
// final when fill succeeds, so that an interrupted or failed build or fetch
// is never taken for a finished one.
func intoDir(final, prefix string, fill func(tmp string) error) error {
	parent := filepath.Dir(final)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := fill(tmp); err != nil {
		return err
	}
	if err := os.RemoveAll(final); err != nil {
		return err
	}
	return os.Rename(tmp, final)
}

// parseDebianList reads the script's programs.txt
// (NAME WASM STDIN EXPECT_STDOUT EXIT_CODE [ARGS...], STDIN "-" for none)
// into manifest entries whose files are under rel.
func parseDebianList(data []byte, rel string) ([]Program, error) {
	var progs []Program
	err := proglist.Each(data, 5, "NAME WASM STDIN EXPECT_STDOUT EXIT_CODE [ARGS...]", func(f []string) error {
		code, err := strconv.ParseUint(f[4], 10, 32)
		if err != nil {
			return fmt.Errorf("exit code: %w", err)
		}
		p := Program{Name: f[0], Origin: OriginDebian, Wasm: rel + "/" + f[1],
			ExpectStdout: rel + "/" + f[3], ExpectExitCode: u32(uint32(code)), Args: f[5:]}
		if f[2] != "-" {
			p.Stdin = rel + "/" + f[2]
		}
		if err := p.validate(); err != nil {
			return err
		}
		progs = append(progs, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(progs) == 0 {
		return nil, fmt.Errorf("no programs")
	}
	return progs, nil
}

// parseDebianBigList reads the big Debian programs' programs.txt
// (NAME WASM STDIN EXPECT_STDOUT EXIT_CODE MOUNTS [ARGS...]) into manifest
// entries whose files are under rel. STDIN and EXPECT_STDOUT are "-" for
// none; MOUNTS is "-" or a comma-separated list of HOST:GUEST[:ro] whose
// HOST is under rel or is TempMount. They are big programs of the
// validation set: the rule puts every big program but yosys there.
func parseDebianBigList(data []byte, rel string) ([]Program, error) {
	var progs []Program
	err := proglist.Each(data, 6, "NAME WASM STDIN EXPECT_STDOUT EXIT_CODE MOUNTS [ARGS...]", func(f []string) error {
		code, err := strconv.ParseUint(f[4], 10, 32)
		if err != nil {
			return fmt.Errorf("exit code: %w", err)
		}
		p := Program{Name: f[0], Origin: OriginDebianBig, Wasm: rel + "/" + f[1],
			ExpectExitCode: u32(uint32(code)), Args: f[6:], Validation: true, Big: true}
		if f[2] != "-" {
			p.Stdin = rel + "/" + f[2]
		}
		if f[3] != "-" {
			p.ExpectStdout = rel + "/" + f[3]
		}
		if f[5] != "-" {
			for _, m := range strings.Split(f[5], ",") {
				pm, err := ParseMount(m)
				if err != nil {
					return err
				}
				if pm.Host != TempMount {
					h, err := insideDir(pm.Host)
					if err != nil {
						return fmt.Errorf("mount %q: %w", m, err)
					}
					m = rel + "/" + filepath.ToSlash(h) + strings.TrimPrefix(m, pm.Host)
				}
				p.Mounts = append(p.Mounts, m)
			}
		}
		if err := p.validate(); err != nil {
			return err
		}
		progs = append(progs, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(progs) == 0 {
		return nil, fmt.Errorf("no programs")
	}
	return progs, nil
}

// hashTree hashes the relative names and contents of the regular files
// under dir.
func hashTree(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(r), len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
