package coverage

// This file writes coverage as Cobertura XML (coverage-04.dtd), which CI
// services and IDEs read.

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strings"
)

type cobCoverage struct {
	XMLName         xml.Name `xml:"coverage"`
	LineRate        string   `xml:"line-rate,attr"`
	BranchRate      string   `xml:"branch-rate,attr"`
	LinesCovered    int      `xml:"lines-covered,attr"`
	LinesValid      int      `xml:"lines-valid,attr"`
	BranchesCovered int      `xml:"branches-covered,attr"`
	BranchesValid   int      `xml:"branches-valid,attr"`
	Complexity      string   `xml:"complexity,attr"`
	Version         string   `xml:"version,attr"`
	Timestamp       string   `xml:"timestamp,attr"`
	Sources         []string `xml:"sources>source"`
	Packages        cobPkgs  `xml:"packages"`
}

type cobPkg struct {
	Name       string     `xml:"name,attr"`
	LineRate   string     `xml:"line-rate,attr"`
	BranchRate string     `xml:"branch-rate,attr"`
	Complexity string     `xml:"complexity,attr"`
	Classes    cobClasses `xml:"classes"`
}

type cobClass struct {
	Name       string      `xml:"name,attr"`
	Filename   string      `xml:"filename,attr"`
	LineRate   string      `xml:"line-rate,attr"`
	BranchRate string      `xml:"branch-rate,attr"`
	Complexity string      `xml:"complexity,attr"`
	Paths      xml.Comment `xml:",comment"`
	Methods    cobMethods  `xml:"methods"`
	Lines      cobLines    `xml:"lines"`
}

type cobMethod struct {
	Name       string   `xml:"name,attr"`
	Signature  string   `xml:"signature,attr"`
	LineRate   string   `xml:"line-rate,attr"`
	BranchRate string   `xml:"branch-rate,attr"`
	Complexity string   `xml:"complexity,attr"`
	Lines      cobLines `xml:"lines"`
}

// The lists are wrapped in types of their own so that an empty one is
// still written: coverage-04.dtd requires the element.
type (
	cobPkgs struct {
		P []cobPkg `xml:"package"`
	}
	cobClasses struct {
		C []cobClass `xml:"class"`
	}
	cobMethods struct {
		M []cobMethod `xml:"method"`
	}
	cobLines struct {
		L []cobLine `xml:"line"`
	}
)

type cobLine struct {
	Number            int    `xml:"number,attr"`
	Hits              uint64 `xml:"hits,attr"`
	Branch            bool   `xml:"branch,attr"`
	ConditionCoverage string `xml:"condition-coverage,attr,omitempty"`
}

// WriteCobertura writes c as Cobertura XML: one package (the module, by
// name), a class per source file, a method per function, with line hits
// and, on lines with branches, their condition coverage. Each class's
// functions' path totals go in a comment inside it. Cobertura counts
// times in milliseconds since 1970; the timestamp is 0, so that one
// profile always gives the same file.
func (c *Coverage) WriteCobertura(w io.Writer, module string) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	doc := cobCoverage{Complexity: "0", Version: "pathprof", Timestamp: "0", Sources: []string{cwd}}
	pkg := cobPkg{Name: module, Complexity: "0"}
	var allLines, allHit, allBr, allBrHit int
	for _, f := range c.Files {
		byLine := map[int][2]int{} // line -> branches, taken
		for _, br := range f.Branches {
			t := byLine[br.Line]
			t[0]++
			if br.Taken > 0 {
				t[1]++
			}
			byLine[br.Line] = t
		}
		line := func(l Line) cobLine {
			cl := cobLine{Number: l.Number, Hits: l.Count}
			if t, ok := byLine[l.Number]; ok {
				cl.Branch = true
				cl.ConditionCoverage = fmt.Sprintf("%d%% (%d/%d)", 100*t[1]/t[0], t[1], t[0])
			}
			return cl
		}
		count := map[int]Line{}
		cls := cobClass{Name: f.Name, Filename: f.Path, Complexity: "0"}
		hit := 0
		for _, l := range f.Lines {
			count[l.Number] = l
			cls.Lines.L = append(cls.Lines.L, line(l))
			if l.Count > 0 {
				hit++
			}
		}
		brs, brHit := 0, 0
		for _, t := range byLine {
			brs += t[0]
			brHit += t[1]
		}
		cls.LineRate, cls.BranchRate = rate(hit, len(f.Lines)), rate(brHit, brs)
		var paths strings.Builder
		for _, fn := range f.Funcs {
			m := cobMethod{Name: fn.Name, Signature: "", Complexity: "0"}
			mHit, mBr, mBrHit := 0, 0, 0
			for _, n := range fn.Lines {
				cl := line(count[n])
				m.Lines.L = append(m.Lines.L, cl)
				if cl.Hits > 0 {
					mHit++
				}
				mBr += byLine[n][0]
				mBrHit += byLine[n][1]
			}
			m.LineRate, m.BranchRate = rate(mHit, len(fn.Lines)), rate(mBrHit, mBr)
			cls.Methods.M = append(cls.Methods.M, m)
			fmt.Fprintf(&paths, " paths %s: %d of %s, %d executions;", fn.Name, fn.Paths, fn.PossiblePaths, fn.Executions)
		}
		if paths.Len() > 0 {
			cls.Paths = xml.Comment(commentSafe(strings.TrimSuffix(paths.String(), ";") + " "))
		}
		pkg.Classes.C = append(pkg.Classes.C, cls)
		allLines += len(f.Lines)
		allHit += hit
		allBr += brs
		allBrHit += brHit
	}
	pkg.LineRate, pkg.BranchRate = rate(allHit, allLines), rate(allBrHit, allBr)
	doc.LineRate, doc.BranchRate = pkg.LineRate, pkg.BranchRate
	doc.LinesCovered, doc.LinesValid, doc.BranchesCovered, doc.BranchesValid = allHit, allLines, allBrHit, allBr
	doc.Packages.P = []cobPkg{pkg}
	if _, err := io.WriteString(w, xml.Header+"<!DOCTYPE coverage SYSTEM \"http://cobertura.sourceforge.net/xml/coverage-04.dtd\">\n"); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n")
	return err
}

// rate is n/d as Cobertura writes it; 1 when there is nothing to cover.
func rate(n, d int) string {
	if d == 0 {
		return "1"
	}
	return fmt.Sprintf("%.4f", float64(n)/float64(d))
}

// commentSafe keeps a comment's text from ending the comment: XML forbids
// "--" inside one.
func commentSafe(s string) string {
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "- -")
	}
	return s
}
