// Package inspect summarises a module's functions: blocks, edges, loops and
// acyclic paths per function, and writes one function's graphs as Graphviz.
package inspect

import (
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/wasm"
)

// Func is the summary of one defined function.
type Func struct {
	Index     uint32 `json:"index"` // in the function index space
	Name      string `json:"name,omitempty"`
	Blocks    int    `json:"blocks"`
	Edges     int    `json:"edges"`
	Loops     int    `json:"loops"`
	BackEdges int    `json:"back_edges"`
	// Paths is the exact number of acyclic paths, as a decimal string
	// because it may exceed 2^64.
	Paths string `json:"paths"`
	// Fits is false when the path count does not fit a signed 64-bit
	// path register.
	Fits  bool   `json:"fits_i64"`
	Error string `json:"error,omitempty"`
}

// Summary is the report for a module.
type Summary struct {
	Functions []Func `json:"functions"`
	Totals    Totals `json:"totals"`
}

// Totals sums the per-function figures.
type Totals struct {
	Imported  uint32 `json:"imported_functions"`
	Defined   int    `json:"defined_functions"`
	Blocks    int    `json:"blocks"`
	Edges     int    `json:"edges"`
	Loops     int    `json:"loops"`
	Paths     string `json:"paths"`
	Overflows int    `json:"functions_over_i64"`
}

// Options select what Module reports.
type Options struct {
	// Func restricts the report to functions whose name or index matches.
	Func string
	CFG  cfg.Options
}

// Module summarises every defined function of m.
func Module(m *wasm.Module, opt Options) (*Summary, error) {
	s := &Summary{}
	s.Totals.Imported = m.NumImportedFuncs
	total := new(big.Int)
	for i := range m.Code {
		idx := m.NumImportedFuncs + uint32(i)
		name := m.FuncName(idx)
		if opt.Func != "" && !Matches(opt.Func, idx, name) {
			continue
		}
		f := Func{Index: idx, Name: name}
		g, err := cfg.Build(m, i, opt.CFG)
		if err != nil {
			f.Error = err.Error()
			s.Functions = append(s.Functions, f)
			continue
		}
		d := g.DAG()
		pc := d.NumPaths()
		f.Blocks = g.NumBlocks()
		f.Edges = len(g.Edges) - 1 // the virtual entry edge is not the program's
		f.Loops = len(g.Loops())
		f.BackEdges = len(g.BackEdges())
		f.Paths = pc.String()
		f.Fits = pc.Fits63()
		s.Functions = append(s.Functions, f)
		s.Totals.Defined++
		s.Totals.Blocks += f.Blocks
		s.Totals.Edges += f.Edges
		s.Totals.Loops += f.Loops
		if !f.Fits {
			s.Totals.Overflows++
		}
		total.Add(total, pc.Int())
	}
	if opt.Func != "" && len(s.Functions) == 0 {
		return nil, fmt.Errorf("no defined function matches %q", opt.Func)
	}
	s.Totals.Paths = total.String()
	return s, nil
}

// Matches reports whether sel names the function: its index, its exact
// name, or (when no name is equal) a substring of its name.
func Matches(sel string, idx uint32, name string) bool {
	return sel == fmt.Sprint(idx) || sel == name
}

// Find returns the defined-function position (into m.Code) selected by sel.
func Find(m *wasm.Module, sel string) (int, error) {
	var hits []int
	for i := range m.Code {
		idx := m.NumImportedFuncs + uint32(i)
		if Matches(sel, idx, m.FuncName(idx)) {
			return i, nil
		}
		if strings.Contains(m.FuncName(idx), sel) {
			hits = append(hits, i)
		}
	}
	switch len(hits) {
	case 0:
		return 0, fmt.Errorf("no defined function is named %q or has index %s", sel, sel)
	case 1:
		return hits[0], nil
	}
	var names []string
	for _, h := range hits[:min(len(hits), 5)] {
		names = append(names, m.FuncName(m.NumImportedFuncs+uint32(h)))
	}
	return 0, fmt.Errorf("%d functions match %q (%s...): give the exact name or the index", len(hits), sel, strings.Join(names, ", "))
}

// WriteText prints the summary as an aligned table.
func WriteText(w io.Writer, s *Summary) error {
	fmt.Fprintf(w, "%7s %7s %7s %6s %22s  %s\n", "index", "blocks", "edges", "loops", "acyclic paths", "name")
	for _, f := range s.Functions {
		if f.Error != "" {
			fmt.Fprintf(w, "%7d %7s %7s %6s %22s  %s: %s\n", f.Index, "-", "-", "-", "-", f.Name, f.Error)
			continue
		}
		paths := f.Paths
		if len(paths) > 22 {
			paths = fmt.Sprintf("~%.3e", mustFloat(paths))
		}
		if !f.Fits {
			paths += "*"
		}
		fmt.Fprintf(w, "%7d %7d %7d %6d %22s  %s\n", f.Index, f.Blocks, f.Edges, f.Loops, paths, f.Name)
	}
	t := s.Totals
	_, err := fmt.Fprintf(w, "total: %d defined functions (%d imported), %d blocks, %d edges, %d loops, %s acyclic paths; %d functions have more paths than a 64-bit register holds (*)\n",
		t.Defined, t.Imported, t.Blocks, t.Edges, t.Loops, t.Paths, t.Overflows)
	return err
}

func mustFloat(s string) float64 {
	f, _, _ := big.ParseFloat(s, 10, 64, big.ToNearestEven)
	x, _ := f.Float64()
	return x
}

// WriteDot writes the control-flow graph and the Ball-Larus DAG of one
// function as two Graphviz clusters.
func WriteDot(w io.Writer, m *wasm.Module, def int, opt cfg.Options) error {
	g, err := cfg.Build(m, def, opt)
	if err != nil {
		return err
	}
	d := g.DAG()
	idx := m.NumImportedFuncs + uint32(def)
	name := m.FuncName(idx)
	if name == "" {
		name = fmt.Sprintf("func%d", idx)
	}
	off := m.Code[def].OrigOff
	label := func(n int) string {
		switch n {
		case cfg.Entry:
			return "entry"
		case cfg.Exit:
			return "exit"
		}
		b := g.Blocks[n]
		return fmt.Sprintf("B%d\\n0x%x-0x%x\\n%d instrs", n, off+int(b.Start), off+int(b.End), b.Instrs)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "digraph %q {\n  node [shape=box fontname=monospace fontsize=10];\n", name)
	for _, part := range []string{"cfg", "dag"} {
		fmt.Fprintf(&sb, "  subgraph cluster_%s {\n    label=%q;\n", part, strings.ToUpper(part)+" of "+name)
		for n := range g.Blocks {
			fmt.Fprintf(&sb, "    %s_%d [label=\"%s\"];\n", part, n, label(n))
		}
		if part == "cfg" {
			for _, e := range g.Edges {
				style := ""
				if e.Back {
					style = " style=dashed color=red"
				}
				fmt.Fprintf(&sb, "    cfg_%d -> cfg_%d [label=%q%s];\n", e.From, e.To, e.Kind.String(), style)
			}
		} else {
			for _, e := range d.Edges {
				style := ""
				if e.Orig < 0 {
					style = " style=dotted color=blue"
				}
				fmt.Fprintf(&sb, "    dag_%d -> dag_%d [label=%q%s];\n", e.From, e.To, e.Kind.String(), style)
			}
		}
		sb.WriteString("  }\n")
	}
	sb.WriteString("}\n")
	_, err = io.WriteString(w, sb.String())
	return err
}
