package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pathprof/pathprof/internal/numfmt"
	"github.com/pathprof/pathprof/internal/osp"
	"github.com/pathprof/pathprof/internal/stats"
)

// WriteMarkdown writes the report: the run's facts, the overhead table
// with its geometric means, the accuracy totals, a table per program and
// memory bound, and one per program and length at the report's bound.
func (r *OSPReport) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	r.writeHeader(&b)
	pinned := ""
	if r.PinnedCPU != nil {
		pinned = fmt.Sprintf(" (the program's thread on CPU %d, the sampling worker's anywhere)", *r.PinnedCPU)
	}
	st := r.Sampling
	unboundedRun := ""
	if r.UnboundedSame.Lengths > 0 {
		unboundedRun = ", and so are the same samples counted with no bound (taken again in an untimed run after the timed ones)"
	}
	compact := ""
	if !st.Compact {
		compact = " --compact=false"
	}
	if st.Concise {
		compact += " --concise"
	}
	fmt.Fprintf(&b, "Settings: `--memory %d --lengths %s --skip %g --seed %d%s`. Medians of %d timed runs per build, original and OSP interleaved%s, after one untimed check run; "+
		"CPU is the process's CPU time, the sampling worker's included; the ratio of minima is the fastest OSP run over the fastest original. "+
		"Then one run counts every subpath exactly, and the profile is scored against it%s. The whole run took %s.\n\n",
		st.Memory, numfmt.Ints(st.Lengths), st.MeanSkip, st.Seed, compact, r.Runs, pinned, unboundedRun, duration(r.Seconds))

	row := func(cells ...string) { fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | ")) }
	row("program", "block entries", "samples", "original ms", "OSP ms", "ratio", "ratio (CPU)", "ratio of minima", "pair ratios", "hot list bytes", "subpaths kept", "exact counting s")
	row("---", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "---", "--:", "--:", "--:")
	var failed []string
	for _, p := range r.Programs {
		if p.Error != "" {
			failed = append(failed, fmt.Sprintf("- **%s FAILED**: %s", p.Name, oneLine(p.Error)))
			row(p.Name, "", "", "", "", "**FAILED**", "", "", "", "", "", "")
			continue
		}
		var pairs []float64
		for i := range min(len(p.Sampled.Seconds), len(p.Original.Seconds)) {
			pairs = append(pairs, p.Sampled.Seconds[i]/p.Original.Seconds[i])
		}
		pairCell := ""
		if len(pairs) > 0 {
			pairCell = fmt.Sprintf("%.2f–%.2f", slices.Min(pairs), slices.Max(pairs))
		}
		hot, kept := "", ""
		if len(p.Scores) > 0 {
			hot, kept = numfmt.Thousands(uint64(p.Scores[0].HotListBytes)), numfmt.Thousands(uint64(p.Scores[0].Pairs))
		}
		row(p.Name, numfmt.Thousands(p.BlockEntries), numfmt.Thousands(p.Samples), msCell(p.Original.MedianSeconds), msCell(p.Sampled.MedianSeconds),
			fmt.Sprintf("%.2f", p.Ratio), ratioCell(p.CPURatio), fmt.Sprintf("%.2f", p.MinRatio), pairCell, hot, kept, fmt.Sprintf("%.1f", p.TraceSeconds))
	}
	g := r.GeoMean
	row("**geometric mean**", "", "", "", "", boldRatio(g.Wall), boldRatio(g.CPU), boldRatio(g.Minima), "", "", "", "")
	if len(failed) > 0 {
		fmt.Fprintf(&b, "\n%d of %d programs failed; the means and totals leave them out.\n\n%s\n", len(failed), len(r.Programs), strings.Join(failed, "\n"))
	}

	fmt.Fprintf(&b, "\nOverhead: geometric mean %.2f (CPU %s, ratio of minima %.2f; target at most %.2f).\n", g.Wall, ratioCell(g.CPU), g.Minima, TargetOverhead)
	acc := slices.Clone(r.Accuracy)
	slices.SortStableFunc(acc, func(a, b OSPAccuracy) int { return a.Memory - b.Memory })
	for _, a := range acc {
		fmt.Fprintf(&b, "At `--memory %d`: %d of %d lengths meet recall@10 ≥ %.0f%% with median error@10 < %.0f%%, %d counting near ties (within %.0f%% of the 10th's count); lengths up to 16: %d of %d (%d).\n",
			a.Memory, a.Meet, a.Lengths, 100*TargetRecall, 100*TargetError, a.MeetNear, 100*osp.NearTie, a.ShortMeet, a.Short, a.ShortNear)
	}
	if u, e := r.UnboundedSame, r.UnboundedEvery; u.Lengths > 0 {
		fmt.Fprintf(&b, "The same samples counted with no bound: the hot list's windows meet the target at %d of %d lengths (%d with near ties; up to 16: %d (%d)), every window of each sample at %d (%d; up to 16: %d (%d)). "+
			"A length that every window misses is beyond what these samples tell, whatever the bound and the windows.\n",
			u.Meet, u.Lengths, u.MeetNear, u.ShortMeet, u.ShortNear, e.Meet, e.MeetNear, e.ShortMeet, e.ShortNear)
	}

	b.WriteString("\nPer program and memory bound: the lengths whose true top 10 meets the target, strictly and with near ties; the medians over lengths of recall@10 and of the median error@10; the hot list's bytes and the longest length's τ:\n\n")
	row("program", "--memory", "lengths", "meeting both", "(ties ±1%)", "median recall@10", "median of median err@10", "hot list bytes", "τ (longest)")
	row("---", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:")
	for _, p := range r.Programs {
		if p.Error != "" {
			continue
		}
		scores := slices.Clone(p.Scores)
		slices.SortStableFunc(scores, func(a, b OSPScore) int { return a.Memory - b.Memory })
		for _, s := range scores {
			n, meet, near := s.meets(1 << 30)
			rec, errs := medians(&s.Score)
			tau := ""
			if len(s.Tau) > 0 {
				tau = fmt.Sprintf("%.3g", s.Tau[len(s.Tau)-1])
			}
			row(p.Name, numfmt.Thousands(uint64(s.Memory)), fmt.Sprint(n), fmt.Sprint(meet), fmt.Sprint(near), percent(rec), percent(errs),
				numfmt.Thousands(uint64(s.HotListBytes)), tau)
		}
		for _, u := range p.Unbounded {
			n, meet, near := meets(&u.Score, 1<<30)
			rec, errs := medians(&u.Score)
			row(p.Name, unboundedName(u.Every), fmt.Sprint(n), fmt.Sprint(meet), fmt.Sprint(near), percent(rec), percent(errs), "", "")
		}
	}

	fmt.Fprintf(&b, "\nPer length at `--memory %d` (recall of the true top k among the profile's top k; relative count error over the true top k; of the true top 100 that the profile has, the share whose exact count lies within the 95%% error bound):\n\n", st.Memory)
	head := []string{"program", "length", "distinct", "τ", "recall@10", "(ties ±1%)", "median err@10", "max err@10", "recall@100", "median err@100", "in bound@100"}
	align := []string{"---", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:"}
	withUnbounded := r.UnboundedSame.Lengths > 0
	if withUnbounded {
		b.WriteString("The last two columns score the same samples counted with no bound, the hot list's windows and every window: recall@10 / median err@10.\n\n")
		head, align = append(head, "no bound", "no bound, every window"), append(align, "--:", "--:")
	}
	row(head...)
	row(align...)
	for _, p := range r.Programs {
		if p.Error != "" || len(p.Scores) == 0 {
			continue
		}
		s := p.Scores[0]
		for i, l := range append(slices.Clone(s.Score.Lengths), s.Score.Overall) {
			name, tau := fmt.Sprint(l.Length), ""
			if l.Length == 0 {
				name = "all (×length)"
			} else if i < len(s.Tau) {
				tau = fmt.Sprintf("%.3g", s.Tau[i])
			}
			if len(l.At) < 2 {
				continue
			}
			at10, at100 := l.At[0], l.At[1]
			cov := "-"
			if at100.InProfile > 0 {
				cov = fmt.Sprintf("%s of %d", percent(at100.Covered), at100.InProfile)
			}
			cells := []string{p.Name, name, numfmt.Thousands(uint64(l.Distinct)), tau, percent(at10.Recall), percent(at10.RecallNear), percent(at10.MedianError),
				percent(at10.MaxError), percent(at100.Recall), percent(at100.MedianError), cov}
			if !withUnbounded {
				row(cells...)
				continue
			}
			ub := []string{"-", "-"}
			for _, u := range p.Unbounded {
				k := 0
				if u.Every {
					k = 1
				}
				rs := append(slices.Clone(u.Score.Lengths), u.Score.Overall)
				if i < len(rs) && rs[i].Length == l.Length && len(rs[i].At) > 0 {
					ub[k] = percent(rs[i].At[0].Recall) + " / " + percent(rs[i].At[0].MedianError)
				}
			}
			row(append(cells, ub...)...)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// medians returns the medians over sc's lengths of recall@10 and of the
// median error@10.
func medians(sc *osp.Score) (recall, err float64) {
	var rec, errs []float64
	for _, l := range sc.Lengths {
		rec, errs = append(rec, l.At[0].Recall), append(errs, l.At[0].MedianError)
	}
	return stats.Median(rec), stats.Median(errs)
}

// unboundedName names an unbounded count in the --memory column.
func unboundedName(every bool) string {
	if every {
		return "none, every window"
	}
	return "none"
}

func percent(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// ratioCell shows a ratio, or "-" where it was not measured.
func ratioCell(x float64) string {
	if x <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}

func boldRatio(x float64) string {
	if x <= 0 {
		return ""
	}
	return fmt.Sprintf("**%.2f**", x)
}
