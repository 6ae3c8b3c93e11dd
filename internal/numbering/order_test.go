package numbering

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/dagtest"
)

// tieWeights is randWeights with more ties and with the values that
// compare oddly: -0 beside +0, +Inf beside exit->entry's default.
func tieWeights(r *rand.Rand, d *cfg.DAG) []float64 {
	if r.IntN(2) == 0 {
		return randWeights(r, d)
	}
	vals := []float64{0, math.Copysign(0, -1), 1, 2, math.Inf(1), 0.5}
	w := make([]float64, len(d.Edges), len(d.Edges)+1)
	for i := range w {
		w[i] = vals[r.IntN(len(vals))]
	}
	if r.IntN(2) == 0 {
		w = append(w, vals[r.IntN(len(vals))])
	}
	return w
}

// kruskalClasses is the spanning tree Chords must choose, computed the
// slow way: the live edges and exit->entry, stably sorted by decreasing
// weight from index order, taken while they join two components.
func kruskalClasses(d *cfg.DAG, n *Numbering, weights []float64) ([]EdgeClass, bool) {
	es, _ := eventGraph(d, n, weights)
	sort.SliceStable(es, func(i, j int) bool { return es[i].w > es[j].w })
	comp := make([]int, d.NumNodes)
	for i := range comp {
		comp[i] = i
	}
	class := make([]EdgeClass, len(d.Edges))
	exitChord := false
	for _, e := range es {
		a, b := comp[e.u], comp[e.v]
		if a == b {
			if e.idx == len(d.Edges) {
				exitChord = true
			} else {
				class[e.idx] = Chord
			}
			continue
		}
		for i := range comp {
			if comp[i] == b {
				comp[i] = a
			}
		}
		if e.idx < len(d.Edges) {
			class[e.idx] = Tree
		}
	}
	return class, exitChord
}

// TestChordsTieBreak checks that Chords takes exactly the tree the slow
// Kruskal does, ties to the lower index, whatever the weights; the copies'
// bytes depend on it.
func TestChordsTieBreak(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 7))
	for it := range iterations(3000) {
		d := randDAG(r, 14)
		n, err := Number(d)
		if err != nil {
			t.Fatal(err)
		}
		w := tieWeights(r, d)
		inc, err := Chords(d, n, w)
		if err != nil {
			t.Fatal(err)
		}
		class, exitChord := kruskalClasses(d, n, w)
		if n.Paths() == 0 {
			continue
		}
		if !reflect.DeepEqual(inc.Class, class) || inc.ExitChord != exitChord {
			t.Fatalf("DAG %d, weights %v: classes %v (exit chord %v), want %v (%v)", it, w, inc.Class, inc.ExitChord, class, exitChord)
		}
	}
}

// TestInOrderEqualsSteps checks that the placements made with a TreeOrder
// sorted once equal those of the step-by-step functions, which sort the
// weights at every call.
func TestInOrderEqualsSteps(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 7))
	opt := PlaceOptions{NoCountFolding: true}
	for it := range iterations(2000) {
		d := randDAG(r, 12)
		n, err := Number(d)
		if err != nil {
			t.Fatal(err)
		}
		w := tieWeights(r, d)
		o, err := NewTreeOrder(d, w)
		if err != nil {
			t.Fatal(err)
		}
		inc, err := Chords(d, n, w)
		if err != nil {
			t.Fatal(err)
		}
		inc2, err := ChordsInOrder(d, n, o)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(inc, inc2) {
			t.Fatalf("DAG %d: ChordsInOrder %+v, Chords %+v", it, inc2, inc)
		}
		plan, err := Place(d, n, inc, opt)
		if err != nil {
			t.Fatal(err)
		}
		plan2, err := PlaceInOrder(d, n, o, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(plan, plan2) {
			t.Fatalf("DAG %d: PlaceInOrder %+v, Place %+v", it, plan2, plan)
		}

		// PlaceReverse: weights from frequencies or static ones.
		var freq []float64
		if r.IntN(2) == 0 {
			freq = make([]float64, len(d.Edges))
			for i := range freq {
				freq[i] = float64(r.IntN(3))
			}
		}
		rv, err := NumberReverse(d, n)
		if err != nil {
			t.Fatal(err)
		}
		fw, err := WeightsFor(d, freq)
		if err != nil {
			t.Fatal(err)
		}
		rinc, err := Chords(d, rv.Forward(), fw)
		if err != nil {
			t.Fatal(err)
		}
		rplan, err := Place(d, rv.Forward(), rinc, opt)
		if err != nil {
			t.Fatal(err)
		}
		rv2, rplan2, ro, err := PlaceReverse(d, n, freq, opt)
		if err != nil {
			t.Fatal(err)
		}
		if wo, err := NewTreeOrder(d, fw); err != nil || !slices.Equal(ro.edges, wo.edges) {
			t.Fatalf("DAG %d: PlaceReverse's order %v, want %v", it, ro.edges, wo.edges)
		}
		if !reflect.DeepEqual(rplan, rplan2) || !reflect.DeepEqual(rv.Forward(), rv2.Forward()) {
			t.Fatalf("DAG %d: PlaceReverse %+v, steps %+v", it, rplan2, rplan)
		}

		// PSPP's placements, by the same weights.
		ps, ok := dagtest.Paths(d, cfg.Entry, 20000)
		if !ok {
			continue
		}
		in := randInteresting(r, d, ps)
		s, err := PSPP(d, in)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := PlaceSelective(d, s)
		if err != nil {
			t.Fatal(err)
		}
		s2, plain2, err := PSPPPlaced(d, in, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(s, s2) || !reflect.DeepEqual(plain, plain2) {
			t.Fatalf("DAG %d: PSPPPlaced %+v, PSPP and PlaceSelective %+v", it, plain2, plain)
		}
		if len(w) > len(d.Edges) {
			w = w[:len(d.Edges)] // ProfileWeights' length, as a planner has them
			if o, err = NewTreeOrder(d, w); err != nil {
				t.Fatal(err)
			}
		}
		sp, err := PlaceSelectiveChords(d, s, w)
		if err != nil {
			t.Fatal(err)
		}
		sp2, err := PlaceSelectiveInOrder(d, s, o)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sp, sp2) {
			t.Fatalf("DAG %d: PlaceSelectiveInOrder %+v, PlaceSelectiveChords %+v", it, sp2, sp)
		}
		if _, sp3, err := PSPPPlaced(d, in, o); err != nil || !reflect.DeepEqual(sp, sp3) {
			t.Fatalf("DAG %d: PSPPPlaced %+v (%v), PlaceSelectiveChords %+v", it, sp3, err, sp)
		}
	}
}

// TestTreeOrderMismatch checks that an order made for another DAG is
// refused.
func TestTreeOrderMismatch(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 7))
	d := randDAG(r, 10)
	n, err := Number(d)
	if err != nil {
		t.Fatal(err)
	}
	o, err := NewTreeOrder(mkDAG(2, []cfg.DAGEdge{{From: cfg.Entry, To: cfg.Exit}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Edges) == 1 {
		t.Skip("same size")
	}
	if _, err := ChordsInOrder(d, n, o); err == nil {
		t.Error("ChordsInOrder took another DAG's order")
	}
	if _, err := PlaceInOrder(d, n, o, PlaceOptions{}); err == nil {
		t.Error("PlaceInOrder took another DAG's order")
	}
	if _, err := NewTreeOrder(d, []float64{math.NaN()}); err == nil {
		t.Error("NewTreeOrder took a weight vector of the wrong length")
	}
}

// TestTreeOrderKeepsTree checks that a TreeOrder that keeps its last
// spanning tree gives what a fresh one gives, whatever it is asked next:
// other labelings of the DAG, numberings whose nodes reach the exit
// otherwise, other DAGs with as many edges.
func TestTreeOrderKeepsTree(t *testing.T) {
	r := rand.New(rand.NewPCG(44, 7))
	for it := range iterations(300) {
		d := randDAG(r, 12)
		n, err := Number(d)
		if err != nil {
			t.Fatal(err)
		}
		w := tieWeights(r, d)
		o, err := NewTreeOrder(d, w)
		if err != nil {
			t.Fatal(err)
		}
		ps, ok := dagtest.Paths(d, cfg.Entry, 20000)
		if !ok {
			continue
		}
		for range 20 {
			dd, nn := d, n
			switch r.IntN(4) {
			case 0: // a PSPP labeling
				s, err := PSPP(d, randInteresting(r, d, ps))
				if err != nil {
					t.Fatal(err)
				}
				nn = &Numbering{Val: s.Label, NumPaths: s.Initial.NumPaths}
			case 1: // nodes that no longer reach the exit
				nn = &Numbering{Val: n.Val, NumPaths: slices.Clone(n.NumPaths)}
				for v := range nn.NumPaths {
					if r.IntN(4) == 0 && v != cfg.Exit {
						nn.NumPaths[v] = 0
					}
				}
			case 2: // another DAG of as many edges, if one comes
				other := randDAG(r, 12)
				if len(other.Edges) != len(d.Edges) {
					continue
				}
				on, err := Number(other)
				if err != nil {
					t.Fatal(err)
				}
				dd, nn = other, on
			}
			got, err := ChordsInOrder(dd, nn, o)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Chords(dd, nn, w)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("DAG %d: kept tree gives %+v, a fresh one %+v", it, got, want)
			}
		}
	}
}
