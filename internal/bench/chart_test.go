package bench

import (
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func chartReport() *Report {
	sts := append([]Variant{SBL}, Partitioned...)
	r := &Report{Strategies: sts, GeoMean: map[string]float64{}}
	for i, name := range []string{"calc", "gofmt", "lua-<json>"} {
		p := ProgramResult{Name: name, Strategies: []Measure{{Strategy: SBL, WallRatio: 1.5, ProbeHits: 1000}}}
		for j, st := range Partitioned {
			p.Strategies = append(p.Strategies, Measure{Strategy: st, HitShare: 0.9 / float64(st.Copies) * float64(i+j+1) / 4})
		}
		r.Programs = append(r.Programs, p)
	}
	// A copy above SBL's hits raises the axis; a failed program has no
	// bars.
	r.Programs[1].Strategies[6].HitShare = 1.3
	r.Programs = append(r.Programs, ProgramResult{Name: "broken", Error: "trap", Strategies: []Measure{{Strategy: SBL}}})
	return r
}

type svgBar struct {
	program, strategy string
	y, height         float64
}

// parseBars parses an SVG document and returns its bars.
func parseBars(t *testing.T, r io.Reader) []svgBar {
	t.Helper()
	dec := xml.NewDecoder(r)
	var bars []svgBar
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the chart is not well-formed XML: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = el.Name.Local
		}
		attr := map[string]string{}
		for _, a := range el.Attr {
			attr[a.Name.Local] = a.Value
		}
		if el.Name.Local != "rect" || attr["class"] != "bar" {
			continue
		}
		y, err1 := strconv.ParseFloat(attr["y"], 64)
		h, err2 := strconv.ParseFloat(attr["height"], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bar with y %q height %q", attr["y"], attr["height"])
		}
		bars = append(bars, svgBar{attr["data-program"], attr["data-strategy"], y, h})
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return bars
}

func TestChart(t *testing.T) {
	r := chartReport()
	var b strings.Builder
	if err := r.WriteChart(&b); err != nil {
		t.Fatal(err)
	}
	bars := parseBars(t, strings.NewReader(b.String()))
	seen := map[string]int{}
	heights := map[string]float64{}
	for _, bar := range bars {
		seen[bar.program+"|"+bar.strategy]++
		heights[bar.program+"|"+bar.strategy] = bar.height
	}
	programs := []string{"calc", "gofmt", "lua-<json>", "average"}
	if len(bars) != len(programs)*len(Partitioned) {
		t.Errorf("%d bars, want %d", len(bars), len(programs)*len(Partitioned))
	}
	for _, p := range programs {
		for _, st := range Partitioned {
			if n := seen[p+"|"+st.String()]; n != 1 {
				t.Errorf("%s %s: %d bars, want 1", p, st, n)
			}
		}
	}
	// Heights are proportional to the shares, on an axis that reaches
	// 150% because of gofmt's 130%.
	unit := heights["calc|pbl-k2"] / r.Programs[0].Strategies[1].HitShare
	if got, want := unit*1.5, float64(chartPlotH); abs(got-want) > 0.5 {
		t.Errorf("100%% of the axis is %.1f units, want %d", got, chartPlotH)
	}
	var sum float64
	for _, p := range r.Programs[:3] {
		sum += p.Strategies[4].HitShare
	}
	if got, want := heights["average|p3-k2"], unit*sum/3; abs(got-want) > 0.2 {
		t.Errorf("average bar height %.1f, want %.1f", got, want)
	}
	if strings.Contains(b.String(), "broken") {
		t.Errorf("the failed program is in the chart")
	}

	// WriteFiles writes it next to results.md, which shows it.
	dir := t.TempDir()
	if err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, ChartName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n := len(parseBars(t, f)); n != len(bars) {
		t.Errorf("%s has %d bars, want %d", ChartName, n, len(bars))
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "]("+ChartName+")") {
		t.Errorf("results.md does not show the chart:\n%s", md)
	}

	// Without partitioned strategies there is no chart.
	r.Strategies = r.Strategies[:1]
	dir = t.TempDir()
	if err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ChartName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a chart without partitioned strategies: %v", err)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestShareTables: the hit shares over SBL's hits, over the hits of SBL
// placed by the profile (programs without that figure left out of that
// table and its average), and of the static plans.
func TestShareTables(t *testing.T) {
	r := chartReport()
	r.Programs[0].PlacedSBLHits = 500 // SBL's 1000 hits halved
	// calc: the hottest path ran 300 times of 800 path runs; SBL made
	// 1000 hits. The floor is 40% at k = 2, 30% from k = 4 on.
	r.Programs[0].HottestPath, r.Programs[0].PathExecutions = 300, 800
	for j := range r.Programs[0].Strategies[1:] {
		r.Programs[0].Strategies[j+1].StaticHitShare = 0.75
		r.Programs[0].Strategies[j+1].EstimateHitShare = 0.6
	}
	var b strings.Builder
	writeShares(&b, r)
	out := b.String()
	tables := strings.Split(out, "\n\n")
	var titles []string
	for i := 0; i+1 < len(tables); i += 2 {
		titles = append(titles, tables[i])
		rows := tables[i+1]
		switch i / 2 {
		case 0:
			// calc's PBL k=2 share is 0.9/2*1/4 = 11%.
			for _, want := range []string{"| calc | 11% |", "| gofmt |", "| lua-<json> |"} {
				if !strings.Contains(rows, want) {
					t.Errorf("first table lacks %q:\n%s", want, rows)
				}
			}
		case 1:
			// Over half the hits, calc's shares double; the others
			// have no placed figure.
			if !strings.Contains(rows, "| calc | 22% |") || strings.Contains(rows, "gofmt") {
				t.Errorf("placed table:\n%s", rows)
			}
			if !strings.Contains(rows, "| **average** | **22%** |") {
				t.Errorf("placed table's average:\n%s", rows)
			}
		case 2:
			if !strings.Contains(rows, "| calc | 60% | 60% |") {
				t.Errorf("estimate table:\n%s", rows)
			}
		case 3:
			if !strings.Contains(rows, "| calc | 75% | 75% |") {
				t.Errorf("static table:\n%s", rows)
			}
		case 4:
			if !strings.Contains(rows, "| program | k=2 | k=4 | k=8 |") || !strings.Contains(rows, "| calc | 40% | 30% | 30% |") ||
				strings.Contains(rows, "gofmt") || !strings.Contains(rows, "| **average** | **40%** | **30%** | **30%** |") {
				t.Errorf("floor table:\n%s", rows)
			}
		}
		if strings.Contains(rows, "broken") {
			t.Errorf("a failed program has shares:\n%s", rows)
		}
	}
	if len(titles) != 5 || !strings.Contains(titles[1], "placed by the profile") || !strings.Contains(titles[2], "static estimate") || !strings.Contains(titles[4], "floor") {
		t.Fatalf("tables %q:\n%s", titles, out)
	}
}
