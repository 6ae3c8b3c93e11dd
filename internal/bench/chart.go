package bench

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"github.com/pathprof/pathprof/profile"
)

// ChartName is the chart's file name inside the output directory.
const ChartName = "hits.svg"

// Chart layout, in SVG user units (pixels at 100%).
const (
	chartBarW     = 9
	chartGroupGap = 16
	chartPlotH    = 260
	chartLeft     = 56
	chartRight    = 20
	chartTop      = 64
	chartBottom   = 84
)

// p3Targets are issue 4's targets for P3's average share of SBL's hits,
// and p3Paper the figures the P3 paper reports, per number of copies;
// the chart marks them on the average group's P3 bars.
var (
	p3Targets = map[int]float64{2: 0.55, 4: 0.32, 8: 0.20}
	p3Paper   = map[int]float64{2: 0.77, 4: 0.57, 8: 0.44}
)

// chartColors are the bars' fills per strategy name, lightest for the
// fewest copies: PBL in blues, P3 in oranges, as in the P3 paper's
// figures.
var chartColors = map[profile.Strategy][]string{
	profile.PBL: {"#9ecae1", "#4292c6", "#08519c"},
	profile.P3:  {"#fdae6b", "#f16913", "#a63603"},
}

// WriteChart writes an SVG bar chart of the slowest copy's probe hits as a
// share of SBL's: a group of bars per program (one per partitioned
// strategy, in the report's order) and a last group with each strategy's
// average, like figures 5 to 7 of the P3 paper. Failed programs are left
// out, as in the table. On the average group's P3 bars, short lines mark
// issue 4's target and the paper's figure. A report without partitioned
// strategies has nothing to chart.
func (r *Report) WriteChart(w io.Writer) error {
	if len(r.Strategies) < 2 {
		return fmt.Errorf("the report has no partitioned strategies to chart")
	}
	sts := r.Strategies[1:]
	type group struct {
		name   string
		shares []float64
	}
	var groups []group
	sums := make([]float64, len(sts))
	for _, p := range r.Programs {
		if p.Error != "" || len(p.Strategies) != len(r.Strategies) {
			continue
		}
		g := group{name: p.Name}
		for j := range sts {
			v := p.Strategies[j+1].HitShare
			g.shares = append(g.shares, v)
			sums[j] += v
		}
		groups = append(groups, g)
	}
	if len(groups) == 0 {
		return fmt.Errorf("no program has figures for every strategy")
	}
	avg := group{name: "average"}
	for j := range sts {
		avg.shares = append(avg.shares, sums[j]/float64(len(groups)))
	}
	groups = append(groups, avg)

	// The axis runs to 100% (SBL), or higher in steps of 25% when a
	// copy has more hits than SBL (a selective copy's probes also run on
	// paths it does not count).
	top := 1.0
	for _, g := range groups {
		for _, v := range g.shares {
			top = max(top, math.Ceil(v*4)/4)
		}
	}
	groupW := len(sts)*chartBarW + chartGroupGap
	// Wide enough for the title and the legend, however few the groups.
	legendW := 2 * (16 + 7*len("P3 target (issue 4)") + 18)
	for _, st := range sts {
		legendW += 16 + 7*len(strategyLabel(st)) + 18
	}
	width := chartLeft + max(len(groups)*groupW, legendW, 540) + chartRight
	height := chartTop + chartPlotH + chartBottom
	y := func(v float64) float64 { return chartTop + chartPlotH*(1-v/top) }

	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">
`, width, height, width, height)
	fmt.Fprintf(&b, "<title>Slowest copy's probe hits relative to SBL</title>\n")
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14" font-weight="bold">Slowest copy's probe hits relative to SBL (lower is better; ideal 1/k)</text>`+"\n", chartLeft)

	// Legend.
	lx := chartLeft
	for j, st := range sts {
		fmt.Fprintf(&b, `<rect x="%d" y="30" width="12" height="12" fill="%s"/><text x="%d" y="40">%s</text>`+"\n",
			lx, chartColor(sts, j), lx+16, html.EscapeString(strategyLabel(st)))
		lx += 16 + 7*len(strategyLabel(st)) + 18
	}

	fmt.Fprintf(&b, `<line x1="%d" y1="36" x2="%d" y2="36" stroke="black" stroke-width="2"/><text x="%d" y="40">P3 target (issue 4)</text>`+"\n", lx, lx+12, lx+16)
	lx += 16 + 7*len("P3 target (issue 4)") + 18
	fmt.Fprintf(&b, `<line x1="%d" y1="36" x2="%d" y2="36" stroke="#777777" stroke-width="2"/><text x="%d" y="40">P3 paper</text>`+"\n", lx, lx+12, lx+16)

	// Grid and axis labels every 25%.
	for v := 0.0; v <= top+1e-9; v += 0.25 {
		stroke, dash := "#dddddd", ""
		if v == 1 {
			stroke, dash = "#888888", ` stroke-dasharray="4 3"`
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s"%s/>`+"\n",
			chartLeft, y(v), width-chartRight, y(v), stroke, dash)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%.0f%%</text>`+"\n", chartLeft-6, y(v)+4, 100*v)
	}
	fmt.Fprintf(&b, `<text transform="translate(14 %d) rotate(-90)" text-anchor="middle">hits / SBL's hits</text>`+"\n", chartTop+chartPlotH/2)

	// Bars.
	for i, g := range groups {
		x0 := chartLeft + i*groupW + chartGroupGap/2
		if g.name == "average" {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#f2f2f2"/>`+"\n",
				x0-chartGroupGap/2, chartTop, groupW, chartPlotH)
		}
		for j, v := range g.shares {
			x := x0 + j*chartBarW
			fmt.Fprintf(&b, `<rect class="bar" data-program="%s" data-strategy="%s" x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%s %s: %.1f%%</title></rect>`+"\n",
				html.EscapeString(g.name), sts[j], x, y(v), chartBarW-1, y(0)-y(v), chartColor(sts, j),
				html.EscapeString(g.name), html.EscapeString(strategyLabel(sts[j])), 100*v)
		}
		if g.name == "average" {
			for j, st := range sts {
				if st.Name != profile.P3 {
					continue
				}
				x := x0 + j*chartBarW
				for _, m := range []struct {
					v     float64
					class string
				}{{p3Paper[st.Copies], "paper"}, {p3Targets[st.Copies], "target"}} {
					if m.v == 0 {
						continue
					}
					stroke := "black"
					if m.class == "paper" {
						stroke = "#777777"
					}
					fmt.Fprintf(&b, `<line class="%s" x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n",
						m.class, x-2, y(m.v), x+chartBarW+1, y(m.v), stroke)
				}
			}
		}
		lx := x0 + len(g.shares)*chartBarW/2
		weight := ""
		if g.name == "average" {
			weight = ` font-weight="bold"`
		}
		fmt.Fprintf(&b, `<text transform="translate(%d %d) rotate(-45)" text-anchor="end"%s>%s</text>`+"\n",
			lx, chartTop+chartPlotH+14, weight, html.EscapeString(g.name))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="black"/>`+"\n", chartLeft, y(0), width-chartRight, y(0))
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%.1f" stroke="black"/>`+"\n", chartLeft, chartTop, chartLeft, y(0))
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// chartColor is strategy j's fill: its name's palette, darker with each
// further strategy of the same name.
func chartColor(sts []Variant, j int) string {
	pal, ok := chartColors[sts[j].Name]
	if !ok {
		pal = []string{"#bbbbbb", "#777777", "#333333"}
	}
	n := 0
	for _, st := range sts[:j] {
		if st.Name == sts[j].Name {
			n++
		}
	}
	return pal[min(n, len(pal)-1)]
}

func strategyLabel(st Variant) string {
	if st.Copies <= 1 {
		return strings.ToUpper(string(st.Name))
	}
	return fmt.Sprintf("%s k=%d", strings.ToUpper(string(st.Name)), st.Copies)
}
