package partition

import (
	"reflect"
	"testing"

	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// TestStaticOrders checks that a plan made with every function's edges
// sorted beforehand (Options.StaticOrders) is the plan made without, with
// and without weights, which the orders must not stand in for.
func TestStaticOrders(t *testing.T) {
	m, err := wasm.Decode(synthModule(400, 3))
	if err != nil {
		t.Fatal(err)
	}
	dags := dagsOf(t, m)
	orders := make([]*numbering.TreeOrder, len(dags))
	weights := make([][]float64, len(dags))
	for i, d := range dags {
		if d == nil {
			continue
		}
		w, err := numbering.StaticWeights(d)
		if err != nil {
			t.Fatal(err)
		}
		if orders[i], err = numbering.NewTreeOrder(d, w); err != nil {
			t.Fatal(err)
		}
		weights[i] = make([]float64, len(d.Edges))
		for e := range weights[i] {
			weights[i][e] = float64((i + 3*e) % 5)
		}
	}
	for _, s := range []struct {
		strategy profile.Strategy
		k        int
		weights  [][]float64
	}{{profile.SBL, 1, nil}, {profile.P3, 4, nil}, {profile.P3, 4, weights}, {profile.PBL, 2, weights}} {
		want, err := Make(m, dags, s.strategy, s.k, Options{Weights: s.weights})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Make(m, dags, s.strategy, s.k, Options{Weights: s.weights, StaticOrders: orders})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s k=%d (weights %v): the plan made with the orders differs", s.strategy, s.k, s.weights != nil)
		}
	}
	if _, err := Make(m, dags, profile.SBL, 1, Options{StaticOrders: orders[1:]}); err == nil {
		t.Error("Make took orders for fewer functions")
	}
}
