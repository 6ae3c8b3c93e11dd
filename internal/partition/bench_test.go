package partition

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// synthModule generates a module of n functions with random structured
// bodies, most small and a few large, as real modules have them. Function
// i calls i+1 once, so most functions are candidates; every tenth also
// calls function 0, which therefore has many call sites; some are exported.
func synthModule(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	mb := &moduleBuilder{start: -1}
	for i := range n {
		size := 2 + r.IntN(25)
		switch r.IntN(100) {
		case 0:
			size = 300 + r.IntN(300)
		case 1, 2, 3:
			size = 60 + r.IntN(60)
		}
		var calls []uint32
		if i+1 < n {
			calls = append(calls, uint32(i+1))
		}
		g := &bodyGen{r: r, size: size}
		g.a.B = []byte{1, 1, 0x7F}
		if len(calls) > 0 {
			g.a.Idx(wasm.OpCall, calls[0])
		}
		if i%10 == 5 {
			g.a.Idx(wasm.OpCall, 0)
		}
		for g.size > 0 {
			g.size--
			g.stmt(0)
		}
		g.a.Op(wasm.OpEnd)
		mb.bodies = append(mb.bodies, g.a.B)
		if r.IntN(50) == 0 {
			mb.exports = append(mb.exports, uint32(i))
		}
	}
	return mb.bytes()
}

type planInput struct {
	m      *wasm.Module
	graphs []*cfg.DAG
	build  time.Duration // decode and DAGs
}

var (
	largestOnce, synthOnce sync.Once
	largest, synth         planInput
)

func load(t testing.TB, b []byte) planInput {
	start := time.Now()
	m, err := wasm.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	g := dagsOf(t, m)
	return planInput{m, g, time.Since(start)}
}

func largestInput(t testing.TB) planInput {
	largestOnce.Do(func() {
		b, err := os.ReadFile(testprogs.LargestModule(t))
		if err != nil {
			t.Fatal(err)
		}
		largest = load(t, b)
	})
	if largest.m == nil {
		t.Fatal("largest module did not load")
	}
	return largest
}

func synthInput(t testing.TB) planInput {
	synthOnce.Do(func() { synth = load(t, synthModule(30000, 7)) })
	if synth.m == nil {
		t.Fatal("synthetic module did not load")
	}
	return synth
}

// TestPlanLargeModules plans the largest test module and a 30,000-function
// module with every strategy. The times it logs are indicative; the 10 s
// budget is for the BenchmarkMake benchmarks, not for a test.
func TestPlanLargeModules(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the largest test module")
	}
	for _, in := range []struct {
		name string
		get  func(testing.TB) planInput
	}{{"largest", largestInput}, {"synthetic", synthInput}} {
		pi := in.get(t)
		for _, s := range []struct {
			strategy profile.Strategy
			k        int
		}{{profile.SBL, 1}, {profile.PBL, 8}, {profile.P3, 2}, {profile.P3, 8}} {
			start := time.Now()
			p, err := Make(pi.m, pi.graphs, s.strategy, s.k, Options{})
			el := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			profitable, loads := planLoads(p)
			t.Logf("%s (%d functions, DAGs built in %v): %s k=%d planned in %v; %d profitable; loads %v",
				in.name, len(pi.m.Code), pi.build.Round(time.Millisecond), s.strategy, s.k,
				el.Round(time.Millisecond), profitable, loads)

			if s.strategy == profile.P3 && s.k == 8 {
				if err := p.Check(pi.graphs); err != nil {
					t.Fatal(err)
				}
				b, err := json.Marshal(p)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("JSON plan: %d bytes", len(b))
			}
		}
	}
}

func benchMake(b *testing.B, pi planInput, strategy profile.Strategy, k, workers int) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Make(pi.m, pi.graphs, strategy, k, Options{Workers: workers}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(pi.m.Code)), "funcs")
}

func BenchmarkMakeLargestP3k8(b *testing.B)       { benchMake(b, largestInput(b), profile.P3, 8, 0) }
func BenchmarkMakeLargestP3k8Serial(b *testing.B) { benchMake(b, largestInput(b), profile.P3, 8, 1) }
func BenchmarkMakeLargestPBLk8(b *testing.B)      { benchMake(b, largestInput(b), profile.PBL, 8, 0) }
func BenchmarkMake30kP3k8(b *testing.B)           { benchMake(b, synthInput(b), profile.P3, 8, 0) }
func BenchmarkMake30kP3k8Serial(b *testing.B)     { benchMake(b, synthInput(b), profile.P3, 8, 1) }
func BenchmarkMake30kPBLk8(b *testing.B)          { benchMake(b, synthInput(b), profile.PBL, 8, 0) }
