package profiler

import (
	"os"
	"reflect"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// TestBuildSBLPlan checks that SBL's plan, priced with the edge orders
// the instrumenter sorted (partition.Options.StaticOrders), is the plan
// partition.Make makes of the module's DAGs on its own.
func TestBuildSBLPlan(t *testing.T) {
	for _, p := range testprogs.CPrograms(t) {
		orig, err := os.ReadFile(p.Wasm)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := Build(orig, profile.SBL, 1, instrument.Options{}, partition.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := wasm.Decode(orig)
		if err != nil {
			t.Fatal(err)
		}
		dags := make([]*cfg.DAG, len(cs.Funcs))
		for i, f := range cs.Funcs {
			dags[i] = f.DAG
		}
		want, err := partition.Make(m, dags, profile.SBL, 1, partition.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cs.Plan, want) {
			t.Errorf("%s: SBL's plan differs from the one made without the instrumenter's orders", p.Name)
		}
	}
}
