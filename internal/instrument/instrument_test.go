// Tests of counting copies: the test programs profiled with counters in
// memory and in the counter module, node runs, the program's view of its
// memory, the fallback near 4 GiB, br_ifs that become ifs.

package instrument

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/counters"
	"github.com/pathprof/pathprof/internal/noderun"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
	"github.com/pathprof/pathprof/profile"
)

// runProfiled instruments a module, runs it, and returns the program's
// output and the profile's functions. It runs it twice, with the counters
// in the program's memory and in the counter module, and checks that
// both give the same output and counts.
func runProfiled(t *testing.T, orig []byte, cfg runner.Config) (string, uint32, []profile.Function, *Result) {
	t.Helper()
	out, code, fs, res := runProfiledWith(t, orig, cfg, Options{})
	if res.Counters != nil {
		t.Fatal("the counters of a module with its own memory were not put there")
	}
	sout, scode, sfs, sres := runProfiledWith(t, orig, cfg, Options{SeparateCounters: true})
	if sres.Counters == nil {
		t.Fatal("SeparateCounters made no counter module")
	}
	if sout != out || scode != code {
		t.Fatalf("with a counter module: exit %d and output %.200q; with counters in memory: exit %d and %.200q", scode, sout, code, out)
	}
	if ok, diff := (&profile.Profile{Functions: fs}).Equal(&profile.Profile{Functions: sfs}); !ok {
		t.Fatalf("counters in memory and in a counter module differ: %s", diff)
	}
	return out, code, fs, res
}

func runProfiledWith(t *testing.T, orig []byte, cfg runner.Config, opt Options) (string, uint32, []profile.Function, *Result) {
	t.Helper()
	res, err := Instrument(orig, opt)
	if err != nil {
		t.Fatal(err)
	}
	wasmtest.Validate(t, "the instrumented module", res.Module)
	var out bytes.Buffer
	var counts counters.Counts
	if r, ok := cfg.Stdin.(io.Seeker); ok {
		r.Seek(0, io.SeekStart)
	}
	cfg.Stdout = &out
	cfg.Modules = counters.Modules(res.Counters)
	var readErr error
	cfg.AfterRun = func(ctx context.Context, mods map[string]api.Module) error {
		counts, readErr = counters.ReadInstance(mods)
		return readErr
	}
	r, err := runner.Run(context.Background(), res.Module, cfg)
	if err != nil {
		t.Fatal(err)
	}
	fs, _, err := res.Functions(counts)
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), r.ExitCode, fs, res
}

func TestCPrograms(t *testing.T) {
	for _, p := range testprogs.CPrograms(t) {
		t.Run(p.Name, func(t *testing.T) {
			orig, err := os.ReadFile(p.Wasm)
			if err != nil {
				t.Fatal(err)
			}
			cfg := p.Config(t)
			cfg.ProgramName = filepath.Base(p.Wasm)
			out, code, fs, res := runProfiled(t, orig, cfg)
			if out != p.WantStdout || code != p.WantExitCode {
				t.Fatalf("instrumented program: exit %d, want %d; output differs: %v", code, p.WantExitCode, out != p.WantStdout)
			}
			// A dense budget that half the arrays fit, as in a module
			// of tens of thousands of functions: the small functions
			// keep dense arrays, the others are hashed, and the counts
			// stay the same.
			l := res.Layout
			start := uint64(l.DenseEnd)
			for _, fl := range l.Funcs {
				if fl.Kind == counters.KindDense {
					start = min(start, uint64(fl.Base))
				}
			}
			budget := start + (uint64(l.DenseEnd)-start)/2
			_, _, mixed, mres := runProfiledWith(t, orig, cfg, Options{Counters: counters.Options{DenseBudget: budget}})
			var dense, hashed int
			for _, fl := range mres.Layout.Funcs {
				switch fl.Kind {
				case counters.KindDense:
					dense++
				case counters.KindHash:
					hashed++
				}
			}
			if dense == 0 || hashed == 0 {
				t.Errorf("dense budget %d: %d dense and %d hashed functions, want both", budget, dense, hashed)
			}
			if ok, diff := (&profile.Profile{Functions: fs}).Equal(&profile.Profile{Functions: mixed}); !ok {
				t.Fatalf("dense budget %d (%d dense, %d hashed): counts differ: %s", budget, dense, hashed, diff)
			}
			paths, execs := 0, uint64(0)
			for _, f := range fs {
				paths += len(f.Paths)
				for _, pa := range f.Paths {
					execs += pa.Count
				}
			}
			if paths == 0 {
				t.Fatal("no paths counted")
			}
			t.Logf("%d functions, %d distinct paths, %d path executions", len(fs), paths, execs)
		})
	}
}

// TestGoPrograms instruments Go programs (br_table dispatch in every
// function, if/else, huge path counts) and checks they behave as before.
func TestGoPrograms(t *testing.T) {
	progs := []struct {
		name string
		path string
		cfg  runner.Config
	}{
		{"hello", testprogs.GoHello(t), runner.Config{}},
		{"sort.test", testprogs.GoStdTest(t, "sort"), testprogs.GoStdTestConfig(t, "sort")},
	}
	for _, p := range progs {
		t.Run(p.name, func(t *testing.T) {
			orig, err := os.ReadFile(p.path)
			if err != nil {
				t.Fatal(err)
			}
			cfg := p.cfg
			cfg.CacheDir = testprogs.WazeroCacheDir(t)
			var want bytes.Buffer
			cfg.Stdout = &want
			r0, err := runner.Run(context.Background(), orig, cfg)
			if err != nil {
				t.Fatal(err)
			}
			out, code, fs, res := runProfiled(t, orig, cfg)
			if out != want.String() || code != r0.ExitCode {
				t.Fatalf("instrumented program: exit %d, want %d\n%.1000s\nwant\n%.1000s", code, r0.ExitCode, out, want.String())
			}
			skipped, cut, paths := 0, 0, 0
			for i, f := range fs {
				if strings.HasPrefix(string(f.Status), "skipped") {
					skipped++
				}
				if len(res.Funcs[i].Cuts) > 0 {
					cut++
				}
				paths += len(f.Paths)
			}
			t.Logf("%d functions (%d skipped, %d cut), %d distinct paths", len(fs), skipped, cut, paths)
		})
	}
}

// TestNode runs instrumented C programs under node's WASI with the
// generated counter module: same output and exit code, same counts as
// under wazero.
func TestNode(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	for _, p := range testprogs.CPrograms(t) {
		t.Run(p.Name, func(t *testing.T) {
			orig, err := os.ReadFile(p.Wasm)
			if err != nil {
				t.Fatal(err)
			}
			stdin := func() io.Reader {
				if p.Stdin == "" {
					return strings.NewReader("")
				}
				b, _ := os.ReadFile(p.Stdin)
				return bytes.NewReader(b)
			}
			cfg := runner.Config{Args: p.Args, ProgramName: filepath.Base(p.Wasm), Stdin: stdin()}
			for _, separate := range []bool{false, true} {
				_, _, want, res := runProfiledWith(t, orig, cfg, Options{SeparateCounters: separate})
				nr, err := noderun.Run(context.Background(), res.Module, res.Counters, p.Args, stdin())
				if err != nil {
					t.Fatal(err)
				}
				if string(nr.Stdout) != p.WantStdout || uint32(nr.ExitCode) != p.WantExitCode {
					t.Fatalf("under node: exit %d, want %d; output differs: %v\n%s", nr.ExitCode, p.WantExitCode, string(nr.Stdout) != p.WantStdout, nr.Stderr)
				}
				counts, err := counters.Read(nr.Counters)
				if err != nil {
					t.Fatal(err)
				}
				got, _, err := res.Functions(counts)
				if err != nil {
					t.Fatal(err)
				}
				a := &profile.Profile{Functions: want}
				b := &profile.Profile{Functions: got}
				if ok, diff := a.Equal(b); !ok {
					t.Fatalf("counter module %v: node's counts differ from wazero's: %s", separate, diff)
				}
			}
		})
	}
}

// TestCountersInMemoryKeepTheProgramsView checks that counters in the
// program's memory are invisible to it: through growths of its memory
// (the counter area moving up) and of the hash table of counts, the
// program's memory.size and memory.grow answer as in the original run,
// new pages are zero, its memory holds the same bytes at the end, growth
// beyond a declared maximum fails alike, and the counts equal those of a
// counter module.
func TestCountersInMemoryKeepTheProgramsView(t *testing.T) {
	for _, max := range []uint64{0, 12} {
		orig := wasmtest.GrowModule(3000, max)
		view := func(mod []byte, opt *Options) ([]byte, uint32) {
			var mem []byte
			cfg := runner.Config{AfterRun: func(ctx context.Context, mods map[string]api.Module) error {
				m := mods[runner.ProgramKey].Memory()
				b, _ := m.Read(0, m.Size())
				mem = bytes.Clone(b)
				return nil
			}}
			if opt != nil {
				res, err := Instrument(mod, *opt)
				if err != nil {
					t.Fatal(err)
				}
				wasmtest.Validate(t, "the instrumented module", res.Module)
				mod = res.Module
				cfg.Modules = counters.Modules(res.Counters)
			}
			if _, err := runner.Run(context.Background(), mod, cfg); err != nil {
				t.Fatal(err)
			}
			return mem, binary.LittleEndian.Uint32(mem[8192:])
		}
		want, sum := view(orig, nil)
		got, gsum := view(orig, &Options{Counters: counters.Options{DenseMax: 1, HashSlots: 1024}})
		size := binary.LittleEndian.Uint32(want[4+16*59:]) // memory.size after the last growth
		if len(got) <= len(want) || sum != gsum || !bytes.Equal(got[:len(want)], want) {
			t.Fatalf("max %d: the program's memory differs (%d bytes, want %d of %d)", max, len(got), len(want), size<<16)
		}
		grew, failed := 0, 0
		for k := range 60 {
			r := int32(binary.LittleEndian.Uint32(want[16*k:]))
			if r == -1 {
				failed++
			} else if k%3 != 0 {
				grew++
			}
			if z := binary.LittleEndian.Uint32(want[16*k+8:]); z != 0 {
				t.Errorf("max %d: a new page was not zero in the original", max)
			}
		}
		if grew == 0 || (max > 0) != (failed > 0) {
			t.Errorf("max %d: %d growths, %d failures", max, grew, failed)
		}
		// And the counts, hashed, equal a counter module's.
		hashed := counters.Options{DenseMax: 1, HashSlots: 1024}
		_, _, fs, _ := runProfiledWith(t, orig, runner.Config{}, Options{Counters: hashed})
		_, _, sfs, _ := runProfiledWith(t, orig, runner.Config{}, Options{Counters: hashed, SeparateCounters: true})
		if ok, diff := (&profile.Profile{Functions: fs}).Equal(&profile.Profile{Functions: sfs}); !ok {
			t.Fatalf("max %d: hashed counts in memory and in a counter module differ: %s", max, diff)
		}
		if n := len(fs[0].Paths); n < 1024 {
			t.Errorf("max %d: %d distinct paths: too few to grow the hash table", max, n)
		}
		t.Logf("max %d: %d growths, %d failures, program memory %d pages, copy's %d", max, grew, failed, len(want)>>16, len(got)>>16)
	}
}

// TestCountersFallBackNear4GiB checks that a module whose memory leaves no
// room for the counters below 4 GiB gets a counter module instead of an
// error (wazero cannot address a 4 GiB memory to its last byte, so the
// real memory stays below 65,536 pages).
func TestCountersFallBackNear4GiB(t *testing.T) {
	m, err := wasm.Decode(wasmtest.GrowModule(10, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, min := range []uint64{1, 65535} {
		m.Memories[0].Min = min
		b := wasmtest.Encode(t, m, wasm.SecMemory)
		res, err := Instrument(b, Options{})
		if err != nil {
			t.Fatalf("min %d pages: %v", min, err)
		}
		wasmtest.Validate(t, "the instrumented module", res.Module)
		if inMemory := res.Counters == nil; inMemory != (min == 1) {
			t.Errorf("min %d pages: counters in the program's memory %v", min, inMemory)
		}
	}
}

// TestBrIfBecomesIf checks the code at a br_if whose label takes no
// values and whose edges carry probes: at a back edge an if that takes
// the branch, with the original br_if gone (a loop's back edge always
// carries a probe, so no br_if may be left that goes to a loop); at a
// forward edge an if too where only the taken edge has probes, else a
// br_if to a block of its own with the taken edge's probes after it (so
// at most the forward exit's and the br_if that carries a value are
// left). The function, a loop with a forward exit,
// an if/else and a br_if that carries a value, must compute what the
// original does, and count one path per iteration.
func TestBrIfBecomesIf(t *testing.T) {
	const n, i, sum = 0, 1, 2
	var a wasm.Asm
	a.Block(wasm.OpBlock).Block(wasm.OpLoop)
	a.Idx(wasm.OpLocalGet, i).Idx(wasm.OpLocalGet, n).Op(wasm.OpI32GeU).Idx(wasm.OpBrIf, 1)
	a.Idx(wasm.OpLocalGet, i).I32(1).Op(wasm.OpI32And).Block(wasm.OpIf)
	a.Idx(wasm.OpLocalGet, sum).Idx(wasm.OpLocalGet, i).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, sum)
	a.Op(wasm.OpElse)
	a.Idx(wasm.OpLocalGet, sum).I32(2).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, sum)
	a.Op(wasm.OpEnd)
	a.Idx(wasm.OpLocalGet, i).I32(1).Op(wasm.OpI32Add).Idx(wasm.OpLocalTee, i)
	a.Idx(wasm.OpLocalGet, n).Op(wasm.OpI32LtS).Idx(wasm.OpBrIf, 0)
	a.Op(wasm.OpEnd).Op(wasm.OpEnd)
	a.BlockT(wasm.OpBlock, 0)
	a.Idx(wasm.OpLocalGet, sum).Idx(wasm.OpLocalGet, sum).I32(20).Op(wasm.OpI32GtS).Idx(wasm.OpBrIf, 0)
	a.Op(wasm.OpDrop).I32(-1)
	a.Op(wasm.OpEnd)
	a.Op(wasm.OpEnd)
	m := &wasm.Module{
		Version:  1,
		Types:    []wasm.FuncType{{Results: []wasm.ValType{wasm.ValI32}}, {Params: []wasm.ValType{wasm.ValI32}, Results: []wasm.ValType{wasm.ValI32}}},
		Funcs:    []uint32{1},
		Memories: []wasm.Limits{{Min: 1}},
		Exports:  []wasm.Export{{Name: "f", Kind: wasm.KindFunc, Index: 0}},
		Code:     []wasm.Code{wasm.NewCode([]wasm.LocalDecl{{Count: 2, Type: wasm.ValI32}}, a.B)},
	}
	orig := wasmtest.Encode(t, m, wasm.SecType, wasm.SecFunction, wasm.SecMemory, wasm.SecExport, wasm.SecCode)
	res, err := Instrument(orig, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wasmtest.Validate(t, "the instrumented module", res.Module)
	im, err := wasm.Decode(res.Module)
	if err != nil {
		t.Fatal(err)
	}
	c := im.Code[0]
	r := wasm.NewReader(c.Body, c.OrigOff, "code")
	r.Seek(int(c.ExprOff))
	var stack []wasm.Op
	brIfs := 0
	for !r.Done() {
		var in wasm.Instr
		if err := r.Next(&in); err != nil {
			t.Fatal(err)
		}
		switch in.Op {
		case wasm.OpBlock, wasm.OpLoop, wasm.OpIf:
			stack = append(stack, in.Op)
		case wasm.OpEnd:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case wasm.OpBrIf:
			brIfs++
			if int(in.A) < len(stack) && stack[len(stack)-1-int(in.A)] == wasm.OpLoop {
				t.Errorf("a br_if to a loop is left at %d", in.Off)
			}
		}
	}
	if brIfs > 2 {
		t.Errorf("%d br_ifs left, want at most 2 (the forward exit's and the one with a value)", brIfs)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	for x := range uint64(12) {
		var got [2]uint64
		var paths uint64
		for k, b := range [][]byte{orig, res.Module} {
			mod, err := rt.InstantiateWithConfig(ctx, b, wazero.NewModuleConfig().WithName(""))
			if err != nil {
				t.Fatal(err)
			}
			out, err := mod.ExportedFunction("f").Call(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			got[k] = out[0]
			if k == 1 {
				counts, err := counters.ReadInstance(map[string]api.Module{"": mod})
				if err != nil {
					t.Fatal(err)
				}
				fs, _, err := res.Functions(counts)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range fs[0].Paths {
					paths += p.Count
				}
			}
			mod.Close(ctx)
		}
		if got[0] != got[1] {
			t.Errorf("f(%d) = %d instrumented, %d originally", x, got[1], got[0])
		}
		if want := max(x, 1); paths != want {
			t.Errorf("f(%d) counted %d paths, want %d", x, paths, want)
		}
	}
}

// TestInlineHashBudget checks which hashed functions probe the hash table
// inline where their counts would call: in hello with every function
// hashed, the functions with the fewest such counts, none with more than
// maxInlineHashCounts, within the budget and not all of them; and that the
// counts equal a counter module's, which always calls.
func TestInlineHashBudget(t *testing.T) {
	orig, err := os.ReadFile(testprogs.GoHello(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg := runner.Config{CacheDir: testprogs.WazeroCacheDir(t)}
	hashed := counters.Options{DenseMax: 1}
	_, _, fs, res := runProfiledWith(t, orig, cfg, Options{Counters: hashed})
	m, err := wasm.Decode(orig)
	if err != nil {
		t.Fatal(err)
	}
	// The code section's payload, within a few bytes a body.
	code := int64(5)
	for _, c := range m.Code {
		code += int64(len(c.Body)) + 5
	}
	budget := inlineHashBudget(code)
	var inlined, called, spent int64
	most, fewest := 0, int(^uint(0)>>1)
	for _, f := range res.Funcs {
		switch {
		case f.hashCalls == 0:
		case f.inlineHash:
			inlined++
			spent += int64(f.hashCalls) * inlineHashBytes
			most = max(most, f.hashCalls)
		default:
			called++
			fewest = min(fewest, f.hashCalls)
		}
	}
	if inlined == 0 || called == 0 {
		t.Fatalf("%d functions probe inline, %d call: want both", inlined, called)
	}
	if spent > budget || most > fewest || most > maxInlineHashCounts {
		t.Fatalf("inline probes take %d bytes of %d, up to %d counts a function, where one of %d counts calls", spent, budget, most, fewest)
	}
	_, _, sfs, _ := runProfiledWith(t, orig, cfg, Options{Counters: hashed, SeparateCounters: true})
	if ok, diff := (&profile.Profile{Functions: fs}).Equal(&profile.Profile{Functions: sfs}); !ok {
		t.Fatalf("inline probes and calls count differently from a counter module: %s", diff)
	}
	t.Logf("%d functions probe inline (%d of %d bytes), %d call", inlined, spent, budget, called)

	// In calc, whose hashed functions all fit the budget, those with
	// more counts than maxInlineHashCounts (printf_core) still call.
	corig, err := os.ReadFile(testprogs.CProgramByName(t, "calc").Wasm)
	if err != nil {
		t.Fatal(err)
	}
	cres, err := Instrument(corig, Options{Counters: hashed})
	if err != nil {
		t.Fatal(err)
	}
	big := 0
	for _, f := range cres.Funcs {
		if f.hashCalls > maxInlineHashCounts {
			big++
			if f.inlineHash {
				t.Errorf("calc: %s probes inline with %d counts", f.Name, f.hashCalls)
			}
		}
	}
	if big == 0 {
		t.Errorf("calc: no hashed function has more than %d counts", maxInlineHashCounts)
	}
}
