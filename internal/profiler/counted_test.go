package profiler

import (
	"bytes"
	"context"
	"math"
	"slices"
	"testing"

	"github.com/pathprof/pathprof/internal/counters"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/partition"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/wasm"
)

// countedForm is one loop of countedLoopModule: how it steps its local x
// and tests it.
type countedForm struct {
	name string
	sub  bool  // x -= c instead of x += c
	c    int32 // the step's constant
	// test: "tee0" (local.tee x, br_if), "get0" (local.set x … local.get
	// x, br_if, with a second block in the body), "teeN" (local.tee x,
	// local.get n, i32.ne, br_if), "getK" (local.get x, i32.const K,
	// i32.ne, br_if), "ltuN" (local.tee x, local.get n, i32.lt_u, br_if),
	// "Kgts" (i32.const K, local.get x, i32.lt_s, br_if: x > K), "eqz"
	// (local.tee x, i32.eqz, br_if).
	test string
	// Forms a counted loop must not take: a second exit, a second write
	// of x, a write of the bound, a test that is not x != bound.
	exit2, write2, writeN, eqz bool
}

func (f countedForm) counted() bool { return !f.exit2 && !f.write2 && !f.writeN && !f.eqz }

// Locals of countedLoopModule's _start.
const (
	cj = iota // the outer loop's counter
	cx        // the inner loop's local
	cn        // its bound
	ct        // the trips asked of it
	countedLocals
)

// countedK is the constant bound of the "getK" test.
const countedK = 7

// countedLoopModule is a command module whose _start runs, rounds times,
// each of forms' loops after an if/else on the round's parity (so that
// the loop is entered from two paths), asked for 1 to 7 trips by the round
// and 100,003 in the last: x starts where t steps of it reach the bound
// (from a large, wrapping start for "teeN"), so a step that is not odd
// reaches the bound after t modulo its period.
func countedLoopModule(t *testing.T, rounds int32, forms []countedForm) []byte {
	var a wasm.Asm
	a.Block(wasm.OpBlock).Block(wasm.OpLoop)
	// t = j == rounds-1 ? 100003 : 1 + 5j mod 7
	a.I32(100003).Idx(wasm.OpLocalGet, cj).I32(5).Op(wasm.OpI32Mul).I32(7).Op(wasm.OpI32RemU).I32(1).Op(wasm.OpI32Add)
	a.Idx(wasm.OpLocalGet, cj).I32(rounds-1).Op(wasm.OpI32Eq).Op(wasm.OpSelect).Idx(wasm.OpLocalSet, ct)
	for _, f := range forms {
		step := f.c
		op := wasm.OpI32Add
		if f.sub {
			step, op = -f.c, wasm.OpI32Sub
		}
		a.Idx(wasm.OpLocalGet, cj).I32(1).Op(wasm.OpI32And).Block(wasm.OpIf).Op(wasm.OpNop).Op(wasm.OpElse).Op(wasm.OpNop).Op(wasm.OpEnd)
		// The bound, less t steps: x's start.
		switch f.test {
		case "teeN", "ltuN":
			a.Idx(wasm.OpLocalGet, cj).I32(-1640531527).Op(wasm.OpI32Mul).I32(-5).Op(wasm.OpI32Add).Idx(wasm.OpLocalTee, cx)
			a.Idx(wasm.OpLocalGet, ct).I32(step).Op(wasm.OpI32Mul).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, cn)
		case "getK", "Kgts":
			a.I32(countedK).Idx(wasm.OpLocalGet, ct).I32(step).Op(wasm.OpI32Mul).Op(wasm.OpI32Sub).Idx(wasm.OpLocalSet, cx)
		default:
			a.I32(0).Idx(wasm.OpLocalGet, ct).I32(step).Op(wasm.OpI32Mul).Op(wasm.OpI32Sub).Idx(wasm.OpLocalSet, cx)
		}
		a.Block(wasm.OpBlock).Block(wasm.OpLoop) // the exit, the loop
		a.Op(wasm.OpNop)
		if f.exit2 {
			a.Idx(wasm.OpLocalGet, cx).I32(3).Op(wasm.OpI32Eq).Idx(wasm.OpBrIf, 1)
		}
		if f.write2 {
			a.Idx(wasm.OpLocalGet, cx).I32(0).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, cx)
		}
		if f.writeN {
			a.Idx(wasm.OpLocalGet, cn).Idx(wasm.OpLocalSet, cn)
		}
		if f.test == "get0" {
			a.Block(wasm.OpBlock).Idx(wasm.OpBr, 0).Op(wasm.OpEnd)
		}
		a.Idx(wasm.OpLocalGet, cx).I32(f.c).Op(op)
		switch f.test {
		case "tee0":
			a.Idx(wasm.OpLocalTee, cx)
		case "get0":
			a.Idx(wasm.OpLocalSet, cx).Op(wasm.OpNop).Idx(wasm.OpLocalGet, cx)
		case "teeN":
			a.Idx(wasm.OpLocalTee, cx).Idx(wasm.OpLocalGet, cn).Op(wasm.OpI32Ne)
		case "getK":
			a.Idx(wasm.OpLocalSet, cx).Idx(wasm.OpLocalGet, cx).I32(countedK).Op(wasm.OpI32Ne)
		case "ltuN":
			a.Idx(wasm.OpLocalTee, cx).Idx(wasm.OpLocalGet, cn).Op(wasm.OpI32LtU)
		case "Kgts":
			a.Idx(wasm.OpLocalSet, cx).I32(countedK).Idx(wasm.OpLocalGet, cx).Op(wasm.OpI32LtS)
		case "eqz":
			a.Idx(wasm.OpLocalTee, cx).Op(wasm.OpI32Eqz)
		}
		if f.eqz {
			a.Op(wasm.OpI32Eqz).Op(wasm.OpI32Eqz)
		}
		a.Idx(wasm.OpBrIf, 0).Op(wasm.OpEnd).Op(wasm.OpEnd)
	}
	a.Idx(wasm.OpLocalGet, cj).I32(1).Op(wasm.OpI32Add).Idx(wasm.OpLocalTee, cj)
	a.I32(rounds).Op(wasm.OpI32LtU).Idx(wasm.OpBrIf, 0)
	a.Op(wasm.OpEnd).Op(wasm.OpEnd).Op(wasm.OpEnd)
	return startModuleLocals(t, countedLocals, a.B)
}

// TestCountedLoops checks loops whose back edges run nothing, their
// iterations counted from the local that drives them where they are left:
// the forms clang ends a loop with and other tests of the local against
// a bound the loop does not change, counting up or down by steps odd and
// even (a step of 2^30 reaches its bound after t modulo 4 iterations, one
// of 3·2^29 after t modulo 8, whose count takes the inverse of 3 modulo
// 2^32 and only the low 3 bits of the product), from starts
// that wrap, after 1 to 7 iterations and after 100,003, entered from two
// paths. Every such loop is counted so, none of the loops that must not
// be (a second exit, a second write of the local or a write of the bound,
// another test), and the profiles equal the tracer's and those counted in
// memory at every back edge, with dense and hashed counters, in the
// program's memory and in a counter module. The hits computed from the
// profile, and from its edge frequencies, are those the copy counts at run
// time.
func TestCountedLoops(t *testing.T) {
	ctx := context.Background()
	yes := []countedForm{
		{name: "up by 1 to 0", c: 1, test: "tee0"},
		{name: "down by 1 to 0, two blocks", c: 1, sub: true, test: "get0"},
		{name: "up by 12 to n, wrapping", c: 12, test: "teeN"},
		{name: "down by 3 to 7", c: 3, sub: true, test: "getK"},
		{name: "up by 2^30 to 0", c: 1 << 30, test: "tee0"},
		{name: "down by -5 to n", c: -5, sub: true, test: "teeN"},
		{name: "up by 3·2^29 to n", c: 3 << 29, test: "teeN"},
		{name: "up by 1 below n, wrapping", c: 1, test: "ltuN"},
		{name: "up by 6 below n, wrapping", c: 6, test: "ltuN"},
		{name: "down by 3 above 7", c: 3, sub: true, test: "Kgts"},
		{name: "up by 5 while 0", c: 5, test: "eqz"},
	}
	no := []countedForm{
		{name: "second exit", c: 1, test: "tee0", exit2: true},
		{name: "second write", c: 1, test: "teeN", write2: true},
		{name: "bound written", c: 1, test: "teeN", writeN: true},
		{name: "another test", c: 1, test: "tee0", eqz: true},
	}
	for _, c := range []struct {
		name  string
		forms []countedForm
	}{{"counted", yes}, {"not counted", no}, {"mixed", append(append([]countedForm{}, no[:2]...), yes[:3]...)}} {
		mod := countedLoopModule(t, 15, c.forms)
		want := 0
		for _, f := range c.forms {
			if f.counted() {
				want++
			}
		}
		ref, err := Profile(ctx, mod, Options{Instrument: instrument.Options{NoLoopCounts: true}})
		if err != nil {
			t.Fatal(err)
		}
		checkTraced(t, c.name, mod, runner.Config{}, ref)
		for _, v := range []struct {
			name string
			opt  instrument.Options
		}{
			{"dense", instrument.Options{}},
			{"dense, counter module", instrument.Options{SeparateCounters: true}},
			{"hashed", instrument.Options{Counters: counters.Options{DenseMax: 1}}},
			{"hashed, counter module", instrument.Options{Counters: counters.Options{DenseMax: 1}, SeparateCounters: true}},
		} {
			label := c.name + ", " + v.name
			opt := v.opt
			opt.CountHits = true
			res, err := instrument.Instrument(mod, opt)
			if err != nil {
				t.Fatal(err)
			}
			// Local loop counters keep the loops they count (at least
			// a counter each); every other loop of counted shape is
			// counted where it is left, and no other loop.
			if f := res.Funcs[0]; f.CountedLoops > want || f.CountedLoops+f.LoopCounters < want || want > 0 && f.CountedLoops == 0 {
				t.Fatalf("%s: %d counted loops and %d loop counters, want %d counted loops in all", label, f.CountedLoops, f.LoopCounters, want)
			}
			if dense := res.Layout.Funcs[0].Kind == counters.KindDense; dense != (opt.Counters.DenseMax == 0) {
				t.Fatalf("%s: dense %v", label, dense)
			}
			p, err := Profile(ctx, mod, Options{Instrument: v.opt})
			if err != nil {
				t.Fatal(err)
			}
			if ok, diff := ref.Equal(p); !ok {
				t.Fatalf("%s: counted loops change the profile: %s", label, diff)
			}
			_, _, direct := runCounting(t, label, runner.Config{Stdout: &bytes.Buffer{}}, res)
			computed, err := res.HitsOf(p.Functions)
			if err != nil {
				t.Fatal(err)
			}
			checkHits(t, label, direct, computed)
			freq, err := res.EdgeFrequencies(p.Functions)
			if err != nil {
				t.Fatal(err)
			}
			if fromFreq, err := res.HitsOfFrequencies(freq); err != nil || math.Abs(fromFreq-float64(computed)) > 0.5 {
				t.Fatalf("%s: %v hits from edge frequencies (%v), %d from paths", label, fromFreq, err, computed)
			}
			t.Logf("%s: %d counted loops, %d loop counters, profiles equal, %d hits", label, res.Funcs[0].CountedLoops, res.Funcs[0].LoopCounters, computed)
		}
	}
}

// TestCountedShapes checks what P3's planner reads of counted loops: the
// analysis finds the header of every loop of counted shape and of no
// other, and the planner, told to share out some loop's iterations at
// every k, never picks one of those (a copy counts them at next to no
// cost per iteration unless they are shared out).
func TestCountedShapes(t *testing.T) {
	yes := []countedForm{
		{name: "up by 1 to 0", c: 1, test: "tee0"},
		{name: "up by 12 to n, wrapping", c: 12, test: "teeN"},
		{name: "down by 3 above 7", c: 3, sub: true, test: "Kgts"},
	}
	no := []countedForm{
		{name: "second exit", c: 1, test: "tee0", exit2: true},
		{name: "second write", c: 1, test: "teeN", write2: true},
	}
	mod := countedLoopModule(t, 15, append(append([]countedForm{}, yes...), no...))
	a, err := Analyze(mod)
	if err != nil {
		t.Fatal(err)
	}
	f := a.Result.Funcs[0]
	var shaped, loops []int32
	for h := int32(2); int(h) < len(f.Graph.Blocks); h++ {
		if !slicesHasBack(f, h) {
			continue
		}
		loops = append(loops, h)
		if f.CountedShape(h) {
			shaped = append(shaped, h)
		}
	}
	// The outer loop and one per form.
	if len(loops) != 1+len(yes)+len(no) || len(shaped) != len(yes) {
		t.Fatalf("%d loops of counted shape among %d, want %d among %d", len(shaped), len(loops), len(yes), 1+len(yes)+len(no))
	}
	for _, k := range []int{2, 4} {
		cs, err := Build(mod, "p3", k, instrument.Options{}, partition.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fi := cs.Plan.Funcs[0]
		if fi.Loop == 0 {
			t.Fatalf("k = %d: no loop shared out", k)
		}
		for _, h := range append([]int32{fi.Loop}, fi.Loops...) {
			if slices.Contains(shaped, h) {
				t.Fatalf("k = %d: the loop at %d, of counted shape, shared out", k, h)
			}
		}
	}
	// A _start that is one such loop, which the plan would otherwise
	// share out as the heaviest loop of main.
	var b wasm.Asm
	b.I32(-100000).Idx(wasm.OpLocalSet, 0)
	b.Block(wasm.OpLoop).Op(wasm.OpNop)
	b.Idx(wasm.OpLocalGet, 0).I32(1).Op(wasm.OpI32Add).Idx(wasm.OpLocalTee, 0).Idx(wasm.OpBrIf, 0)
	b.Op(wasm.OpEnd).Op(wasm.OpEnd)
	one := startModuleLocals(t, 1, b.B)
	cs, err := Build(one, "p3", 2, instrument.Options{}, partition.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h := cs.Plan.Funcs[0].Loop; h != 0 {
		t.Fatalf("the loop at %d, of counted shape, shared out", h)
	}
}
