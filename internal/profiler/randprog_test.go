package profiler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
)

// randProgram writes random structured code: nested blocks, ifs and
// loops (some with a result), forward br_if and br_table, loops continued
// from nested blocks and from inner loops, by br_if or by a br_table of
// two loops, returns and calls, every
// branch decided by a pseudo-random state in global 0. Every loop counts
// its iterations down in a local of its own depth, and every way to
// continue a loop decrements its counter first, so runs end; a loop that
// only its end continues may test its counter for 0, as a counted loop
// does.
type randProgram struct {
	r      *rand.Rand
	a      wasm.Asm
	frames []randFrame // innermost last
	loops  int         // loops open
	calls  bool        // may call function 1
	size   int         // statements left
}

type randFrame struct {
	loop    bool
	counter uint32 // a loop's counter local
	// continued says that a branch other than the loop's end continues
	// it (and decrements its counter).
	continued bool
}

const randLocals = 4 // counters: loops nest at most this deep

// rnd pushes the next pseudo-random number mod m.
func (g *randProgram) rnd(m int32) {
	g.a.Idx(wasm.OpGlobalGet, 0).I32(1103515245).Op(wasm.OpI32Mul).I32(12345).Op(wasm.OpI32Add).
		Idx(wasm.OpGlobalSet, 0).Idx(wasm.OpGlobalGet, 0).I32(16).Op(wasm.OpI32ShrU).I32(m).Op(wasm.OpI32RemU)
}

// label returns the depth of a random enclosing frame that a branch may
// take forward (a block or an if, or the function), or -1.
func (g *randProgram) label() int {
	var ls []int
	for i, f := range g.frames {
		if !f.loop {
			ls = append(ls, len(g.frames)-1-i)
		}
	}
	if g.r.IntN(8) == 0 {
		ls = append(ls, len(g.frames)) // the function: a return
	}
	if len(ls) == 0 {
		return -1
	}
	return ls[g.r.IntN(len(ls))]
}

// loopFrames returns the indices of the loops among the frames.
func (g *randProgram) loopFrames() []int {
	var ls []int
	for i, f := range g.frames {
		if f.loop {
			ls = append(ls, i)
		}
	}
	return ls
}

func (g *randProgram) stmts(depth int) {
	for n := 1 + g.r.IntN(4); n > 0 && g.size > 0; n-- {
		g.size--
		g.stmt(depth)
	}
}

func (g *randProgram) stmt(depth int) {
	a := &g.a
	switch k := g.r.IntN(10); {
	case k == 0 || depth > 6:
		a.Op(wasm.OpNop)
	case k == 1:
		g.rnd(2)
		a.Block(wasm.OpIf)
		g.frames = append(g.frames, randFrame{})
		g.stmts(depth + 1)
		if g.r.IntN(2) == 0 {
			a.Op(wasm.OpElse)
			g.stmts(depth + 1)
		}
		g.frames = g.frames[:len(g.frames)-1]
		a.Op(wasm.OpEnd)
	case k == 2:
		a.Block(wasm.OpBlock)
		g.frames = append(g.frames, randFrame{})
		g.stmts(depth + 1)
		g.frames = g.frames[:len(g.frames)-1]
		a.Op(wasm.OpEnd)
	case k <= 4 && g.loops < randLocals:
		c := uint32(g.loops)
		g.loops++
		result := g.r.IntN(4) == 0
		a.I32(int32(1+g.r.IntN(5))).Idx(wasm.OpLocalSet, c)
		if result {
			a.B = wasm.AppendInstr(a.B, &wasm.Instr{Op: wasm.OpLoop, Block: wasm.BlockType{Kind: wasm.BlockValue, Val: wasm.ValI32}})
		} else {
			a.Block(wasm.OpLoop)
		}
		g.frames = append(g.frames, randFrame{loop: true, counter: c})
		g.stmts(depth + 1)
		continued := g.frames[len(g.frames)-1].continued
		g.frames = g.frames[:len(g.frames)-1]
		a.Idx(wasm.OpLocalGet, c).I32(1).Op(wasm.OpI32Sub).Idx(wasm.OpLocalTee, c)
		if continued || g.r.IntN(2) == 0 {
			a.I32(0).Op(wasm.OpI32GtS)
		}
		// Else the test is c != 0, as clang ends a counted loop: only
		// this decrement sets c, from 1 to 5, so it reaches 0.
		a.Idx(wasm.OpBrIf, 0)
		if result {
			a.I32(7).Op(wasm.OpEnd).Op(wasm.OpDrop)
		} else {
			a.Op(wasm.OpEnd)
		}
		g.loops--
	case k == 5:
		if l := g.label(); l >= 0 {
			g.rnd(3)
			a.Op(wasm.OpI32Eqz).Idx(wasm.OpBrIf, uint32(l))
		}
	case k == 6 && g.r.IntN(3) == 0:
		labels := make([]uint32, 1+g.r.IntN(3))
		for i := range labels {
			l := g.label()
			if l < 0 {
				return
			}
			labels[i] = uint32(l)
		}
		g.rnd(int32(len(labels)))
		a.BrTable(labels)
	case k == 7:
		// Continue an enclosing loop, maybe not the innermost.
		ls := g.loopFrames()
		if len(ls) == 0 {
			return
		}
		i := ls[g.r.IntN(len(ls))]
		c := g.frames[i].counter
		g.frames[i].continued = true
		a.Idx(wasm.OpLocalGet, c).I32(1).Op(wasm.OpI32Sub).Idx(wasm.OpLocalTee, c).I32(0).Op(wasm.OpI32GtS)
		g.rnd(2)
		a.Op(wasm.OpI32And).Idx(wasm.OpBrIf, uint32(len(g.frames)-1-i))
	case k == 8 && g.calls:
		a.Idx(wasm.OpCall, 1)
	case k == 9 && g.r.IntN(2) == 0:
		// Continue one of two enclosing loops by a br_table.
		ls := g.loopFrames()
		if len(ls) == 0 {
			return
		}
		i, j := ls[g.r.IntN(len(ls))], ls[g.r.IntN(len(ls))]
		for n, x := range []int{i, j} {
			c := g.frames[x].counter
			g.frames[x].continued = true
			a.Idx(wasm.OpLocalGet, c).I32(1).Op(wasm.OpI32Sub).Idx(wasm.OpLocalTee, c).I32(0).Op(wasm.OpI32GtS)
			if n > 0 {
				a.Op(wasm.OpI32And)
			}
		}
		a.Block(wasm.OpIf)
		g.rnd(2)
		a.BrTable([]uint32{uint32(len(g.frames) - i), uint32(len(g.frames) - j)})
		a.Op(wasm.OpEnd)
	default:
		g.rnd(5)
		a.Op(wasm.OpDrop)
	}
}

// randModule returns a command module of two functions of random code:
// _start, which calls the other.
func randModule(t *testing.T, seed uint64) []byte {
	return randModuleCut(t, seed, 0)
}

// randModuleCut is randModule with _start beginning with diamonds if
// statements whose arms do nothing, each of which doubles its paths: past
// 18, the function is cut at its loop headers.
func randModuleCut(t *testing.T, seed uint64, diamonds int) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	var code []wasm.Code
	for f := range 2 {
		g := &randProgram{r: r, calls: f == 0, size: 30}
		if f == 0 {
			for range diamonds {
				g.rnd(2)
				g.a.Block(wasm.OpIf)
				g.a.Op(wasm.OpNop).Op(wasm.OpElse).Op(wasm.OpNop).Op(wasm.OpEnd)
			}
		}
		g.stmts(0)
		for g.size > 0 {
			g.size--
			g.stmt(0)
		}
		g.a.Op(wasm.OpEnd)
		ls := []wasm.LocalDecl{{Count: randLocals, Type: wasm.ValI32}}
		code = append(code, wasm.NewCode(ls, g.a.B))
	}
	var init wasm.Asm
	init.I32(int32(seed)).Op(wasm.OpEnd)
	m := &wasm.Module{Version: 1, Types: []wasm.FuncType{{}}, Funcs: []uint32{0, 0},
		Globals: []wasm.Global{{GlobalType: wasm.GlobalType{Type: wasm.ValI32, Mutable: true}, Init: init.B}},
		Exports: []wasm.Export{{Name: "_start", Kind: wasm.KindFunc, Index: 0}},
		Code:    code}
	return wasmtest.Encode(t, m, wasm.SecType, wasm.SecFunction, wasm.SecGlobal, wasm.SecExport, wasm.SecCode)
}

// TestRandomPrograms profiles random programs with SBL and compares the
// profiles with the tracer's. The modules have no memory of their own, so
// the counters sit at address 0, where a count whose constant went into
// the store's offset once wrapped below 0. Some of their loops are
// counted loops.
func TestRandomPrograms(t *testing.T) {
	ctx := context.Background()
	counted := 0
	for seed := range uint64(60) {
		orig := randModule(t, seed)
		exact, err := Profile(ctx, orig, Options{Run: runner.Config{}})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		checkTraced(t, fmt.Sprintf("seed %d", seed), orig, runner.Config{}, exact)
		res, err := instrument.Instrument(orig, instrument.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Funcs {
			counted += f.CountedLoops
		}
	}
	if counted == 0 {
		t.Fatal("no random program has a counted loop")
	}
	t.Logf("%d counted loops", counted)
}
