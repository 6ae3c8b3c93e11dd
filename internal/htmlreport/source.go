package htmlreport

// This file maps a function's blocks to source lines, finds the source
// files DWARF names, and embeds the lines the page shows.

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/srcmap"
	"github.com/pathprof/pathprof/internal/wasm"
)

// contextLines is how many lines around a function's own lines the source
// view shows, so that a function's signature and closing brace are there
// too.
const contextLines = 3

// sourceFile is one source file that DWARF names, as the page holds it:
// only the line ranges of the functions in it, since a large program's
// headers and libraries would otherwise fill the page.
type sourceFile struct {
	Name string `json:"name"`
	// Path is where the file was found, or "" when it was not.
	Path string `json:"path"`
	// Segs are [first line, [lines...]], in line order.
	Segs    [][2]any `json:"segs"`
	Missing string   `json:"missing,omitempty"`
}

// sources collects the source lines functions need and reads them from
// the files found.
type sources struct {
	m       *srcmap.Map
	roots   *srcmap.Roots
	maxSize int
	index   map[string]int
	names   []string
	ranges  [][][2]int // per file: line ranges to embed
	missing int
	leftOut []string // names outside the roots, not read
}

func newSources(src *srcmap.Map, opt Options) *sources {
	s := &sources{m: src, index: map[string]int{}, maxSize: opt.MaxSourceBytes,
		roots: srcmap.NewRoots(opt.ModulePath, opt.SourceDirs)}
	if s.maxSize == 0 {
		s.maxSize = 16 << 20
	}
	return s
}

// blockLines returns, per node of g, the distinct source lines of its
// instructions as [file, line, ...] pairs in instruction order, and notes
// the function's line range in each file it touches.
func (s *sources) blockLines(c *wasm.Code, g *cfg.Graph) [][]int {
	out := make([][]int, len(g.Blocks))
	lo, hi := map[int]int{}, map[int]int{}
	r := wasm.NewReader(c.Body, c.OrigOff, "code")
	var in wasm.Instr
	for n, b := range g.Blocks {
		if n <= cfg.Exit {
			out[n] = []int{}
			continue
		}
		seen := map[[2]int]bool{}
		ls := []int{}
		r.Seek(int(b.Start))
		for r.Pos() < int(b.End) && r.Next(&in) == nil {
			file, line, ok := s.m.Lookup(c.OrigOff + int(in.Off))
			if !ok {
				continue
			}
			f := s.file(file)
			if seen[[2]int{f, line}] {
				continue
			}
			seen[[2]int{f, line}] = true
			ls = append(ls, f, line)
			if l, ok := lo[f]; !ok || line < l {
				lo[f] = line
			}
			hi[f] = max(hi[f], line)
		}
		out[n] = ls
	}
	for f, l := range lo {
		s.ranges[f] = append(s.ranges[f], [2]int{max(l-contextLines, 1), hi[f] + contextLines})
	}
	return out
}

func (s *sources) file(name string) int {
	if i, ok := s.index[name]; ok {
		return i
	}
	s.index[name] = len(s.names)
	s.names = append(s.names, name)
	s.ranges = append(s.ranges, nil)
	return len(s.names) - 1
}

// embed reads the files and cuts out the line ranges functions need,
// merged, within the size budget.
func (s *sources) embed() []sourceFile {
	out := []sourceFile{}
	left := s.maxSize
	for i, name := range s.names {
		f := sourceFile{Name: name, Segs: [][2]any{}}
		out = append(out, f)
		path, read, leftOut := s.roots.Find(name)
		if leftOut {
			s.leftOut = append(s.leftOut, name)
			out[i].Missing = "left out: outside the directories sources are read from (" + srcmap.SourceFlag + " adds one)"
			continue
		}
		if path == "" {
			s.missing++
			out[i].Missing = "not found (looked in " + strings.Join(s.roots.Dirs(), ", ") + ")"
			continue
		}
		data, err := os.ReadFile(read)
		if err != nil {
			s.missing++
			out[i].Missing = err.Error()
			continue
		}
		out[i].Path = path
		lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
		rs := s.ranges[i]
		slices.SortFunc(rs, func(a, b [2]int) int { return a[0] - b[0] })
		var merged [][2]int
		for _, r := range rs {
			if n := len(merged); n > 0 && r[0] <= merged[n-1][1]+1 {
				merged[n-1][1] = max(merged[n-1][1], r[1])
				continue
			}
			merged = append(merged, r)
		}
		for _, r := range merged {
			first, last := r[0], min(r[1], len(lines))
			if first > last {
				continue
			}
			seg := lines[first-1 : last]
			size := 0
			for _, l := range seg {
				size += len(l) + 4
			}
			if size > left {
				out[i].Missing = fmt.Sprintf("partly embedded: the page's limit of %d bytes of source was reached", s.maxSize)
				break
			}
			left -= size
			out[i].Segs = append(out[i].Segs, [2]any{first, seg})
		}
	}
	return out
}

// notes say, once embed has run, which source files were left out and
// how many were not found.
func (s *sources) notes() []string {
	var out []string
	if len(s.leftOut) > 0 {
		out = append(out, fmt.Sprintf("%d of %d source files that DWARF names were left out, not read: they are outside the current directory, the module's directory and the directories given with %s (%s). Functions in them show their instructions.",
			len(s.leftOut), len(s.names), srcmap.SourceFlag, srcmap.Some(s.leftOut)))
	}
	if s.missing > 0 {
		out = append(out, fmt.Sprintf("%d of %d source files that DWARF names were not found; functions in them show their instructions. Give their directory with %s.", s.missing, len(s.names), srcmap.SourceFlag))
	}
	return out
}
