// Score: a sampled profile against the exact counts of the same run, by
// recall and error of each length's true top k.

package osp

import (
	"cmp"
	"container/heap"
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

	"github.com/pathprof/pathprof/internal/stats"
)

// Score compares a sampled profile with the exact counts of the same run.
//
// For a ranking (the subpaths of one length by frequency, or the subpaths
// of every length by frequency × length) and a k:
//
//   - The true top k are the k subpaths ranked highest by their exact
//     counts (ties broken by key). c_k is the k-th one's value.
//   - Recall is the fraction of the profile's k highest-ranked subpaths
//     (by estimate) whose exact value is at least c_k, over min(k, number
//     of distinct subpaths). Counting every subpath tied with the k-th
//     as a hit keeps an arbitrary tie-break out of the figure.
//   - RecallNear counts, in the same way, every subpath whose exact value
//     is at least (1 − NearTie)·c_k: loops make rings of subpaths (the
//     same blocks entered at each of their offsets) whose counts differ
//     by a few in millions, and which of them are the "true" top k is
//     then decided by less than any sample can tell apart. Lua's
//     spectralnorm has c_10 = 3,600,600 for length 8 and over a dozen
//     subpaths within 0.02% below it; estimates within 5% found 2 of
//     the strict 10.
//   - The relative error of a subpath is |estimate − exact| / exact, with
//     estimate 0 for a subpath that is not in the profile; MedianError
//     and MaxError are taken over the true top k.
//   - Covered is the fraction of the true top k found in the profile
//     whose exact count lies within the profile's 95% interval,
//     estimate ± error: about 0.95 if the error bounds are right.
type Score struct {
	// Lengths holds one entry per length counted exactly.
	Lengths []Ranking `json:"lengths"`
	// Overall ranks the subpaths of every length together by frequency ×
	// length: the block entries they cover.
	Overall Ranking `json:"overall"`
}

// Ranking scores one ranking.
type Ranking struct {
	// Length is the subpaths' length, 0 for Overall.
	Length int `json:"length"`
	// Windows is the number of occurrences counted, Distinct the number
	// of distinct subpaths.
	Windows  uint64 `json:"windows"`
	Distinct int    `json:"distinct"`
	// Sampled is the number of the profile's subpaths in the ranking.
	Sampled int   `json:"sampled"`
	At      []AtK `json:"at"`
}

// AtK is the score of a ranking's top k.
type AtK struct {
	K      int     `json:"k"`
	Recall float64 `json:"recall"`
	// RecallNear and HitsNear count near ties as hits (NearTie).
	RecallNear  float64 `json:"recall_near"`
	HitsNear    int     `json:"hits_near"`
	Hits        int     `json:"hits"`
	MedianError float64 `json:"median_error"`
	MaxError    float64 `json:"max_error"`
	// InProfile is the number of the true top k that the profile has,
	// Covered the fraction of them whose exact count lies within their
	// estimate's 95% error bound (0 when InProfile is 0).
	InProfile int     `json:"in_profile"`
	Covered   float64 `json:"covered"`
	// Threshold is c_k: the exact count (or count × length) of the k-th.
	Threshold uint64 `json:"threshold"`
	// Top lists the true top k, best first.
	Top []Scored `json:"top,omitempty"`
}

// Scored is one subpath of a true top k.
type Scored struct {
	Length   int     `json:"length"`
	Key      uint64  `json:"key"`
	Exact    uint64  `json:"exact"`
	Estimate float64 `json:"estimate"`
	// Rank is its place in the profile's ranking (1 is first), 0 when it
	// is not in the profile.
	Rank int `json:"rank"`
}

// NearTie is how far below the k-th's exact value a subpath still counts
// as tied with it for RecallNear: 1%, a tenth of the count error that
// the estimates are asked to stay within.
const NearTie = 0.01

// ScoreProfile scores prof against ex at every k of ks (e.g. 10, 100).
func ScoreProfile(ex *Exact, prof *Profile, ks []int) (*Score, error) {
	est := make(map[int]map[uint64]estimate, len(ex.Lengths))
	for _, l := range ex.Lengths {
		est[l] = map[uint64]estimate{}
	}
	for _, sp := range prof.Subpaths {
		m := est[sp.Length]
		if m == nil {
			return nil, fmt.Errorf("the profile has subpaths of length %d, which were not counted", sp.Length)
		}
		// Two subpaths with one key (a collision) add up, errors too.
		k := HashOffsets(sp.Offsets())
		m[k] = estimate{m[k].value + sp.Estimate, m[k].error + sp.Error}
	}
	return scoreEstimates(ex, est, ks), nil
}

// scoreEstimates scores estimates, per length by key, against ex.
func scoreEstimates(ex *Exact, est map[int]map[uint64]estimate, ks []int) *Score {
	maxK := slices.Max(ks)
	s := &Score{}
	var all []candidate
	overall := Ranking{}
	for i, l := range ex.Lengths {
		counts := ex.Tables[i]
		r := Ranking{Length: l, Distinct: counts.Len(), Sampled: len(est[l]), Windows: counts.Total}
		overall.Windows += r.Windows
		overall.Distinct += r.Distinct
		overall.Sampled += r.Sampled
		top := topK(maxK, func(yield func(candidate)) {
			for k, c := range counts.All {
				yield(candidate{length: l, key: k, value: c, count: c})
			}
		})
		r.At = scoreAt(ks, top, r.Distinct, rankEstimates(l, est[l], 1), func(c candidate) uint64 { return counts.Get(c.key) }, est)
		s.Lengths = append(s.Lengths, r)
		for _, c := range top {
			all = append(all, candidate{length: l, key: c.key, value: c.count * uint64(l), count: c.count})
		}
	}
	// The overall top k are among the union of each length's top k.
	overallTop := topK(maxK, func(yield func(candidate)) {
		for _, c := range all {
			yield(c)
		}
	})
	var ranked []candidate
	for _, l := range ex.Lengths {
		ranked = append(ranked, rankEstimates(l, est[l], l)...)
	}
	sortCandidates(ranked, func(c candidate) float64 { return c.est })
	overall.At = scoreAt(ks, overallTop, overall.Distinct, ranked, func(c candidate) uint64 {
		i := slices.Index(ex.Lengths, c.length)
		return ex.Tables[i].Get(c.key) * uint64(c.length)
	}, est)
	s.Overall = overall
	return s
}

// estimate is a subpath's estimated count and its 95% error bound.
type estimate struct{ value, error float64 }

// candidate is a subpath in a ranking: value is what it is ranked by
// (exact), est its estimated value.
type candidate struct {
	length int
	key    uint64
	value  uint64
	count  uint64
	est    float64
}

// rankEstimates returns the profile's subpaths of one length ranked by
// estimate × weight.
func rankEstimates(length int, est map[uint64]estimate, weight int) []candidate {
	r := make([]candidate, 0, len(est))
	for k, e := range est {
		r = append(r, candidate{length: length, key: k, est: e.value * float64(weight)})
	}
	sortCandidates(r, func(c candidate) float64 { return c.est })
	return r
}

func sortCandidates(cs []candidate, by func(candidate) float64) {
	slices.SortFunc(cs, func(a, b candidate) int {
		if c := cmp.Compare(by(b), by(a)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.length, b.length); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
}

// scoreAt computes recall and errors at each k. top is the true ranking
// (at least max(ks) long unless there are fewer subpaths), ranked the
// profile's, value the exact value of a ranked subpath.
func scoreAt(ks []int, top []candidate, distinct int, ranked []candidate, value func(candidate) uint64, est map[int]map[uint64]estimate) []AtK {
	rankOf := map[[2]uint64]int{}
	for i, c := range ranked {
		rankOf[[2]uint64{uint64(c.length), c.key}] = i + 1
	}
	var out []AtK
	for _, k := range ks {
		a := AtK{K: k}
		n := min(k, len(top))
		if n == 0 {
			out = append(out, a)
			continue
		}
		a.Threshold = top[n-1].value
		near := float64(a.Threshold) * (1 - NearTie)
		for _, c := range ranked[:min(k, len(ranked))] {
			if v := value(c); v >= a.Threshold {
				a.Hits++
				a.HitsNear++
			} else if float64(v) >= near {
				a.HitsNear++
			}
		}
		a.Recall = float64(a.Hits) / float64(min(k, distinct))
		a.RecallNear = float64(a.HitsNear) / float64(min(k, distinct))
		errs := make([]float64, 0, n)
		covered := 0
		for _, c := range top[:n] {
			e, ok := est[c.length][c.key]
			d := math.Abs(e.value - float64(c.count))
			errs = append(errs, d/float64(c.count))
			if ok {
				a.InProfile++
				if d <= e.error {
					covered++
				}
			}
			a.Top = append(a.Top, Scored{Length: c.length, Key: c.key, Exact: c.count, Estimate: e.value,
				Rank: rankOf[[2]uint64{uint64(c.length), c.key}]})
		}
		if a.InProfile > 0 {
			a.Covered = float64(covered) / float64(a.InProfile)
		}
		a.MedianError = stats.Median(errs)
		a.MaxError = slices.Max(errs)
		out = append(out, a)
	}
	return out
}

// topK returns the k candidates of highest value, best first (ties by
// length, then key), in one pass with a heap.
func topK(k int, each func(yield func(candidate))) []candidate {
	h := &minHeap{}
	each(func(c candidate) {
		if h.Len() < k {
			heap.Push(h, c)
		} else if worse(h.cs[0], c) {
			h.cs[0] = c
			heap.Fix(h, 0)
		}
	})
	out := h.cs
	slices.SortFunc(out, func(a, b candidate) int {
		if worse(a, b) {
			return 1
		}
		if worse(b, a) {
			return -1
		}
		return 0
	})
	return out
}

// worse reports whether a ranks below b.
func worse(a, b candidate) bool {
	if a.value != b.value {
		return a.value < b.value
	}
	if a.length != b.length {
		return a.length > b.length
	}
	return a.key > b.key
}

type minHeap struct{ cs []candidate }

func (h *minHeap) Len() int           { return len(h.cs) }
func (h *minHeap) Less(i, j int) bool { return worse(h.cs[i], h.cs[j]) }
func (h *minHeap) Swap(i, j int)      { h.cs[i], h.cs[j] = h.cs[j], h.cs[i] }
func (h *minHeap) Push(x any)         { h.cs = append(h.cs, x.(candidate)) }
func (h *minHeap) Pop() any {
	c := h.cs[len(h.cs)-1]
	h.cs = h.cs[:len(h.cs)-1]
	return c
}

// WriteText writes the score as a table.
func (s *Score) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "length\tdistinct\toccurrences\tsampled\t")
	for _, a := range s.Overall.At {
		fmt.Fprintf(tw, "recall@%d\t(ties ±1%%)\tmedian err@%d\tmax err@%d\tin bound@%d\t", a.K, a.K, a.K, a.K)
	}
	fmt.Fprintln(tw)
	row := func(name string, r Ranking) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t", name, r.Distinct, r.Windows, r.Sampled)
		for _, a := range r.At {
			cov := math.NaN()
			if a.InProfile > 0 {
				cov = a.Covered
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t", percent(a.Recall), percent(a.RecallNear), percent(a.MedianError), percent(a.MaxError), percent(cov))
		}
		fmt.Fprintln(tw)
	}
	for _, r := range s.Lengths {
		row(fmt.Sprint(r.Length), r)
	}
	row("all (count×length)", s.Overall)
	return tw.Flush()
}

func percent(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}
