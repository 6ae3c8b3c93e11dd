package tracer_test

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/tracer"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// instrOffsets returns the file offsets of the instructions of defined
// function def, in order.
func instrOffsets(t *testing.T, b []byte, def int) []int {
	t.Helper()
	m, err := wasm.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Code[def]
	r := wasm.NewReader(c.Body, c.OrigOff, "code")
	r.Seek(int(c.ExprOff))
	var offs []int
	var in wasm.Instr
	for !r.Done() {
		if err := r.Next(&in); err != nil {
			t.Fatal(err)
		}
		offs = append(offs, c.OrigOff+int(in.Off))
	}
	return offs
}

// key names a path by the positions of its blocks' first instructions in
// function def.
func key(t *testing.T, b []byte, fn uint32, def int, kind string, instrs ...int) tracer.Key {
	t.Helper()
	offs := instrOffsets(t, b, def)
	var s []string
	for _, i := range instrs {
		s = append(s, fmt.Sprint(offs[i]))
	}
	return tracer.Key{Func: fn, Kind: kind, Blocks: strings.Join(s, ",")}
}

var (
	voidType = wasm.FuncType{}
	i32Type  = wasm.FuncType{Params: []wasm.ValType{wasm.ValI32}}
	i64Type  = wasm.FuncType{Params: []wasm.ValType{wasm.ValI64}}
)

const opI32GeS, opI64And, opI64Eqz wasm.Op = 0x4E, 0x83, 0x50

// loopModule returns a command whose _start counts a local from 0 to n,
// calling f(i) on each iteration; f takes one arm of an if/else by the
// parity of i. After the loop, _start returns, calls g, which calls
// proc_exit(7), or traps, as end says.
//
//	func 0 proc_exit (import)
//	func 1 f(x):  0 local.get 0; 1 i32.const 1; 2 i32.and; 3 if; 4 nop; 5 else; 6 nop; 7 end; 8 end
//	func 2 _start: 0 block; 1 loop; 2 local.get 0; 3 i32.const n; 4 i32.ge_s; 5 br_if 1;
//	               6 local.get 0; 7 call f; 8 local.get 0; 9 i32.const 1; 10 i32.add;
//	               11 local.set 0; 12 br 0; 13 end; 14 end; 15 [end...]
//	func 3 g:     0 i32.const 7; 1 call proc_exit; 2 end
func loopModule(t *testing.T, n int32, end string) []byte {
	start := code(blk(wasm.OpBlock), blk(wasm.OpLoop),
		opA(wasm.OpLocalGet, 0), i32(n), op(opI32GeS), opA(wasm.OpBrIf, 1),
		opA(wasm.OpLocalGet, 0), opA(wasm.OpCall, 1),
		opA(wasm.OpLocalGet, 0), i32(1), op(wasm.OpI32Add), opA(wasm.OpLocalSet, 0), opA(wasm.OpBr, 0),
		op(wasm.OpEnd), op(wasm.OpEnd))
	switch end {
	case "exit":
		start = append(start, code(opA(wasm.OpCall, 3))...)
	case "trap":
		start = append(start, code(op(wasm.OpUnreachable))...)
	}
	start = append(start, code(op(wasm.OpEnd))...)
	return testModule{
		types:   []wasm.FuncType{voidType, i32Type},
		imports: []wasm.Import{{Module: "wasi_snapshot_preview1", Name: "proc_exit", Kind: wasm.KindFunc, Type: 1}},
		funcs: []fn{
			{typ: 1, code: code(opA(wasm.OpLocalGet, 0), i32(1), op(wasm.OpI32And),
				blk(wasm.OpIf), op(wasm.OpNop), op(wasm.OpElse), op(wasm.OpNop), op(wasm.OpEnd), op(wasm.OpEnd))},
			{typ: 0, locals: 1, code: start},
			{typ: 0, code: code(i32(7), opA(wasm.OpCall, 0), op(wasm.OpEnd))},
		},
		exports: []wasm.Export{{Name: "_start", Kind: wasm.KindFunc, Index: 2}},
	}.encode(t)
}

// TestLoop checks a profile counted by hand: a loop of n iterations runs
// one entry-back path, n-1 back-back paths and one back-exit path, and
// the callee's two paths split the calls by parity.
func TestLoop(t *testing.T) {
	const n = 5
	for _, end := range []string{"return", "exit", "trap"} {
		t.Run(end, func(t *testing.T) {
			b := loopModule(t, n, end)
			tr := instrument(t, b)
			r, res, err := tr.Run(context.Background(), runner.Config{})
			if r == nil {
				t.Fatal(err)
			}
			want := map[tracer.Key]uint64{
				key(t, b, 1, 0, profile.KindEntryExit, 0, 4, 8): 2, // odd i: the then arm
				key(t, b, 1, 0, profile.KindEntryExit, 0, 6, 8): 3, // even i: the else arm
				key(t, b, 2, 1, profile.KindEntryBack, 0, 2, 6): 1,
				key(t, b, 2, 1, profile.KindBackBack, 2, 6):     n - 1,
			}
			var dropped uint64
			switch end {
			case "return":
				want[key(t, b, 2, 1, profile.KindBackExit, 2, 15)] = 1
				if err != nil || res.ExitCode != 0 {
					t.Errorf("exit code %d, error %v", res.ExitCode, err)
				}
			case "exit":
				// g's path ends at proc_exit; _start's last one never ends.
				want[key(t, b, 3, 2, profile.KindEntryExit, 0)] = 1
				dropped = 1
				if err != nil || !res.Exited || res.ExitCode != 7 {
					t.Errorf("exited %v with code %d, error %v; want exit code 7", res.Exited, res.ExitCode, err)
				}
				if s := r.Calls[3]; s == nil || *s != (tracer.CallStats{Calls: 1, Exits: 1, Unwound: 1}) {
					t.Errorf("calls of g: %+v", s)
				}
			case "trap":
				dropped = 1
				if err == nil || res.Trap == nil {
					t.Errorf("no trap: result %+v, error %v", res, err)
				}
			}
			if !maps.Equal(r.Paths, want) {
				t.Errorf("paths\n%v\nwant\n%v", r.Paths, want)
			}
			if r.Dropped != dropped {
				t.Errorf("%d paths dropped, want %d", r.Dropped, dropped)
			}
			if s := r.Calls[1]; s == nil || *s != (tracer.CallStats{Calls: n, Returns: n}) {
				t.Errorf("calls of f: %+v", s)
			}
			checkPaths(t, b, r, nil)
		})
	}
}

// TestTailCallAndThrow checks the frames wazero drops without telling the
// listener: a tail call replaces its caller, and an exception caught in an
// outer frame removes the frames it passes.
//
//	func 0 g:       nop; end
//	func 1 tc:      nop; return_call g; end
//	func 2 thrower: throw 0; end
//	func 3 mid:     call thrower; nop; end
//	func 4 catcher: block; try_table (catch 0 0); call mid; end; end; end (not traced)
//	func 5 _start:  call tc; call catcher; call tc; call thrower; end
func TestTailCallAndThrow(t *testing.T) {
	b := testModule{
		types: []wasm.FuncType{voidType},
		tags:  []wasm.Tag{{Type: 0}},
		funcs: []fn{
			{code: code(op(wasm.OpNop), op(wasm.OpEnd))},
			{code: code(op(wasm.OpNop), opA(wasm.OpReturnCall, 0), op(wasm.OpEnd))},
			{code: code(opA(wasm.OpThrow, 0), op(wasm.OpEnd))},
			{code: code(opA(wasm.OpCall, 2), op(wasm.OpNop), op(wasm.OpEnd))},
			{code: code(blk(wasm.OpBlock), tryTable(wasm.Catch{Kind: wasm.CatchTag, Tag: 0, Label: 0}),
				opA(wasm.OpCall, 3), op(wasm.OpEnd), op(wasm.OpEnd), op(wasm.OpEnd))},
			{code: code(opA(wasm.OpCall, 1), opA(wasm.OpCall, 4), opA(wasm.OpCall, 1), opA(wasm.OpCall, 2), op(wasm.OpEnd))},
		},
		exports: []wasm.Export{{Name: "_start", Kind: wasm.KindFunc, Index: 5}},
	}.encode(t)
	tr, err := tracer.Instrument(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.Funcs[4].Skipped; got != "exception handling" {
		t.Errorf("the catcher is skipped for %q", got)
	}
	// No validate: wabt's wasm-validate here predates try_table.
	r, res, err := tr.Run(context.Background(), runner.Config{})
	if r == nil {
		t.Fatal(err)
	}
	if res.Trap == nil || !strings.Contains(err.Error(), "uncaught exception") {
		t.Errorf("the last throw is not the trap: %v", err)
	}
	want := map[tracer.Key]uint64{
		key(t, b, 0, 0, profile.KindEntryExit, 0): 2,
		key(t, b, 1, 1, profile.KindEntryExit, 0): 2, // ended by the tail calls
		key(t, b, 2, 2, profile.KindEntryExit, 0): 2, // one throw caught, one not
	}
	if !maps.Equal(r.Paths, want) {
		t.Errorf("paths\n%v\nwant\n%v", r.Paths, want)
	}
	// mid's path and _start's were cut short by exceptions.
	if r.Dropped != 2 {
		t.Errorf("%d paths dropped, want 2", r.Dropped)
	}
	wantCalls := map[uint32]tracer.CallStats{
		0: {Calls: 2, Returns: 2},
		1: {Calls: 2, Unwound: 2},
		2: {Calls: 2, Unwound: 2},
		3: {Calls: 1, Unwound: 1},
		5: {Calls: 1, Unwound: 1},
	}
	for f, w := range wantCalls {
		if s := r.Calls[f]; s == nil || *s != w {
			t.Errorf("calls of function %d: %+v, want %+v", f, s, w)
		}
	}
	checkPaths(t, b, r, map[uint32]uint64{1: 2, 2: 2})
}

// TestCut checks a function with 2^64 paths, which numbering.Cut splits:
// 64 if/else diamonds in a row. Every path ends where the next begins,
// at a cut vertex.
//
//	func 0 f(x i64): 64 times (local.get 0; i64.const 1<<k; i64.and; i64.eqz;
//	                 if; nop; else; nop; end), end
//	func 1 _start:   i64.const x; call f; i64.const x; call f; end
func TestCut(t *testing.T) {
	const x = 0x0123456789abcdef
	var f []wasm.Instr
	for k := range 64 {
		f = append(f, opA(wasm.OpLocalGet, 0), wasm.Instr{Op: wasm.OpI64Const, Const: 1 << k}, op(opI64And), op(opI64Eqz),
			blk(wasm.OpIf), op(wasm.OpNop), op(wasm.OpElse), op(wasm.OpNop), op(wasm.OpEnd))
	}
	f = append(f, op(wasm.OpEnd))
	arg := wasm.Instr{Op: wasm.OpI64Const, Const: x}
	b := testModule{
		types: []wasm.FuncType{voidType, i64Type},
		funcs: []fn{
			{typ: 1, code: code(f...)},
			{typ: 0, code: code(arg, opA(wasm.OpCall, 0), arg, opA(wasm.OpCall, 0), op(wasm.OpEnd))},
		},
		exports: []wasm.Export{{Name: "_start", Kind: wasm.KindFunc, Index: 1}},
	}.encode(t)
	tr, err := tracer.Instrument(b)
	if err != nil {
		t.Fatal(err)
	}
	tf := tr.Funcs[0]
	if len(tf.Cuts) == 0 {
		t.Fatal("no cut in a function with 2^64 paths")
	}
	if n, ok := new(big.Int).SetString(tf.PossiblePaths, 10); !ok || n.Cmp(big.NewInt(1<<63-1)) > 0 {
		t.Errorf("%s possible paths after cutting", tf.PossiblePaths)
	}
	r, _, err := tr.Run(context.Background(), runner.Config{})
	if err != nil {
		t.Fatal(err)
	}
	checkPaths(t, b, r, nil)

	// The blocks the call runs, by the positions of their first
	// instructions: the entry block, then per diamond the arm bit k of x
	// selects (the then arm when it is 0) and the join.
	offs := instrOffsets(t, b, 0)
	ran := []int{offs[0]}
	for k := range 64 {
		arm := 9*k + 5
		if x>>k&1 != 0 {
			arm = 9*k + 7
		}
		ran = append(ran, offs[arm], offs[9*(k+1)])
	}
	// Each path is a run of ran, ending just before a cut vertex.
	cut := map[int]bool{}
	for _, v := range tf.Cuts {
		cut[tf.Offsets[v]] = true
	}
	want := map[tracer.Key]uint64{}
	from := 0
	for i := 1; i <= len(ran); i++ {
		if i < len(ran) && !cut[ran[i]] {
			continue
		}
		kind := map[[2]bool]string{
			{true, true}: profile.KindEntryExit, {true, false}: profile.KindEntryBack,
			{false, true}: profile.KindBackExit, {false, false}: profile.KindBackBack,
		}[[2]bool{from == 0, i == len(ran)}]
		var s []string
		for _, o := range ran[from:i] {
			s = append(s, fmt.Sprint(o))
		}
		want[tracer.Key{Func: 0, Kind: kind, Blocks: strings.Join(s, ",")}] = 2
		from = i
	}
	if len(want) < 2 {
		t.Errorf("the run crosses no cut vertex: %d paths", len(want))
	}
	want[key(t, b, 1, 1, profile.KindEntryExit, 0)] = 1 // _start
	if !maps.Equal(r.Paths, want) {
		t.Errorf("paths\n%v\nwant\n%v", r.Paths, want)
	}
}

// TestChecksFail makes sure checkPaths is not vacuous: each corruption of
// a correct result must be reported.
func TestChecksFail(t *testing.T) {
	b := loopModule(t, 5, "return")
	r, _, err := tracer.Run(context.Background(), b, runner.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if p := pathProblems(t, b, r, nil); len(p) > 0 {
		t.Fatalf("the correct result fails: %v", p)
	}
	backBack := key(t, b, 2, 1, profile.KindBackBack, 2, 6)
	for name, corrupt := range map[string]func(map[tracer.Key]uint64){
		"block skipped": func(p map[tracer.Key]uint64) {
			delete(p, backBack)
			p[key(t, b, 2, 1, profile.KindBackBack, 2)] = 4
		},
		"back path from the entry": func(p map[tracer.Key]uint64) {
			delete(p, backBack)
			p[key(t, b, 2, 1, profile.KindEntryBack, 2, 6)] = 4
		},
		"back edge inside a path": func(p map[tracer.Key]uint64) {
			p[key(t, b, 2, 1, profile.KindBackBack, 2, 6, 2, 6)] = 1
		},
		"path not ending at the exit": func(p map[tracer.Key]uint64) {
			p[key(t, b, 2, 1, profile.KindBackExit, 2, 6)] = 1
		},
		"one exit too many": func(p map[tracer.Key]uint64) {
			p[key(t, b, 1, 0, profile.KindEntryExit, 0, 4, 8)]++
		},
		"entry path of a function never called": func(p map[tracer.Key]uint64) {
			p[key(t, b, 3, 2, profile.KindEntryExit, 0)] = 1
		},
	} {
		bad := *r
		bad.Paths = maps.Clone(r.Paths)
		corrupt(bad.Paths)
		if len(pathProblems(t, b, &bad, nil)) == 0 {
			t.Errorf("%s: not reported", name)
		}
	}
}

// TestMissingEdge checks that the tracer fails loudly when a block event
// follows a block that no graph edge joins to it, by hiding an edge.
func TestMissingEdge(t *testing.T) {
	b := loopModule(t, 5, "return")
	tr, err := tracer.Instrument(b)
	if err != nil {
		t.Fatal(err)
	}
	f := &tr.Funcs[0] // f: the then arm's edge into the join
	g := *f.Graph
	g.Blocks = slices.Clone(g.Blocks)
hide:
	for n, blk := range g.Blocks {
		for _, e := range blk.Out {
			if g.Edges[e].Kind == cfg.EdgeFallthrough {
				g.Blocks[n].Out = slices.DeleteFunc(slices.Clone(blk.Out), func(x int32) bool { return x == e })
				break hide
			}
		}
	}
	f.Graph = &g
	r, _, err := tr.Run(context.Background(), runner.Config{})
	if r != nil || err == nil || !strings.Contains(err.Error(), "which no edge joins") {
		t.Errorf("result %v, error %v; want a missing-edge error", r != nil, err)
	}
}

// TestBadConfig checks that the tracer refuses to share the hooks it needs.
func TestBadConfig(t *testing.T) {
	b := loopModule(t, 1, "return")
	for _, c := range []runner.Config{
		{Modules: []runner.NamedModule{{Name: "x", Wasm: b}}},
		{HostModules: func(context.Context, wazero.Runtime) ([]wazero.CompiledModule, error) { return nil, nil }},
	} {
		if _, _, err := tracer.Run(context.Background(), b, c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

// TestDeepStack checks recursion deeper than the 29 frames wazero shows to
// listeners: a trap or proc_exit at the bottom aborts only the top frames,
// and the tracer must drop the rest itself.
//
//	func 0 proc_exit (import)
//	func 1 rec(n): 0 local.get 0; 1 i32.eqz; 2 if; 3 [return | unreachable |
//	               i32.const 3; call proc_exit]; end; local.get 0; i32.const 1;
//	               i32.sub; call rec; end
//	func 2 _start: 0 i32.const depth; 1 call rec; 2 end
func TestDeepStack(t *testing.T) {
	const depth = 100
	for _, end := range []string{"return", "trap", "exit"} {
		t.Run(end, func(t *testing.T) {
			action := map[string][]wasm.Instr{
				"return": {op(wasm.OpReturn)},
				"trap":   {op(wasm.OpUnreachable)},
				"exit":   {i32(3), opA(wasm.OpCall, 0)},
			}[end]
			rec := []wasm.Instr{opA(wasm.OpLocalGet, 0), op(wasm.OpI32Eqz), blk(wasm.OpIf)}
			rec = append(rec, action...)
			join := len(rec) + 1 // after the if's end
			rec = append(rec, op(wasm.OpEnd), opA(wasm.OpLocalGet, 0), i32(1), op(wasm.OpI32Sub), opA(wasm.OpCall, 1), op(wasm.OpEnd))
			b := testModule{
				types:   []wasm.FuncType{voidType, i32Type},
				imports: []wasm.Import{{Module: "wasi_snapshot_preview1", Name: "proc_exit", Kind: wasm.KindFunc, Type: 1}},
				funcs: []fn{
					{typ: 1, code: code(rec...)},
					{typ: 0, code: code(i32(depth), opA(wasm.OpCall, 1), op(wasm.OpEnd))},
				},
				exports: []wasm.Export{{Name: "_start", Kind: wasm.KindFunc, Index: 2}},
			}.encode(t)
			r, res, err := tracer.Run(context.Background(), b, runner.Config{})
			if r == nil {
				t.Fatal(err)
			}
			want := map[tracer.Key]uint64{}
			stats := tracer.CallStats{Calls: depth + 1, Unwound: depth + 1}
			var dropped uint64 = depth + 2 // every rec and _start
			switch end {
			case "return":
				want[key(t, b, 1, 0, profile.KindEntryExit, 0, 3)] = 1
				want[key(t, b, 1, 0, profile.KindEntryExit, 0, join)] = depth
				want[key(t, b, 2, 1, profile.KindEntryExit, 0)] = 1
				stats = tracer.CallStats{Calls: depth + 1, Returns: depth + 1}
				dropped = 0
			case "trap":
				if res.Trap == nil {
					t.Errorf("no trap: %v", err)
				}
			case "exit":
				want[key(t, b, 1, 0, profile.KindEntryExit, 0, 3)] = 1
				stats.Exits = 1
				dropped--
				if res.ExitCode != 3 || err != nil {
					t.Errorf("exit code %d, error %v", res.ExitCode, err)
				}
			}
			if !maps.Equal(r.Paths, want) {
				t.Errorf("paths\n%v\nwant\n%v", r.Paths, want)
			}
			if s := r.Calls[1]; s == nil || *s != stats {
				t.Errorf("calls of rec: %+v, want %+v", s, stats)
			}
			if r.Dropped != dropped {
				t.Errorf("%d paths dropped, want %d", r.Dropped, dropped)
			}
			checkPaths(t, b, r, nil)
		})
	}
}
