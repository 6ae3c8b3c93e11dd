package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pathprof/pathprof/internal/numfmt"
)

// Output file names inside the output directory.
const (
	MarkdownName = "results.md"
	JSONName     = "results.json"
)

// WriteFiles writes the report into dir as results.md and results.json,
// and, when it has partitioned strategies, the chart of their hits as
// hits.svg.
func (r *Report) WriteFiles(dir string) error {
	if r.hasShares() {
		var svg strings.Builder
		if err := r.WriteChart(&svg); err != nil {
			return err
		}
		if err := writeFileAtomic(filepath.Join(dir, ChartName), []byte(svg.String())); err != nil {
			return err
		}
	}
	return writeResults(dir, r.WriteMarkdown, r)
}

// writeResults writes results.md, by markdown, and results.json, v as
// indented JSON, into dir.
func writeResults(dir string, markdown func(io.Writer) error, v any) error {
	var md bytes.Buffer
	if err := markdown(&md); err != nil {
		return err
	}
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, MarkdownName), md.Bytes()); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, JSONName), append(js, '\n'))
}

// ReadReport reads a results.json file.
func ReadReport(path string) (*Report, error) {
	var r Report
	if err := readJSON(path, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// readJSON decodes the JSON file at path into v.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// WriteMarkdown writes the report as a markdown table, one row per
// program and a geometric-mean row, preceded by the run's facts and
// followed by the failures, if any, and a table of each program's static
// and dynamic facts.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	r.writeHeader(&b)
	pinned := ""
	if r.PinnedCPU != nil {
		pinned = fmt.Sprintf(", all on CPU %d", *r.PinnedCPU)
	}
	cpu := r.Measure == MeasureCPU
	if cpu {
		fmt.Fprintf(&b, "Medians of %d timed runs per build, original and instrumented interleaved%s, after one untimed check run. Times are the CPU time of the thread that ran the program (its host calls included), which leaves out the time other work on the machine held the CPU (not what it costs through shared caches); ratio = instrumented median / original median of it, and the geometric means are of it; wall ratio = the same for wall-clock time, which grows with the machine's load. The whole run took %s.\n\n", r.Runs, pinned, duration(r.Seconds))
	} else {
		fmt.Fprintf(&b, "Medians of %d timed runs per build, original and instrumented interleaved%s, after one untimed check run; times are wall-clock time; ratio = instrumented median / original median. The whole run took %s.\n\n", r.Runs, pinned, duration(r.Seconds))
	}
	if r.HitsOnly {
		b.WriteString("The PBL and P3 copies were only planned (`--hits-only`): their hits are computed from SBL's profile, and they were not timed. Copies that share out calls or loop iterations ran once, since their hits are exact only from what each counted, and their merged profile was checked against SBL's; the others were not run.\n\n")
	}

	unit := " ms"
	if cpu {
		unit = " CPU ms"
	}
	head := []string{"program", "original" + unit}
	align := []string{"---", "--:"}
	for _, st := range r.Strategies {
		label := strings.ToUpper(string(st.Name))
		if st.Copies > 1 {
			label += fmt.Sprintf(" k=%d", st.Copies)
		}
		head = append(head, label+unit, "ratio")
		align = append(align, "--:", "--:")
		if cpu {
			head = append(head, "wall ratio")
			align = append(align, "--:")
		}
	}
	// median is a build's median time by the report's measure.
	median := func(t *Timing) float64 {
		if cpu {
			return t.MedianCPUSeconds
		}
		return t.MedianSeconds
	}
	head = append(head, "probe hits", "paths executed", "instrument s")
	align = append(align, "--:", "--:", "--:")
	row := func(cells []string) { fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | ")) }
	row(head)
	row(align)
	var failed []string
	for _, p := range r.Programs {
		cells := []string{r.label(&p), msCell(median(&p.Original))}
		if p.Error != "" {
			failed = append(failed, fmt.Sprintf("- **%s FAILED**: %s", p.Name, oneLine(p.Error)))
		}
		for j := range r.Strategies {
			if j < len(p.Strategies) && p.Error == "" {
				m := p.Strategies[j]
				if m.WallRatio > 0 {
					cells = append(cells, msCell(median(&m.Timing)), ratioCell(r.Ratio(&m)))
					if cpu {
						cells = append(cells, fmt.Sprintf("%.2f", m.WallRatio))
					}
				} else {
					cells = append(cells, "", "not run") // HitsOnly
					if cpu {
						cells = append(cells, "")
					}
				}
			} else {
				cells = append(cells, "", "**FAILED**")
				if cpu {
					cells = append(cells, "")
				}
			}
		}
		var sbl Measure
		if len(p.Strategies) > 0 {
			sbl = p.Strategies[0]
		}
		if p.Error != "" && sbl.ProbeHits == 0 {
			cells = append(cells, "", "", secsCell(sbl.InstrumentSeconds))
		} else {
			cells = append(cells, numfmt.Thousands(sbl.ProbeHits), numfmt.Thousands(uint64(p.ExecutedPaths)), secsCell(sbl.InstrumentSeconds))
		}
		row(cells)
	}
	wall := func(m *Measure) float64 { return m.WallRatio }
	gmRow := func(title string, means map[string]float64, in func(*ProgramResult) bool) {
		var walls map[string]float64
		if cpu {
			walls = geoMeans(r, in, wall)
		}
		gm := []string{"**" + title + "**", ""}
		for _, st := range r.Strategies {
			gm = append(gm, "", boldMean(means, st))
			if cpu {
				gm = append(gm, boldMean(walls, st))
			}
		}
		row(append(gm, "", "", ""))
	}
	gmRow("geometric mean", r.GeoMean, func(*ProgramResult) bool { return true })
	if r.GeoMeanValidation != nil {
		gmRow("geometric mean, training", r.GeoMeanTraining, func(p *ProgramResult) bool { return !p.Validation })
		gmRow("geometric mean, validation (v)", r.GeoMeanValidation, func(p *ProgramResult) bool { return p.Validation })
		b.WriteString("\n(v): the validation set, which no change is tuned on.\n")
	}

	if len(failed) > 0 {
		fmt.Fprintf(&b, "\n%d of %d programs failed; the geometric mean leaves them out.\n\n%s\n", len(failed), len(r.Programs), strings.Join(failed, "\n"))
	}
	if r.hasShares() {
		writeShares(&b, r)
		fmt.Fprintf(&b, "\n![Slowest copy's probe hits relative to SBL, per program and strategy](%s)\n", ChartName)
	}
	b.WriteString("\n| program | module MB | functions | profiled | possible paths | paths executed | path executions |\n")
	b.WriteString("| --- | --: | --: | --: | --: | --: | --: |\n")
	for _, p := range r.Programs {
		if p.Functions == 0 {
			continue
		}
		row([]string{r.label(&p), fmt.Sprintf("%.2f", float64(p.Bytes)/1e6), numfmt.Thousands(uint64(p.Functions)), numfmt.Thousands(uint64(p.Profiled)),
			bigCell(p.PossiblePaths), numfmt.Thousands(uint64(p.ExecutedPaths)), numfmt.Thousands(p.PathExecutions)})
	}
	writeCosts(&b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCosts writes what each program cost besides run time: SBL's
// instrumentation time and copy size, the compile times of the original
// and the copy, and the benchmark's peak memory while it measured the
// program.
func writeCosts(b *strings.Builder, r *Report) {
	b.WriteString("\nWhat each program costs before it runs: SBL's instrumentation, its copy's size against the module's, both compiled by wazero (from the compilation cache when it had them: then the load time), and the benchmark's peak resident memory while it measured the program (every build and copy compiled and run):\n\n")
	b.WriteString("| program | instrument s | copy MB | copy / module | compile s, original | compile s, SBL | peak MB |\n")
	b.WriteString("| --- | --: | --: | --: | --: | --: | --: |\n")
	for _, p := range r.Programs {
		if p.Functions == 0 || len(p.Strategies) == 0 {
			continue
		}
		sbl := p.Strategies[0]
		ratio := ""
		if p.Bytes > 0 && sbl.CopyBytes > 0 {
			ratio = fmt.Sprintf("%.2f", float64(sbl.CopyBytes)/float64(p.Bytes))
		}
		copyMB, peak := "", ""
		if sbl.CopyBytes > 0 {
			copyMB = fmt.Sprintf("%.2f", float64(sbl.CopyBytes)/1e6)
		}
		if p.PeakRSSBytes > 0 {
			peak = fmt.Sprintf("%.0f", float64(p.PeakRSSBytes)/1e6)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.label(&p), secsCell(sbl.InstrumentSeconds), copyMB, ratio,
			secsCell(p.Original.CompileSeconds), secsCell(sbl.CompileSeconds), peak)
	}
}

// boldMean is the strategy's geometric mean in bold, or empty for none.
func boldMean(means map[string]float64, st Variant) string {
	g, ok := means[st.String()]
	if !ok {
		return ""
	}
	return fmt.Sprintf("**%.2f**", g)
}

// bigCell shows a decimal number of up to 12 digits in full and a longer
// one (possible paths reach 10^18) by its first three digits.
func bigCell(dec string) string {
	if len(dec) <= 12 {
		n, err := strconv.ParseUint(dec, 10, 64)
		if err != nil {
			return dec
		}
		return numfmt.Thousands(n)
	}
	return fmt.Sprintf("%s.%s×10^%d", dec[:1], dec[1:3], len(dec)-1)
}

func msCell(s float64) string {
	if s == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f", s*1e3)
}

func secsCell(s float64) string {
	if s == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f", s)
}

func duration(s float64) string {
	if s < 120 {
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%.1f min", s/60)
}

// oneLine keeps an error message on one markdown list line, shortened:
// results.json has all of it.
func oneLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 4 {
		lines = append(lines[:4], "...")
	}
	return strings.ReplaceAll(strings.Join(lines, " / "), "|", "\\|")
}

// writeShares writes the slowest copy's probe hits as a share of SBL's,
// per program and partitioned strategy, with the plans made from SBL's
// edge frequencies; the same over the hits of SBL with its probes placed
// by those frequencies too, which leaves the partitioning's own gain; the
// same for plans made from the static estimate and from static probe
// counts; and the floor of any
// partition of the paths.
func writeShares(b *strings.Builder, r *Report) {
	sts := r.Strategies[1:]
	var heads []string
	for _, st := range sts {
		heads = append(heads, fmt.Sprintf("%s k=%d", strings.ToUpper(string(st.Name)), st.Copies))
	}
	// each gives a program's shares, one per partitioned strategy, or
	// nil when it has none.
	each := func(share func(p *ProgramResult, m *Measure) float64) func(p *ProgramResult) []float64 {
		return func(p *ProgramResult) []float64 {
			if len(p.Strategies) != len(r.Strategies) {
				return nil
			}
			v := make([]float64, len(sts))
			for j := range sts {
				v[j] = share(p, &p.Strategies[j+1])
			}
			return v
		}
	}
	writeShareTable(b, r, "Slowest copy's probe hits as a share of SBL's, with a prior profile (computed from SBL's exact profile; plans use its edge frequencies, to price tasks and to place probes):",
		heads, each(func(p *ProgramResult, m *Measure) float64 { return m.HitShare }))
	placed := each(func(p *ProgramResult, m *Measure) float64 {
		return m.HitShare * float64(p.Strategies[0].ProbeHits) / float64(p.PlacedSBLHits)
	})
	writeShareTable(b, r, "The same over the hits SBL makes when its probes too are placed by the profile (computed): what partitioning gains by itself:",
		heads, func(p *ProgramResult) []float64 {
			if p.PlacedSBLHits == 0 {
				return nil
			}
			return placed(p)
		})
	writeShareTable(b, r, "The same without a prior profile, as a first run is planned: weighted by a static estimate of the run (loop nesting, the call graph, dispatch loops), over SBL's hits:",
		heads, each(func(p *ProgramResult, m *Measure) float64 { return m.EstimateHitShare }))
	writeShareTable(b, r, "The same, planned by static probe counts, as in the P3 paper, over SBL's hits:",
		heads, each(func(p *ProgramResult, m *Measure) float64 { return m.StaticHitShare }))
	if slices.ContainsFunc(r.Programs, func(p ProgramResult) bool { return p.PrefixHits > 0 }) {
		prefix := each(func(p *ProgramResult, m *Measure) float64 { return m.PrefixHitShare })
		writeShareTable(b, r, "The same, planned by the profile of the run's first tenth (a snapshot of an SBL run at a tenth of its time: what a short first run would give), over SBL's hits:",
			heads, func(p *ProgramResult) []float64 {
				if p.PrefixHits == 0 {
					return nil
				}
				return prefix(p)
			})
	}

	// The floor: the copy that counts a path runs a sequence each time it
	// runs, so the slowest of k copies runs at least as many as the
	// hottest path's runs, and k copies together at least one per path
	// run.
	var ks []int
	for _, st := range sts {
		if !slices.Contains(ks, st.Copies) {
			ks = append(ks, st.Copies)
		}
	}
	heads = nil
	for _, k := range ks {
		heads = append(heads, fmt.Sprintf("k=%d", k))
	}
	writeShareTable(b, r, "The floor of any partition of the paths: the copy that counts a path runs a sequence each time it runs, so the slowest of k copies makes at least max(the hottest path's runs, all path runs / k) hits, here as a share of SBL's (copies that share out a function's calls divide its paths' runs too, and can go below it):",
		heads, func(p *ProgramResult) []float64 {
			if len(p.Strategies) == 0 || p.Strategies[0].ProbeHits == 0 || p.HottestPath == 0 {
				return nil
			}
			v := make([]float64, len(ks))
			for j, k := range ks {
				v[j] = max(float64(p.HottestPath), float64(p.PathExecutions)/float64(k)) / float64(p.Strategies[0].ProbeHits)
			}
			return v
		})
}

// writeShareTable writes a table of percentages with a row per program
// that did not fail and has figures (shares returns nil for one that has
// none), and the average of each column, also over each set when the
// report has both; nothing if no program has any.
func writeShareTable(b *strings.Builder, r *Report, title string, heads []string, shares func(p *ProgramResult) []float64) {
	var rows strings.Builder
	// sums[0] over every program, [1] training, [2] validation.
	var sums [3][]float64
	var n [3]int
	for i := range sums {
		sums[i] = make([]float64, len(heads))
	}
	for i := range r.Programs {
		p := &r.Programs[i]
		v := shares(p)
		if p.Error != "" || v == nil {
			continue
		}
		set := 1
		if p.Validation {
			set = 2
		}
		n[0]++
		n[set]++
		cells := []string{r.label(p)}
		for j, x := range v {
			sums[0][j] += x
			sums[set][j] += x
			cells = append(cells, fmt.Sprintf("%.0f%%", 100*x))
		}
		fmt.Fprintf(&rows, "| %s |\n", strings.Join(cells, " | "))
	}
	if n[0] == 0 {
		return
	}
	align := slices.Repeat([]string{"--:"}, len(heads))
	fmt.Fprintf(b, "\n%s\n\n| program | %s |\n| --- | %s |\n", title, strings.Join(heads, " | "), strings.Join(align, " | "))
	b.WriteString(rows.String())
	for i, title := range []string{"average", "average, training", "average, validation (v)"} {
		if n[i] == 0 || i > 0 && (n[1] == 0 || n[2] == 0) {
			continue
		}
		cells := []string{"**" + title + "**"}
		for _, x := range sums[i] {
			cells = append(cells, fmt.Sprintf("**%.0f%%**", 100*x/float64(n[i])))
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
}

// label is a program's name in the tables, marked (v) when it is in the
// validation set of a run that has both sets.
func (r *Report) label(p *ProgramResult) string {
	if p.Validation && r.GeoMeanValidation != nil {
		return p.Name + " (v)"
	}
	return p.Name
}

// hasShares says whether some program has figures for every strategy and
// there are partitioned strategies: the share tables and the chart.
func (r *Report) hasShares() bool {
	if len(r.Strategies) < 2 {
		return false
	}
	for _, p := range r.Programs {
		if p.Error == "" && len(p.Strategies) == len(r.Strategies) {
			return true
		}
	}
	return false
}
