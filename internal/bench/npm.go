package bench

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// NPMInputs holds the inputs of the prebuilt programs (a design for
// yosys, a C++ file for clang), relative to the source tree.
const NPMInputs = "bench/npm"

// npmPackage is a package of the npm registry that ships a WASI command
// module, pinned to a version and to the digest of its tarball (npm's
// "integrity"), so that every preparation measures the same bytes. Nothing
// of it is committed: Prepare fetches it.
type npmPackage struct {
	Name, Version, Integrity string
	// Files maps tarball entries to the files, under the package's
	// directory, that Prepare writes them to.
	Files map[string]string
	// Tars maps tarball entries that are tar files themselves to the
	// directory their regular files are unpacked into.
	Tars map[string]string
	// Resources is a YoWASP resources module whose "filesystem" tree is
	// written under the package's directory (resources.go).
	Resources string
	Programs  []npmProgram
}

// npmProgram is one program of a package: Wasm is a file of Files; "PKG"
// in a mount stands for the package's directory in the suite and "IN" for
// the program's inputs (NPMInputs/Name).
type npmProgram struct {
	Name, Wasm string
	Args       []string
	Mounts     []string
	Validation bool
}

// npmPackages are the big prebuilt programs: C++ programs of tens of
// megabytes with tens of thousands of functions. yosys is the 30 MB module
// that big-module work targets; clang is in the validation set.
var npmPackages = []npmPackage{
	{
		Name: "@yowasp/yosys", Version: "0.55.944",
		Integrity: "sha512-O9yjd529cPb8R+FO7gpQRw658yGjApBN9JiqMg21+5tONXrGhF9EygKF/vDXrHvoYerYU7QqxIK05tQDhPYgPQ==",
		Files:     map[string]string{"package/gen/yosys.core.wasm": "yosys.wasm"},
		Resources: "package/gen/resources-yosys.js",
		Programs: []npmProgram{{
			Name: "yosys", Wasm: "yosys.wasm",
			// ABC's scratch directory is kept (nocleanup): removing it
			// needs scandir, which fails under wazero's WASI. It is made
			// in the working directory, /, a fresh directory each run.
			Args:   []string{"-p", "scratchpad -set abc9.nocleanup 1; synth_ice40 -top top; stat", "/in/design.v"},
			Mounts: []string{TempMount + ":/", "PKG/share:/share:ro", "IN:/in:ro"},
		}},
	},
	{
		Name: "@yowasp/clang", Version: "22.0.0-git20542-10",
		Integrity: "sha512-V31/z9GrJECKeACTDUyvg2llbEUiFi3bxtL5HSg7H/6sydSxdI/AoVAD9F5ozrfLjotWl0B9rghR87m+DUM/zg==",
		Files:     map[string]string{"package/gen/llvm.core.wasm": "clang.wasm"},
		Tars:      map[string]string{"package/gen/llvm-resources.tar": "usr"},
		Programs: []npmProgram{{
			Name: "clang", Wasm: "clang.wasm",
			Args:       []string{"--driver-mode=g++", "-std=c++17", "-O2", "-S", "-o", "-", "/in/graph.cpp"},
			Mounts:     []string{"PKG/usr:/usr:ro", "IN:/in:ro"},
			Validation: true,
		}},
	},
}

// dirName is the package's directory under dir/npm.
func (p *npmPackage) dirName() string {
	return strings.ReplaceAll(strings.TrimPrefix(p.Name, "@"), "/", "-") + "-" + p.Version
}

// prepareNPM fetches the prebuilt programs unless an earlier preparation
// did, copies their inputs, and returns their manifest entries.
func prepareNPM(dir string, opt PrepareOptions, progress func(string, ...any)) ([]Program, error) {
	var progs []Program
	for i := range npmPackages {
		pkg := &npmPackages[i]
		rel := "npm/" + pkg.dirName()
		final := filepath.Join(dir, filepath.FromSlash(rel))
		if _, err := os.Stat(filepath.Join(final, ".complete")); err != nil {
			if err := fetchNPM(pkg, final, opt, progress); err != nil {
				return nil, err
			}
		}
		for _, np := range pkg.Programs {
			in := "npm/inputs/" + np.Name
			src := filepath.Join(opt.Source, filepath.FromSlash(NPMInputs), np.Name)
			ents, err := os.ReadDir(src)
			if err != nil {
				return nil, err
			}
			for _, e := range ents {
				if e.Type().IsRegular() {
					if err := copyFiles(src, filepath.Join(dir, filepath.FromSlash(in)), e.Name()); err != nil {
						return nil, err
					}
				}
			}
			p := Program{Name: np.Name, Origin: OriginNPM, Wasm: rel + "/" + np.Wasm, Args: np.Args,
				ExpectExitCode: u32(0), Validation: np.Validation, Big: true}
			for _, m := range np.Mounts {
				m = strings.Replace(m, "PKG", rel, 1)
				p.Mounts = append(p.Mounts, strings.Replace(m, "IN", in, 1))
			}
			progs = append(progs, p)
		}
	}
	progress("%d big prebuilt programs in %s", len(progs), filepath.Join(dir, "npm"))
	return progs, nil
}

// fetchNPM fetches pkg's tarball with npm pack, checks its digest, and
// unpacks what the programs need into final, through a temporary
// directory so that a failed fetch is never taken for a finished one.
func fetchNPM(pkg *npmPackage, final string, opt PrepareOptions, progress func(string, ...any)) error {
	npm := opt.NPM
	if npm == "" {
		npm = "npm"
	}
	start := time.Now()
	spec := pkg.Name + "@" + pkg.Version
	err := intoDir(final, ".fetch-", func(tmp string) error {
		progress("fetching %s with npm pack", spec)
		cmd := exec.Command(npm, "pack", "--silent", "--pack-destination", tmp, spec)
		cmd.Dir = tmp
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("npm pack %s: %v: %s; pathprof bench --prepare without --big prepares the suite without the big programs",
				spec, err, strings.TrimSpace(lastLines(out.String(), 5)))
		}
		tgz := filepath.Join(tmp, strings.TrimSpace(lastLines(out.String(), 1)))
		data, err := os.ReadFile(tgz)
		if err != nil {
			return fmt.Errorf("npm pack %s: %w", spec, err)
		}
		if err := os.Remove(tgz); err != nil {
			return err
		}
		sum := sha512.Sum512(data)
		if got := "sha512-" + base64.StdEncoding.EncodeToString(sum[:]); got != pkg.Integrity {
			return fmt.Errorf("%s: the tarball's digest is %s, want %s", spec, got, pkg.Integrity)
		}
		if err := unpackNPM(pkg, data, tmp); err != nil {
			return fmt.Errorf("%s: %w", spec, err)
		}
		return os.WriteFile(filepath.Join(tmp, ".complete"), []byte(spec+"\n"), 0o644)
	})
	if err != nil {
		return err
	}
	progress("fetched %s in %.0fs", spec, time.Since(start).Seconds())
	return nil
}

// unpackNPM writes the entries of the tarball data that pkg names into
// dir. The tarball is untrusted input: only the named entries are read,
// and a nested tar's or the resources' file names must stay inside their
// directory.
func unpackNPM(pkg *npmPackage, data []byte, dir string) error {
	want := map[string]bool{}
	for e := range pkg.Files {
		want[e] = true
	}
	for e := range pkg.Tars {
		want[e] = true
	}
	if pkg.Resources != "" {
		want[pkg.Resources] = true
	}
	// Files a resources module names by URL, relative to it.
	entries := map[string][]byte{}
	err := eachTarEntry(data, true, func(name string, r io.Reader) error {
		name = path.Clean(name)
		if !want[name] && (pkg.Resources == "" || !strings.HasPrefix(name, path.Dir(pkg.Resources)+"/share/")) {
			return nil
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		entries[name] = b
		return nil
	})
	if err != nil {
		return err
	}
	for e, to := range pkg.Files {
		b, ok := entries[e]
		if !ok {
			return fmt.Errorf("the tarball holds no %s", e)
		}
		if err := writeFileAtomic(filepath.Join(dir, to), b); err != nil {
			return err
		}
	}
	for e, to := range pkg.Tars {
		b, ok := entries[e]
		if !ok {
			return fmt.Errorf("the tarball holds no %s", e)
		}
		err := eachTarEntry(b, false, func(name string, r io.Reader) error {
			p, err := insideDir(name)
			if err != nil {
				return fmt.Errorf("%s: %w", e, err)
			}
			b, err := io.ReadAll(r)
			if err != nil {
				return err
			}
			return writeFileAtomic(filepath.Join(dir, to, p), b)
		})
		if err != nil {
			return err
		}
	}
	if pkg.Resources != "" {
		b, ok := entries[pkg.Resources]
		if !ok {
			return fmt.Errorf("the tarball holds no %s", pkg.Resources)
		}
		tree, err := ParseResources(b)
		if err != nil {
			return fmt.Errorf("%s: %w", pkg.Resources, err)
		}
		base := path.Dir(pkg.Resources)
		for _, f := range tree {
			content := f.Data
			if f.URL != "" {
				u, ok := entries[path.Join(base, f.URL)]
				if !ok {
					return fmt.Errorf("%s: %s names %s, which the tarball does not hold", pkg.Resources, f.Path, f.URL)
				}
				content = u
			}
			if err := writeFileAtomic(filepath.Join(dir, filepath.FromSlash(f.Path)), content); err != nil {
				return err
			}
		}
	}
	return nil
}

// eachTarEntry calls f with the name and contents of every regular file
// of the tar file data, gzip-compressed if gz.
func eachTarEntry(data []byte, gz bool, f func(name string, r io.Reader) error) error {
	var r io.Reader = bytes.NewReader(data)
	if gz {
		z, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		r = z
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if err := f(h.Name, tr); err != nil {
			return err
		}
	}
}

// insideDir checks that name, a slash-separated relative file name from an
// archive, stays inside the directory it is unpacked into, and returns it
// in the host's form.
func insideDir(name string) (string, error) {
	c := path.Clean(name)
	if name == "" || path.IsAbs(c) || c == "." || c == ".." || strings.HasPrefix(c, "../") || strings.ContainsRune(name, '\\') {
		return "", fmt.Errorf("file name %q leaves its directory", name)
	}
	return filepath.FromSlash(c), nil
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
