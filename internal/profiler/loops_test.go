package profiler

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/pathprof/pathprof/internal/counters"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/tracer"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
)

// TestLoopCounters checks that loop counters are used on the C programs and
// change no count: the profiles with and without them are equal (and
// TestSBLEqualsTracer compares the default, with them, to the tracer).
func TestLoopCounters(t *testing.T) {
	ctx := context.Background()
	used := 0
	for _, p := range testprogs.CRuns(t) {
		orig, res := instrumented(t, p)
		n := 0
		for _, f := range res.Funcs {
			n += f.LoopCounters
		}
		used += n
		on, err := Profile(ctx, orig, Options{ModulePath: p.Path, Run: p.Config(t, &bytes.Buffer{})})
		if err != nil {
			t.Fatal(err)
		}
		off, err := Profile(ctx, orig, Options{ModulePath: p.Path, Run: p.Config(t, &bytes.Buffer{}),
			Instrument: instrument.Options{NoLoopCounts: true}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := diffCounts(tracer.Counts(on), tracer.Counts(off)); diff != "" {
			t.Fatalf("%s: loop counters change the profile:\n%s", p.Name, diff)
		}
		t.Logf("%s: %d loop counters, profiles equal", p.Name, n)
	}
	if used == 0 {
		t.Fatal("no C program got loop counters")
	}
}

// How the loop of loopModule traps.
const (
	noTrap     = iota
	trapAfter  // unreachable after the loop
	trapBranch // a branch to unreachable in iteration 50
	trapInside // a division by zero in the loop's own block in iteration 50
)

// loopModule is a command module whose _start runs a loop without calls:
// 100 iterations with two paths each (i%3 == 0 or not), trapping as trap
// says.
func loopModule(t *testing.T, trap int) []byte {
	var a wasm.Asm
	const i = 0
	a.Block(wasm.OpBlock).Block(wasm.OpLoop)
	a.Idx(wasm.OpLocalGet, i).I32(1).Op(wasm.OpI32Add).Idx(wasm.OpLocalTee, i)
	a.I32(100).Op(wasm.OpI32GeU).Idx(wasm.OpBrIf, 1)
	switch trap {
	case trapBranch:
		a.Idx(wasm.OpLocalGet, i).I32(50).Op(wasm.OpI32Eq).Block(wasm.OpIf).Op(wasm.OpUnreachable).Op(wasm.OpEnd)
	case trapInside:
		a.I32(1).Idx(wasm.OpLocalGet, i).I32(50).Op(wasm.OpI32Sub).Op(wasm.OpI32DivU).Op(wasm.OpDrop)
	}
	a.Idx(wasm.OpLocalGet, i).I32(3).Op(wasm.OpI32RemU).Op(wasm.OpI32Eqz).Block(wasm.OpIf).Op(wasm.OpNop).Op(wasm.OpEnd)
	a.Idx(wasm.OpBr, 0)
	a.Op(wasm.OpEnd).Op(wasm.OpEnd)
	if trap == trapAfter {
		a.Op(wasm.OpUnreachable)
	}
	a.Op(wasm.OpEnd)
	return startModule(t, a.B)
}

// startModule is a command module whose _start has one i32 local and the
// expression expr.
func startModule(t *testing.T, expr []byte) []byte {
	return startModuleLocals(t, 1, expr)
}

// startModuleLocals is a command module whose _start has n i32 locals
// (fewer than 128) and the expression expr.
func startModuleLocals(t *testing.T, n byte, expr []byte) []byte {
	body := append([]byte{1, n, byte(wasm.ValI32.Code)}, expr...)
	m := &wasm.Module{Version: 1, Types: []wasm.FuncType{{}}, Funcs: []uint32{0},
		Exports: []wasm.Export{{Name: "_start", Kind: wasm.KindFunc, Index: 0}},
		Code:    []wasm.Code{{Body: body, ExprOff: 3, Locals: []wasm.LocalDecl{{Count: uint32(n), Type: wasm.ValI32}}}}}
	return wasmtest.Encode(t, m, wasm.SecType, wasm.SecFunction, wasm.SecExport, wasm.SecCode)
}

// TestLoopCountersAndTraps pins down what a trap costs: after the loop
// has been left, or on a branch out of it to unreachable (the loop's
// counters are flushed on every edge that leaves it), nothing; at an
// instruction of the loop itself, the paths the loop completed since it was
// entered. Every such profile is marked incomplete.
func TestLoopCountersAndTraps(t *testing.T) {
	ctx := context.Background()
	run := func(mod []byte, off bool) map[tracer.Key]uint64 {
		res, err := instrument.Instrument(mod, instrument.Options{NoLoopCounts: off})
		if err != nil {
			t.Fatal(err)
		}
		if !off && res.Funcs[0].LoopCounters == 0 {
			t.Fatal("the loop got no loop counters")
		}
		p, err := Profile(ctx, mod, Options{Run: runner.Config{}, Instrument: instrument.Options{NoLoopCounts: off}})
		if err == nil || p == nil || p.Complete {
			t.Fatalf("a trapping run gave a complete profile (err %v)", err)
		}
		return tracer.Counts(p)
	}
	total := func(c map[tracer.Key]uint64) (n uint64) {
		for _, v := range c {
			n += v
		}
		return n
	}
	for _, c := range []struct {
		name    string
		trap    int
		off, on uint64
	}{{"after the loop", trapAfter, 99, 99}, {"branch to unreachable", trapBranch, 49, 49}, {"division by zero in the loop", trapInside, 49, 0}} {
		mod := loopModule(t, c.trap)
		on, off := run(mod, false), run(mod, true)
		if total(off) != c.off || total(on) != c.on {
			t.Fatalf("trap %s: %d paths without loop counters (want %d), %d with (want %d)", c.name, total(off), c.off, total(on), c.on)
		}
		if c.on == c.off {
			if diff := diffCounts(on, off); diff != "" {
				t.Fatalf("trap %s: loop counters change the profile:\n%s", c.name, diff)
			}
		}
	}
	if p, err := Profile(ctx, loopModule(t, noTrap), Options{}); err != nil || !p.Complete {
		t.Fatalf("the loop without a trap: %v", err)
	}
}

// TestIterationCounters checks the loop counters of the kernels of
// testdata/kernels, whose hot loops' back edges ended millions of paths
// each, most of them through the code before the loop, until functions of
// that many paths were cut at their loop headers: filter's and apsp's main
// are now cut there and counted densely, with loop counters for their
// loops' paths. The profiles with loop counters (those of iteration paths
// included, wherever a hashed function still has them) equal those without
// and the tracer's, with the counters in the program's memory and in a
// counter module.
func TestIterationCounters(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(testprogs.ModuleRoot(t), "testdata", "kernels")
	for _, k := range []struct{ name, arg string }{{"filter", "30"}, {"apsp", "24"}, {"fft", "2"}, {"bsearch", "300"}} {
		p := program{Name: k.name, Path: filepath.Join(dir, k.name+".wasm"), Args: []string{k.arg}}
		orig, res := instrumented(t, p)
		n, cutDense := 0, 0
		for _, f := range res.Funcs {
			n += f.IterationCounters
			if f.LoopCounters > 0 && len(f.Cuts) > 0 && res.Layout.Funcs[f.Index].Kind == counters.KindDense {
				cutDense++
			}
		}
		if cutDense == 0 && (k.name == "filter" || k.name == "apsp") {
			t.Errorf("%s: no function cut at its loop headers is dense with loop counters", k.name)
		}
		var out bytes.Buffer
		off, err := Profile(ctx, orig, Options{ModulePath: p.Path, Run: p.Config(t, &out),
			Instrument: instrument.Options{NoLoopCounts: true}})
		if err != nil {
			t.Fatal(err)
		}
		checkTraced(t, k.name, orig, p.Config(t, &bytes.Buffer{}), off)
		for _, separate := range []bool{false, true} {
			on, err := Profile(ctx, orig, Options{ModulePath: p.Path, Run: p.Config(t, &bytes.Buffer{}),
				Instrument: instrument.Options{SeparateCounters: separate}})
			if err != nil {
				t.Fatal(err)
			}
			if ok, diff := off.Equal(on); !ok {
				t.Fatalf("%s (counter module %v): loop counters change the profile: %s", k.name, separate, diff)
			}
		}
		t.Logf("%s: %d iteration counters, %d dense functions cut at their loop headers with loop counters, profiles equal", k.name, n, cutDense)
	}
}

// instrumented reads p's module and instruments it for SBL.
func instrumented(t *testing.T, p program) ([]byte, *instrument.Result) {
	t.Helper()
	orig := readModule(t, p)
	res, err := instrument.Instrument(orig, instrument.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return orig, res
}

// packedLoopModule is a command module whose _start runs a loop without
// calls for iters iterations. With ways 0 the loop has two back edges (a
// continue on odd i, and its end), each ending two paths; otherwise its
// body branches ways ways by i mod ways (a br_table) and joins before its
// one back edge, which ends 2·ways paths (the first iteration's from the
// entry, and the later ones').
func packedLoopModule(t *testing.T, iters int32, ways uint32) []byte {
	var a wasm.Asm
	const i = 0
	a.Block(wasm.OpBlock).Block(wasm.OpLoop)
	a.Idx(wasm.OpLocalGet, i).I32(1).Op(wasm.OpI32Add).Idx(wasm.OpLocalTee, i)
	a.I32(iters).Op(wasm.OpI32GeU).Idx(wasm.OpBrIf, 1)
	if ways == 0 {
		a.Idx(wasm.OpLocalGet, i).I32(1).Op(wasm.OpI32And).Idx(wasm.OpBrIf, 0)
		a.Op(wasm.OpNop).Idx(wasm.OpBr, 0)
	} else {
		a.Block(wasm.OpBlock) // the join
		for range ways {
			a.Block(wasm.OpBlock)
		}
		labels := make([]uint32, ways+1)
		for j := range labels {
			labels[j] = min(uint32(j), ways-1)
		}
		a.Idx(wasm.OpLocalGet, i).I32(int32(ways)).Op(wasm.OpI32RemU).BrTable(labels)
		for j := range ways {
			a.Op(wasm.OpEnd).Op(wasm.OpNop).Idx(wasm.OpBr, ways-1-j)
		}
		a.Op(wasm.OpEnd).Idx(wasm.OpBr, 0)
	}
	a.Op(wasm.OpEnd).Op(wasm.OpEnd).Op(wasm.OpEnd)
	return startModule(t, a.B)
}

// TestPackedLoopCounters checks the loop counters that share one local
// (a branching loop's back edge of 2 to 8 paths): each of them counts up
// to 2^(width-1) before the local is added to memory in the loop, 2^20
// for 2 paths and 64 for 8, so three million iterations flush each site
// many times over, or, with two paths, once or twice. The profiles equal
// those counted in memory, with the counters in the program's memory and
// in a counter module, and every iteration is counted.
func TestPackedLoopCounters(t *testing.T) {
	ctx := context.Background()
	const iters = 3_000_000
	for _, ways := range []uint32{0, 2, 3, 4} {
		mod := packedLoopModule(t, iters, ways)
		res, err := instrument.Instrument(mod, instrument.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Funcs[0].PackedSites == 0 {
			t.Fatalf("ways %d: no loop counters packed", ways)
		}
		off, err := Profile(ctx, mod, Options{Instrument: instrument.Options{NoLoopCounts: true}})
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		for _, c := range tracer.Counts(off) {
			n += c
		}
		if n != iters {
			t.Fatalf("ways %d: %d paths counted in memory, want %d", ways, n, iters)
		}
		for _, separate := range []bool{false, true} {
			on, err := Profile(ctx, mod, Options{Instrument: instrument.Options{SeparateCounters: separate}})
			if err != nil {
				t.Fatal(err)
			}
			if ok, diff := off.Equal(on); !ok {
				t.Fatalf("ways %d (counter module %v): packed loop counters change the profile: %s", ways, separate, diff)
			}
		}
		t.Logf("ways %d: %d packed sites, profiles equal", ways, res.Funcs[0].PackedSites)
	}
}
