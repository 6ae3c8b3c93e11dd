// Package history keeps the last complete profile of each module, so
// that profiling the module again plans its copies by the previous run
// instead of by a static estimate, and finds the previous profile of an
// earlier build of a module at the same path.
//
// A store is one directory (by default os.UserCacheDir()/pathprof/history)
// holding, per module digest D, D.json (the profile) and D.shapes.json
// (each profiled function's name and the digest of its DAG's shape), and,
// per module path, paths/H (H the digest of the absolute path) naming the
// digest last profiled there. Saving a new build's profile from a path
// removes the previous build's. Nothing is written outside the directory.
package history

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pathprof/pathprof/internal/atomicfile"
	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/profile"
)

// DefaultDir is the store's directory unless the user names another:
// pathprof/history under the user's cache directory.
func DefaultDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "pathprof", "history"), nil
}

// Store is a directory of previous profiles.
type Store struct{ Dir string }

// Func is what the store needs of one defined function of a module: its
// name and DAG (nil when it is not profiled).
type Func struct {
	Index uint32
	Name  string
	DAG   *cfg.DAG
}

// shapes maps a function's name to its DAG's shape digest.
type shapes map[string]string

var digestRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Save keeps p, a complete profile of the module whose functions are
// funcs, as the previous profile of its digest and of its path (made
// absolute). It removes the profile of another build last saved from
// that path.
func (s Store) Save(p *profile.Profile, funcs []Func) error {
	d := p.Module.SHA256
	if !digestRE.MatchString(d) {
		return fmt.Errorf("history: module digest %q", d)
	}
	if err := os.MkdirAll(filepath.Join(s.Dir, "paths"), 0o755); err != nil {
		return err
	}
	sh := shapes{}
	for _, f := range funcs {
		if f.DAG != nil && f.Name != "" {
			if _, dup := sh[f.Name]; dup {
				sh[f.Name] = "" // two functions of one name: neither matches
			} else {
				sh[f.Name] = Shape(f.DAG)
			}
		}
	}
	b, err := json.Marshal(sh)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(s.Dir, d+".shapes.json"), b, 0o644); err != nil {
		return err
	}
	if err := profile.WriteFile(filepath.Join(s.Dir, d+".json"), p); err != nil {
		return err
	}
	if p.Module.Path == "" {
		return nil
	}
	link := s.pathFile(p.Module.Path)
	if old, err := os.ReadFile(link); err == nil {
		if o := strings.TrimSpace(string(old)); o != d && digestRE.MatchString(o) {
			os.Remove(filepath.Join(s.Dir, o+".json"))
			os.Remove(filepath.Join(s.Dir, o+".shapes.json"))
		}
	}
	return atomicfile.WriteFile(link, []byte(d+"\n"), 0o644)
}

// pathFile is the file that names the digest last profiled at path.
func (s Store) pathFile(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	h := sha256.Sum256([]byte(path))
	return filepath.Join(s.Dir, "paths", hex.EncodeToString(h[:]))
}

// Previous is a previous profile found for a module.
type Previous struct {
	Profile *profile.Profile
	// Same is set when the profile is of this very module (its digest);
	// otherwise it is of an earlier build at the same path, and only
	// Functions, the functions matched by name and DAG shape (indexed by
	// the new module's function index), are kept: Matched of Ran.
	Same         bool
	Matched, Ran int
}

// Holds reports whether the store may hold a previous profile of the
// module with digest digest at path, without reading it: what Find needs
// (the module's functions) costs an analysis of the module, which a
// first run need not pay.
func (s Store) Holds(digest, path string) bool {
	if digestRE.MatchString(digest) {
		if _, err := os.Stat(filepath.Join(s.Dir, digest+".json")); err == nil {
			return true
		}
	}
	if path == "" {
		return false
	}
	_, err := os.Stat(s.pathFile(path))
	return err == nil
}

// Find returns the previous profile of the module with digest digest at
// path whose functions are funcs, or nil if there is none. A profile that
// cannot be read is treated as none, so that a damaged store never stops
// a run; the error says why.
func (s Store) Find(digest, path string, funcs []Func) (*Previous, error) {
	if p, err := s.read(digest); p != nil || err != nil {
		if err != nil {
			return nil, err
		}
		// A profile of this module made by a build that numbered some of
		// its functions otherwise (their DAGs' shapes differ) is matched
		// as an earlier build's is: its ids name other paths there.
		if sh, err := s.shapes(digest); err != nil {
			return nil, err
		} else if sh != nil && !sameShapes(sh, funcs) {
			return match(p, sh, funcs), nil
		}
		return &Previous{Profile: p, Same: true}, nil
	}
	if path == "" {
		return nil, nil
	}
	old, err := os.ReadFile(s.pathFile(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	o := strings.TrimSpace(string(old))
	if !digestRE.MatchString(o) {
		return nil, fmt.Errorf("history: %s names no module digest", s.pathFile(path))
	}
	p, err := s.read(o)
	if p == nil || err != nil {
		return nil, err
	}
	sh, err := s.shapes(o)
	if err != nil {
		return nil, err
	}
	if sh == nil {
		return nil, fmt.Errorf("history: no %s.shapes.json", o)
	}
	return match(p, sh, funcs), nil
}

// shapes returns the shapes kept for digest, or nil if there are none.
func (s Store) shapes(digest string) (shapes, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, digest+".shapes.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var sh shapes
	if err := json.Unmarshal(b, &sh); err != nil {
		return nil, fmt.Errorf("history: %s.shapes.json: %v", digest, err)
	}
	return sh, nil
}

// sameShapes reports whether every function of funcs that sh has a shape
// for has that shape.
func sameShapes(sh shapes, funcs []Func) bool {
	for _, f := range funcs {
		if want, ok := sh[f.Name]; ok && want != "" && f.DAG != nil && Shape(f.DAG) != want {
			return false
		}
	}
	return true
}

// read returns the profile kept for digest, or nil if there is none.
func (s Store) read(digest string) (*profile.Profile, error) {
	if !digestRE.MatchString(digest) {
		return nil, nil
	}
	p, err := profile.ReadFile(filepath.Join(s.Dir, digest+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if p.Module.SHA256 != digest || !p.Complete {
		return nil, fmt.Errorf("history: %s.json is not a complete profile of that module", digest)
	}
	return p, nil
}

// match keeps the functions of an earlier build's profile p whose name
// names one function of the new module with the same DAG shape as the
// earlier one's (shapes sh), renumbered to the new module's indices: with
// the same DAG, path ids name the same paths.
func match(p *profile.Profile, sh shapes, funcs []Func) *Previous {
	byName := map[string]*Func{}
	for i := range funcs {
		f := &funcs[i]
		if f.Name == "" || f.DAG == nil {
			continue
		}
		if _, dup := byName[f.Name]; dup {
			byName[f.Name] = nil
		} else {
			byName[f.Name] = f
		}
	}
	prev := &Previous{Profile: &profile.Profile{Module: p.Module, Complete: true}}
	for _, pf := range p.Functions {
		if len(pf.Paths) == 0 {
			continue
		}
		prev.Ran++
		f := byName[pf.Name]
		if f == nil || sh[pf.Name] == "" || sh[pf.Name] != Shape(f.DAG) {
			continue
		}
		pf.Index = f.Index
		prev.Profile.Functions = append(prev.Profile.Functions, pf)
		prev.Matched++
	}
	return prev
}

// Shape is the digest of a DAG's shape: its nodes and its edges in order,
// with their ends and kinds, which is all that Ball-Larus numbering
// reads. Two functions with one shape number their paths alike.
func Shape(d *cfg.DAG) string {
	h := sha256.New()
	var b [4]byte
	put := func(x uint32) {
		binary.LittleEndian.PutUint32(b[:], x)
		h.Write(b[:])
	}
	put(uint32(d.NumNodes))
	for _, e := range d.Edges {
		put(uint32(e.From))
		put(uint32(e.To))
		put(uint32(e.Kind))
		put(uint32(len(e.Back)))
	}
	return hex.EncodeToString(h.Sum(nil))
}
