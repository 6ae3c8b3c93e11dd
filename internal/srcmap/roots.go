package srcmap

// This file holds the rule for where a report may read the source files a
// module's DWARF names: a module is untrusted, and its DWARF can name any
// path (/etc/passwd, ~/.ssh/id_ed25519), so a report made from it must not
// read files outside the directories the user allows.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SourceFlag is the command-line flag that adds a directory to the roots;
// reports name it where they leave sources out.
const SourceFlag = "--source DIR"

// Roots are the directories source files may be read from: the current
// directory, the module's directory and the directories the user gives.
// A file is inside the roots when its path, symbolic links resolved, is
// within one of theirs.
type Roots struct {
	dirs     []string // where names are looked for, in order
	resolved []string // the roots, absolute, symbolic links resolved
}

// NewRoots returns the roots for a module read from modulePath ("" for
// none) and the extra directories dirs. A directory that does not exist
// allows nothing.
func NewRoots(modulePath string, dirs []string) *Roots {
	r := &Roots{}
	if modulePath != "" {
		r.dirs = append(r.dirs, filepath.Dir(modulePath))
	}
	r.dirs = append(r.dirs, dirs...)
	r.dirs = append(r.dirs, ".")
	for _, d := range r.dirs {
		if res, err := resolve(d); err == nil {
			r.resolved = append(r.resolved, res)
		}
	}
	return r
}

// Dirs are the directories names are looked for in: the module's
// directory, the given ones, then the current directory.
func (r *Roots) Dirs() []string { return r.dirs }

// Find looks for the file DWARF names as name. debug/dwarf has already
// joined a relative name to its compilation directory, so an absolute
// name is where the compiler saw the file, and a relative one (clang's
// "." with -fdebug-prefix-map) is relative to where the build ran, which
// is most often where the module still is; a build tree moved elsewhere is
// found by the absolute name's tail under a root.
//
// Find returns the path to show and the path to read (symbolic links
// resolved), both "" when the file is not found inside the roots. leftOut
// says that name is outside the roots, or a candidate for it resolved
// outside them: the file is not read whether or not it exists, and a
// report names it as left out.
func (r *Roots) Find(name string) (shown, read string, leftOut bool) {
	var tries []string
	abs := filepath.IsAbs(name)
	if abs {
		tries = append(tries, name)
	}
	for _, d := range r.dirs {
		if !abs {
			tries = append(tries, filepath.Join(d, name))
		}
	}
	if abs {
		parts := strings.Split(filepath.ToSlash(name), "/")
		for i := 1; i < len(parts)-1 && i < 4; i++ {
			for _, d := range r.dirs {
				tries = append(tries, filepath.Join(d, filepath.FromSlash(strings.Join(parts[len(parts)-i:], "/"))))
			}
		}
	}
	for _, t := range tries {
		res, err := resolve(t)
		if err != nil {
			leftOut = leftOut || !r.lexicallyInside(t)
			continue
		}
		if !r.inside(res) {
			leftOut = true
			continue
		}
		if st, err := os.Stat(res); err == nil && st.Mode().IsRegular() {
			return t, res, false
		}
	}
	return "", "", leftOut
}

// LeftOut reports whether name is outside the roots (see Find).
func (r *Roots) LeftOut(name string) bool {
	_, read, leftOut := r.Find(name)
	return read == "" && leftOut
}

// Some lists the first few of names, and how many more there are, for a
// one-line note: a Go module's DWARF names hundreds of files.
func Some(names []string) string {
	const few = 5
	if len(names) <= few {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:few], ", "), len(names)-few)
}

// inside reports whether res, an absolute path with symbolic links
// resolved, is within a root.
func (r *Roots) inside(res string) bool {
	for _, root := range r.resolved {
		if within(root, res) {
			return true
		}
	}
	return false
}

// lexicallyInside reports whether p names a place within a root as
// written, or as its directory resolves; it decides, for a candidate that
// leads to no file, between "not found" and "left out", so that a report
// says nothing about whether a file outside the roots exists.
func (r *Roots) lexicallyInside(p string) bool {
	p, err := filepath.Abs(p)
	if err != nil {
		return false
	}
	if res, err := resolve(filepath.Dir(p)); err == nil && r.inside(filepath.Join(res, filepath.Base(p))) {
		return true
	}
	for _, d := range r.dirs {
		if a, err := filepath.Abs(d); err == nil && within(a, p) {
			return true
		}
	}
	return r.inside(p)
}

// resolve makes p absolute and resolves its symbolic links.
func resolve(p string) (string, error) {
	a, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(a)
}

// within reports whether p is root or under it; both are clean and
// absolute.
func within(root, p string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}
