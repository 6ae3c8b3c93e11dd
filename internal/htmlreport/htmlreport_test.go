package htmlreport

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/report"
	"github.com/pathprof/pathprof/profile"
)

// checkFlow checks what the page draws against the profile: every path
// block is a node of the function's graph, the times a node is entered are
// the counts of the paths through it, and at every node what comes in
// (edges crossed, paths starting there after a back edge) equals what is
// entered and what goes out (edges crossed, paths ending there at a back
// edge). Functions with cuts are left out of the flow checks: a path
// ending at a cut leaves its block by an edge it does not name.
func checkFlow(t *testing.T, b *built) (checked int) {
	t.Helper()
	for i, f := range b.r.Functions {
		d := &b.details[i]
		if d.Error != "" {
			t.Errorf("%s: %s", f.Name, d.Error)
			continue
		}
		if d.Unmatched > 0 {
			t.Errorf("%s: %d path blocks are not nodes of the graph", f.Name, d.Unmatched)
			continue
		}
		nb := len(d.Blocks) / 4
		if nb < 3 || len(d.Edges)%5 != 0 {
			t.Errorf("%s: %d nodes, %d edge numbers", f.Name, nb, len(d.Edges))
			continue
		}
		paths := d.paths(t)
		if len(paths) != len(f.Paths) {
			t.Errorf("%s: %d paths on the page, %d in the report", f.Name, len(paths), len(f.Paths))
			continue
		}
		entries := make([]uint64, nb)
		in, out := make([]uint64, nb), make([]uint64, nb)
		var calls uint64
		labels := map[string]string{}
		for j, p := range paths {
			rp := f.Paths[j]
			if p.id != strconv.FormatUint(rp.ID, 10) || p.count != strconv.FormatUint(rp.Count, 10) || pathKinds[p.kind] != rp.Kind || p.label != rp.Label {
				t.Fatalf("%s: path %d is %+v on the page, %+v in the report", f.Name, j, p, rp)
			}
			// Two paths of a function never read alike on the page.
			if other, ok := labels[rp.Kind+" "+p.label]; ok {
				t.Errorf("%s: paths %s and %s both read %s %s", f.Name, other, p.id, rp.Kind, p.label)
			}
			labels[rp.Kind+" "+p.label] = p.id
			for k, n := range p.nodes {
				if start := d.Off + int(d.Blocks[4*n]); start != rp.Blocks[k].Offset {
					t.Fatalf("%s path %d: node %d starts at %d, the block at %d", f.Name, rp.ID, n, start, rp.Blocks[k].Offset)
				}
				entries[n] += rp.Count
			}
			if strings.HasPrefix(rp.Kind, "back-") {
				in[p.nodes[0]] += rp.Count
			} else {
				calls += rp.Count
			}
			if strings.HasSuffix(rp.Kind, "-back") {
				out[p.nodes[len(p.nodes)-1]] += rp.Count
			}
		}
		for n := range nb {
			if got := d.Blocks[4*n+3]; got != entries[n] {
				t.Fatalf("%s: node %d entered %d times on the page, %d by the paths", f.Name, n, got, entries[n])
			}
		}
		if len(d.Cuts) > 0 {
			continue
		}
		var fromEntry uint64
		for e := 0; e < len(d.Edges); e += 5 {
			from, to, back, c := d.Edges[e], d.Edges[e+1], d.Edges[e+3], d.Edges[e+4]
			if from == 0 {
				fromEntry += c
			}
			if back == 1 {
				continue
			}
			out[from] += c
			in[to] += c
		}
		if fromEntry != calls {
			t.Fatalf("%s: %d crossings out of the entry, %d calls", f.Name, fromEntry, calls)
		}
		for n := 2; n < nb; n++ {
			if in[n] != entries[n] || out[n] != entries[n] {
				t.Fatalf("%s node %d: entered %d times, %d in and %d out", f.Name, n, entries[n], in[n], out[n])
			}
		}
		checked++
	}
	return checked
}

func TestFlowC(t *testing.T) {
	b := buildPage(t, calcRun(t), Options{})
	n := checkFlow(t, b)
	t.Logf("%d functions, %d checked for flow; page %d bytes", len(b.r.Functions), n, b.size)
	if n < 40 {
		t.Errorf("only %d functions checked", n)
	}
}

func TestFlowGo(t *testing.T) {
	b := buildPage(t, goTestRun(t, "sort"), Options{})
	n := checkFlow(t, b)
	t.Logf("%d functions, %d checked for flow; page %d bytes", len(b.r.Functions), n, b.size)
	if n < 1000 {
		t.Errorf("only %d functions checked", n)
	}
}

// TestSelfContained checks that the page loads nothing: no element with a
// source or a stylesheet link, no URL in styles, no script that fetches.
func TestSelfContained(t *testing.T) {
	for _, rn := range []*run{calcRun(t), goTestRun(t, "sort")} {
		b := buildPage(t, rn, Options{})
		page, err := os.ReadFile(b.file)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range []string{`(?i)<(img|iframe|link|object|embed|audio|video|source)\b`, `(?i)<[^>]*\ssrc\s*=`,
			`(?i)url\(\s*['"]?[^#'"\s]`, `(?i)@import`, `\bfetch\(`, `XMLHttpRequest`, `(?i)https?://(?:[^w]|w[^w]|ww[^w]|www\.[^w])`, `import\(`} {
			if m := regexp.MustCompile(re).Find(page); m != nil {
				t.Errorf("%s: the page matches %s: %q", rn.path, re, m)
			}
		}
		// The only absolute URL is the SVG namespace, which is a name.
		if got := regexp.MustCompile(`https?://[^"' ]+`).FindAll(page, -1); len(got) != 1 || string(got[0]) != "http://www.w3.org/2000/svg" {
			var urls []string
			for _, u := range got {
				urls = append(urls, string(u))
			}
			t.Errorf("%s: URLs in the page: %v", rn.path, urls)
		}
		if n := bytes.Count(page, []byte("<script>")); n != 1 {
			t.Errorf("%d executable scripts, want 1", n)
		}
	}
}

// TestPageScripts checks that pageScripts names every script file of the
// page once: a file left out would be missing from every page. (A listed
// file that is not embedded stops the package at init.)
func TestPageScripts(t *testing.T) {
	files, err := fs.Glob(pageFiles, "page/*.js")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]int{}
	for _, name := range pageScripts {
		listed["page/"+name]++
	}
	for _, f := range files {
		if listed[f] != 1 {
			t.Errorf("%s is listed %d times in pageScripts", f, listed[f])
		}
	}
}

// TestSourceEmbedded checks that the C program's source is found next to
// the module and embedded, that the library sources DWARF names but that
// are not here are said to be missing, and that a directory given in
// Options is searched.
func TestSourceEmbedded(t *testing.T) {
	rn := calcRun(t)
	b := buildPage(t, rn, Options{})
	var calc *sourceFile
	missing := 0
	for i := range b.pg.ov.Files {
		f := &b.pg.ov.Files[i]
		if f.Name == "calc.c" {
			calc = f
		}
		if f.Path == "" {
			missing++
			if !strings.Contains(f.Missing, "not found") {
				t.Errorf("%s: missing %q", f.Name, f.Missing)
			}
		}
	}
	if calc == nil || calc.Path == "" || len(calc.Segs) == 0 {
		t.Fatalf("calc.c not embedded: %+v", calc)
	}
	src, err := os.ReadFile(calc.Path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	for _, seg := range calc.Segs {
		first := seg[0].(int)
		for k, l := range seg[1].([]string) {
			if lines[first-1+k] != l {
				t.Fatalf("calc.c:%d is %q on the page, %q in the file", first+k, l, lines[first-1+k])
			}
		}
	}
	if missing == 0 || len(b.pg.ov.Notes) == 0 || !strings.Contains(strings.Join(b.pg.ov.Notes, " "), "not found") {
		t.Errorf("%d files missing, notes %q", missing, b.pg.ov.Notes)
	}

	// The module copied elsewhere finds its source through --source.
	dir := t.TempDir()
	moved := *rn
	moved.path = dir + "/calc.wasm"
	if err := os.WriteFile(moved.path, rn.module, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dirs := range [][]string{nil, {strings.TrimSuffix(rn.path, "calc.wasm")}} {
		b := buildPage(t, &moved, Options{Module: moved.module, ModulePath: moved.path, SourceDirs: dirs})
		found := false
		for _, f := range b.pg.ov.Files {
			found = found || f.Name == "calc.c" && f.Path != ""
		}
		if found != (dirs != nil) {
			t.Errorf("source dirs %v: calc.c found: %v", dirs, found)
		}
	}
}

// TestInstructions checks the instruction listing against the blocks:
// the offsets it gives are instruction starts, every block starts at one,
// and calls name their callee.
func TestInstructions(t *testing.T) {
	b := buildPage(t, calcRun(t), Options{})
	i := b.row(t, "__original_main")
	d := &b.details[i]
	texts := strings.Split(strings.TrimSuffix(d.Instrs, "\n"), "\n")
	if len(texts) != len(d.Offs)-1 {
		t.Fatalf("%d instructions, %d offsets", len(texts), len(d.Offs))
	}
	starts := map[uint64]bool{}
	off := d.Offs[0]
	for k := range texts {
		starts[uint64(off)] = true
		off += d.Offs[k+1]
	}
	for n := 2; n < len(d.Blocks)/4; n++ {
		if !starts[d.Blocks[4*n]] {
			t.Errorf("block %d starts at %d, not an instruction", n, d.Blocks[4*n])
		}
	}
	if !strings.Contains(d.Instrs, "call ") || !regexp.MustCompile(`call \d+ <\w+>`).MatchString(d.Instrs) {
		t.Errorf("no named call in:\n%s", d.Instrs)
	}
	// A budget too small for a function leaves it out and says so.
	b = buildPage(t, calcRun(t), Options{MaxInstructions: 10})
	if b.details[i].Instrs != "" || !strings.Contains(strings.Join(b.pg.ov.Notes, " "), "not embedded") {
		t.Errorf("instructions embedded past the budget")
	}
}

// TestNoModule checks that a page is written from a profile alone, with
// paths as file offsets and no graphs.
func TestNoModule(t *testing.T) {
	rn := calcRun(t)
	r, err := report.Build(rn.prof, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, r, Options{}); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`id="fd0">([^<]*)</script>`).FindSubmatch(buf.Bytes())
	if m == nil {
		t.Fatal("no data for the first function")
	}
	var d struct {
		B []int   `json:"b"`
		P [][]any `json:"p"`
	}
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatal(err)
	}
	if d.B != nil || len(d.P) == 0 {
		t.Errorf("without the module: %s", m[1])
	}
}

// TestBigCounts checks that ids and counts past 2^53, which a browser's
// numbers cannot hold, are written as strings.
func TestBigCounts(t *testing.T) {
	p := &profile.Profile{Strategy: "sbl", Copies: 1, Complete: true, Functions: []profile.Function{{
		Index: 3, Name: "f", Status: "profiled", PossiblePaths: "18446744073709551615",
		Paths: []profile.Path{{ID: 1<<63 + 1, Count: 1<<60 + 3, Kind: profile.KindEntryExit, Blocks: []int{100}}},
	}}}
	r, err := report.Build(p, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`["9223372036854775809","1152921504606846979",0,[100],"0x64"`)) {
		t.Errorf("big numbers not written as strings")
	}
}
