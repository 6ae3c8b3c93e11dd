package coverage

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/srcmap"
	"github.com/pathprof/pathprof/profile"
)

// TestBranchesFromPaths recounts what the paths' blocks say, without the
// numbering: an edge between two blocks of a path is crossed once per run
// of the path, and every block entered is left by one edge. Each branch's
// taken count must agree, and the taken counts of a block's edges sum to
// its entries (the profiles are complete; a block left by a back edge its
// paths do not name has those edges left out).
func TestBranchesFromPaths(t *testing.T) {
	for _, name := range []string{"calc", "vm-O0", "wordfreq-O0"} {
		r := profiled(t, name)
		type pair struct{ from, to int }
		pairs := map[pair]uint64{}
		entries := map[int]uint64{}
		for _, f := range r.prof.Functions {
			for _, p := range f.Paths {
				for i, b := range p.Blocks {
					entries[b] += p.Count
					if i > 0 {
						pairs[pair{p.Blocks[i-1], b}] += p.Count
					}
				}
				if strings.HasSuffix(p.Kind, "-exit") {
					pairs[pair{p.Blocks[len(p.Blocks)-1], -1}] += p.Count
				}
			}
		}
		left := map[int]uint64{}
		partial := map[int]bool{}
		checked := 0
		for _, f := range r.cov.Files {
			for _, br := range f.Branches {
				if br.Ran != (entries[br.from] > 0) {
					t.Errorf("%s: block at %d: ran %v, entered %d times", name, br.from, br.Ran, entries[br.from])
				}
				left[br.from] += br.Taken
				partial[br.from] = br.partial
				if br.back {
					continue
				}
				checked++
				if got := pairs[pair{br.from, br.to}]; got != br.Taken {
					t.Errorf("%s: edge %d->%d taken %d times, its paths cross it %d times", name, br.from, br.to, br.Taken, got)
				}
			}
		}
		warned := strings.Contains(strings.Join(r.cov.Warnings, " "), "back edges, which their paths do not tell apart")
		for b, n := range left {
			if partial[b] && !warned {
				t.Errorf("%s: block at %d has edges left out, without a warning", name, b)
			}
			if !partial[b] && n != entries[b] {
				t.Errorf("%s: block at %d entered %d times, left %d times", name, b, entries[b], n)
			}
		}
		if checked < 50 {
			t.Errorf("%s: only %d branches checked", name, checked)
		}
	}
}

// TestGenhtml renders the lcov of two programs with Debian's genhtml,
// which must take it without a warning and count what the file says.
func TestGenhtml(t *testing.T) {
	genhtml := needTools(t, "PATHPROF_SKIP_LCOV", "lcov", "genhtml")[0]
	for _, name := range []string{"calc", "vm-O0"} {
		r := profiled(t, name)
		dir := t.TempDir()
		info := filepath.Join(dir, name+".info")
		data := lcov(t, r.cov)
		if err := os.WriteFile(info, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(genhtml, "--branch-coverage", "--function-coverage", "-o", filepath.Join(dir, "html"), info)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 || bytes.Contains(bytes.ToLower(out), []byte("warning")) {
			t.Fatalf("genhtml: %v\n%s\n%s", err, out, stderr.Bytes())
		}
		// genhtml's totals are the file's.
		lh, lf := total(t, data, "LH:"), total(t, data, "LF:")
		fh, ff := total(t, data, "FNH:"), total(t, data, "FNF:")
		bh, bf := total(t, data, "BRH:"), total(t, data, "BRF:")
		for _, want := range []string{
			"lines......: .*\\(" + lh + " of " + lf + " lines\\)",
			"functions..: .*\\(" + fh + " of " + ff + " functions\\)",
			"branches...: .*\\(" + bh + " of " + bf + " branches\\)",
		} {
			if !regexp.MustCompile(want).Match(out) {
				t.Errorf("%s: genhtml's summary lacks %q:\n%s", name, want, out)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "html", "index.html")); err != nil {
			t.Error(err)
		}
		t.Logf("%s: %s of %s lines, %s of %s functions, %s of %s branches", name, lh, lf, fh, ff, bh, bf)
	}
}

// total sums the numbers of the records that start with prefix.
func total(t *testing.T, data []byte, prefix string) string {
	t.Helper()
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			var k int
			if _, err := fmt.Sscan(rest, &k); err != nil {
				t.Fatalf("bad record %q", l)
			}
			n += k
		}
	}
	return strconv.Itoa(n)
}

// TestCobertura checks the Cobertura file against the lcov one: the same
// lines with the same hits, the same branch totals, a method per
// function, and the path totals in a comment.
func TestCobertura(t *testing.T) {
	r := profiled(t, "calc")
	var b bytes.Buffer
	if err := r.cov.WriteCobertura(&b, "calc.wasm"); err != nil {
		t.Fatal(err)
	}
	var doc cobCoverage
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	data := lcov(t, r.cov)
	if strconv.Itoa(doc.LinesValid) != total(t, data, "LF:") || strconv.Itoa(doc.LinesCovered) != total(t, data, "LH:") ||
		strconv.Itoa(doc.BranchesValid) != total(t, data, "BRF:") || strconv.Itoa(doc.BranchesCovered) != total(t, data, "BRH:") {
		t.Errorf("totals: %d/%d lines, %d/%d branches", doc.LinesCovered, doc.LinesValid, doc.BranchesCovered, doc.BranchesValid)
	}
	var calc *cobClass
	for i, c := range doc.Packages.P[0].Classes.C {
		if c.Name == "calc.c" {
			calc = &doc.Packages.P[0].Classes.C[i]
		}
	}
	if calc == nil {
		t.Fatal("no class calc.c")
	}
	want := lcovLines(t, data, "calc.c")
	for _, l := range calc.Lines.L {
		if c, ok := want[l.Number]; !ok || c != l.Hits {
			t.Errorf("line %d: %d hits, lcov %d", l.Number, l.Hits, c)
		}
	}
	if len(calc.Lines.L) != len(want) || len(calc.Methods.M) < 10 {
		t.Errorf("%d lines (lcov %d), %d methods", len(calc.Lines.L), len(want), len(calc.Methods.M))
	}
	if !regexp.MustCompile(`<!-- paths .*; paths fn_maxcollatz: [1-9][0-9]* of [1-9][0-9]*, [1-9][0-9]* executions;`).Match(b.Bytes()) {
		t.Error("no path totals")
	}
}

// TestHostileNames checks that names from a module, which can hold any
// bytes, cannot add records to an lcov file or break the XML, and that the
// XML has the elements its DTD requires when they are empty.
func TestHostileNames(t *testing.T) {
	c := &Coverage{Files: []*File{{Name: "a.c", Path: "/x\nDA:1,1/a.c", Lines: []Line{{Number: 3, Count: 1}},
		Funcs: []*Func{{Name: "f,1\nFNDA:9,g -- x", Line: 3, Lines: []int{3}, PossiblePaths: "1"}}}}}
	var b bytes.Buffer
	if err := c.WriteLCOV(&b); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "DA:") && l != "DA:3,1" || strings.HasPrefix(l, "FNDA:9") {
			t.Errorf("injected record %q in:\n%s", l, b.String())
		}
	}
	b.Reset()
	if err := c.WriteCobertura(&b, "m.wasm"); err != nil {
		t.Fatal(err)
	}
	var doc cobCoverage
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	// coverage-04.dtd requires a class's methods and lines, and a
	// method's lines, even when there are none.
	c.Files = append(c.Files, &File{Name: "b.h", Path: "b.h"})
	c.Files[0].Funcs[0].Lines = nil
	b.Reset()
	if err := c.WriteCobertura(&b, "m.wasm"); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "<lines></lines>"); n != 2 || !strings.Contains(b.String(), "<methods></methods>") {
		t.Errorf("empty lists not written:\n%s", b.String())
	}
}

// TestNoDWARF checks the error for a module without line tables.
func TestNoDWARF(t *testing.T) {
	_, err := Build(&profile.Profile{}, []byte("\x00asm\x01\x00\x00\x00"), Options{Roots: srcmap.NewRoots("", nil)})
	if err == nil || !strings.Contains(err.Error(), "no DWARF line tables") {
		t.Errorf("err %v", err)
	}
}
