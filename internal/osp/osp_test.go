// Tests of sampling runs end to end: copies that validate and run as the
// original, determinism, accuracy, traps, interruptions, the report and the
// recorder's memory.

package osp

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/tracer"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
)

// TestInstrumentedModulesValidate checks the instrumented C programs and
// Go program, recorder and all, with wasm-validate.
func TestInstrumentedModulesValidate(t *testing.T) {
	if _, err := exec.LookPath("wasm-validate"); err != nil {
		t.Skip("wasm-validate is not installed")
	}
	for _, p := range append(benchPrograms(t, false), program{Name: "hello", Path: testprogs.GoHello(t)}) {
		wasmtest.Validate(t, p.Name, instrumented(t, p).Wasm)
	}
}

// TestProgramsRunUnchanged runs every C program and the Go program
// sampled: each prints and exits as it should, the hot list keeps within
// its bound, and the block entries counted through the skips are exact.
// On the smaller C programs the traced run counts the same block entries,
// and so does the independent tracer of package tracer.
func TestProgramsRunUnchanged(t *testing.T) {
	ctx := context.Background()
	progs := append(benchPrograms(t, false), program{Name: "hello", Path: testprogs.GoHello(t), Want: testprogs.GoHelloStableOutput(t)})
	for i, p := range progs {
		t.Run(p.Name, func(t *testing.T) {
			orig, err := os.ReadFile(p.Path)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			wres, err := runner.Run(ctx, orig, p.Config(t, &want))
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != "hello" && want.String() != p.Want {
				t.Fatalf("the original printed %q", want.String())
			}
			var got bytes.Buffer
			// Every other program with concise samples: both kinds'
			// profiles hold their arithmetic.
			opt := Options{Memory: 32 << 10, Seed: 3, Concise: i%2 == 1}
			prof, res, err := Run(ctx, orig, opt, p.Config(t, &got))
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() || res.ExitCode != wres.ExitCode {
				t.Fatalf("sampled: exit %d, want %d; output differs: %v", res.ExitCode, wres.ExitCode, got.String() != want.String())
			}
			if !prof.Run.Complete || prof.Run.ExitCode != wres.ExitCode {
				t.Errorf("profile facts: %+v", prof.Run)
			}
			if prof.Memory.HotListBytes > opt.Memory {
				t.Errorf("the hot list took %d bytes, bound %d", prof.Memory.HotListBytes, opt.Memory)
			}
			checkProfile(t, prof)
			if !slices.Contains([]string{"records", "grid", "wordfreq"}, p.Name) {
				return
			}
			var traced bytes.Buffer
			ex, _, tres, err := Count(ctx, orig, DefaultLengths, p.Config(t, &traced))
			if err != nil {
				t.Fatal(err)
			}
			if traced.String() != want.String() || tres.ExitCode != wres.ExitCode {
				t.Fatal("the traced run printed or exited differently")
			}
			if ex.Blocks != prof.Run.BlockEntries {
				t.Errorf("traced run: %d block entries, sampled run: %d", ex.Blocks, prof.Run.BlockEntries)
			}
			tr, _, err := tracer.Run(ctx, orig, p.Config(t, &bytes.Buffer{}))
			if err != nil {
				t.Fatal(err)
			}
			if tr.Events != ex.Blocks {
				t.Errorf("package tracer saw %d block entries, the traced run %d", tr.Events, ex.Blocks)
			}
		})
	}
}

// checkProfile checks a profile's internal arithmetic.
func checkProfile(t *testing.T, p *Profile) {
	t.Helper()
	var pairs uint64
	m := p.Sampling.SampleBlocks
	if m != SampleBlocks(p.Sampling.Lengths) {
		t.Errorf("samples of %d blocks for lengths %v", m, p.Sampling.Lengths)
	}
	for i, lf := range p.Sampling.ByLength {
		pairs += uint64(lf.Pairs)
		if want := p.Sampling.Samples * uint64(Windows(m, lf.Length)); lf.Windows != want {
			t.Errorf("length %d: %d windows, but %d samples of %d blocks", lf.Length, lf.Windows, p.Sampling.Samples, m)
		}
		if lf.Windows > 0 && math.Abs(lf.Scale-float64(p.Run.BlockEntries)/float64(lf.Windows)) > 1e-6*lf.Scale {
			t.Errorf("length %d: scale %v", lf.Length, lf.Scale)
		}
		if i > 0 && lf.Tau < 1 {
			t.Errorf("length %d: τ %v", lf.Length, lf.Tau)
		}
	}
	if pairs != uint64(p.Memory.Pairs) || len(p.Subpaths) != p.Memory.Pairs {
		t.Errorf("pairs %d/%d/%d", pairs, p.Memory.Pairs, len(p.Subpaths))
	}
	// Every sample records its blocks, and every block entry between
	// samples is one of the skips: one sample per MeanSkip entries.
	if p.Run.BlockEntries > 100*uint64(p.Sampling.MeanSkip) {
		expect := float64(p.Run.BlockEntries) / (p.Sampling.MeanSkip + float64(p.Sampling.SampledBlocks)/float64(p.Sampling.Samples))
		if d := math.Abs(float64(p.Sampling.Samples) - expect); d > 5*math.Sqrt(expect) {
			t.Errorf("%d samples in %d block entries, expected about %.0f", p.Sampling.Samples, p.Run.BlockEntries, expect)
		}
	}
	for i, s := range p.Subpaths {
		if i > 0 && s.Estimate > p.Subpaths[i-1].Estimate {
			t.Fatalf("subpaths not sorted by estimate at %d", i)
		}
		lf := p.Sampling.ByLength[slices.IndexFunc(p.Sampling.ByLength, func(l LengthFacts) bool { return l.Length == s.Length })]
		if lf.Counting == p.Sampling.Concise {
			t.Fatalf("length %d: counting %v in a profile with concise %v", lf.Length, lf.Counting, p.Sampling.Concise)
		}
		// A counting sample's count misses the τ − 1 offers before the
		// subpath entered, on average, and their variance τ(τ − 1);
		// its squares cover the counted offers.
		c, sq, tau := float64(s.Count), float64(s.Squares), lf.Tau
		est, variance := c*tau, sq*tau*tau
		if lf.Counting {
			est, variance = c+tau-1, sq*(c+tau-1)/c+tau*(tau-1)
		}
		if want := est * lf.Scale; math.Abs(s.Estimate-want) > 1e-9*want || len(s.Blocks) != s.Length {
			t.Fatalf("subpath %d: estimate %v, want %v; %d blocks for length %d", i, s.Estimate, want, len(s.Blocks), s.Length)
		}
		if want := 1.96 * math.Sqrt(variance) * lf.Scale; s.Squares < s.Count || s.Squares > s.Count*s.Count ||
			math.Abs(s.Error-want) > 1e-9*want {
			t.Fatalf("subpath %d: count %d, squares %d, error %v (want %v)", i, s.Count, s.Squares, s.Error, want)
		}
	}
}

// TestDeterministic checks that a seed fixes the profile, and that
// another seed samples differently.
func TestDeterministic(t *testing.T) {
	ctx := context.Background()
	p := benchPrograms(t, false)[0] // calc
	orig, ins := readInstrumented(t, p)
	prog, err := Compile(ctx, ins, ModeSample, p.Config(t, &bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close(ctx)
	run := func(seed uint64) []byte {
		prof, _, err := prog.Sample(ctx, Options{Seed: seed, Memory: 16 << 10}, p.Config(t, &bytes.Buffer{}))
		if err != nil {
			t.Fatal(err)
		}
		prof.Run.Seconds = 0
		b, err := json.Marshal(prof)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b, c := run(42), run(42), run(43)
	if !bytes.Equal(a, b) {
		t.Error("two runs with seed 42 gave different profiles")
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 42 and 43 gave the same profile")
	}
	// The same profile comes from a separately instrumented and compiled
	// module too.
	prof, _, err := Run(ctx, orig, Options{Seed: 42, Memory: 16 << 10}, p.Config(t, &bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	prof.Run.Seconds = 0
	if d, _ := json.Marshal(prof); !bytes.Equal(a, d) {
		t.Error("Run gave another profile than Program.Sample with the same seed")
	}
}

// TestAccuracyCalc scores calc's profile: the short subpaths of this
// loop-heavy program must be found and counted well.
func TestAccuracyCalc(t *testing.T) {
	ctx := context.Background()
	p := benchPrograms(t, false)[0]
	if p.Name != "calc" {
		t.Fatalf("the first C program is %s, not calc", p.Name)
	}
	orig, err := os.ReadFile(p.Path)
	if err != nil {
		t.Fatal(err)
	}
	prof, _, err := Run(ctx, orig, Options{}, p.Config(t, &bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	ex, _, _, err := Count(ctx, orig, prof.Sampling.Lengths, p.Config(t, &bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ScoreProfile(ex, prof, []int{10})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Lengths[:3] {
		if a := r.At[0]; a.Recall < 0.9 || a.MedianError > 0.1 {
			t.Errorf("length %d: recall@10 %.2f, median error %.3f", r.Length, a.Recall, a.MedianError)
		}
	}
}

// trapModule is a command whose _start loops n times and then traps.
func trapModule(n int32) []byte {
	var a wasm.Asm
	a.Block(wasm.OpLoop)
	a.Idx(wasm.OpLocalGet, 0).I32(1).Op(wasm.OpI32Add).Idx(0x22, 0) // local.tee
	a.I32(n).Op(wasm.OpI32LtU).Idx(wasm.OpBrIf, 0)
	a.Op(wasm.OpEnd)
	a.Op(wasm.OpUnreachable).Op(wasm.OpEnd)
	m := &wasm.Module{
		Version: 1,
		Types:   []wasm.FuncType{{}},
		Funcs:   []uint32{0},
		Exports: []wasm.Export{{Name: "_start", Kind: wasm.KindFunc}},
		Code:    []wasm.Code{{Body: append([]byte{1, 1, wasm.I32}, a.B...), ExprOff: 3}},
	}
	return encodeModule(m)
}

// encodeModule encodes a module made of types, functions, exports and code.
func encodeModule(m *wasm.Module) []byte {
	for _, id := range []byte{wasm.SecType, wasm.SecFunction, wasm.SecExport, wasm.SecCode} {
		m.Touch(id)
	}
	b, err := m.Encode()
	if err != nil {
		panic(err)
	}
	return b
}

// TestTrap checks that a run that traps still gives its samples, marked
// incomplete, with the block entries counted up to the trap.
func TestTrap(t *testing.T) {
	ctx := context.Background()
	mod := trapModule(100000)
	prof, res, err := Run(ctx, mod, Options{MeanSkip: 50, Lengths: []int{2, 4}}, runner.Config{})
	if err == nil || res.Trap == nil || prof == nil {
		t.Fatalf("error %v, trap %v, profile %v", err, res.Trap, prof != nil)
	}
	if prof.Run.Complete || prof.Run.Error == "" {
		t.Errorf("a trapped run's profile: %+v", prof.Run)
	}
	ex, _, _, err := Count(ctx, mod, []int{2, 4}, runner.Config{})
	if err == nil {
		t.Fatal("the traced run did not trap")
	}
	// Block entries: the loop body 100000 times, plus the blocks around it.
	if ex.Blocks != prof.Run.BlockEntries || ex.Blocks < 100000 || ex.Blocks > 100003 {
		t.Errorf("block entries: traced %d, sampled %d", ex.Blocks, prof.Run.BlockEntries)
	}
	if prof.Sampling.Samples < 1000 || len(prof.Subpaths) == 0 {
		t.Errorf("%d samples, %d subpaths", prof.Sampling.Samples, len(prof.Subpaths))
	}
	// A loop of one block: its subpaths are that block repeated, and
	// every window of the run is one of them but those at the ends.
	top := prof.Subpaths[0]
	if top.Blocks[0] != top.Blocks[1] {
		t.Errorf("the hottest subpath is %+v", top.Blocks)
	}
	checkProfile(t, prof)
}

// TestSamplingFails checks that a run whose samples cannot be turned into
// blocks gives an error and no profile, though the failure reaches the
// program as a trap: here every function is made to regenerate its
// paths without their blocks.
func TestSamplingFails(t *testing.T) {
	ctx := context.Background()
	calc := testprogs.CRuns(t)[0]
	if calc.Name != "calc" {
		t.Fatalf("the first C program is %s", calc.Name)
	}
	ins, prog := compiled(t, calc, ModeSample)
	for _, pf := range ins.funcs {
		if pf != nil {
			pf.block = make([]int32, len(pf.block))
			for i := range pf.block {
				pf.block[i] = -1
			}
		}
	}
	prof, _, err := prog.Sample(ctx, Options{}, calc.Config(t, &bytes.Buffer{}))
	if err == nil || prof != nil || !strings.Contains(err.Error(), "sampling failed") || !strings.Contains(err.Error(), "regenerated") {
		t.Fatalf("error %v, profile %v", err, prof != nil)
	}
}

// TestInterrupted checks that runs stopped at arbitrary points, inside
// the recorder among them, still count their block entries: with samples
// of two blocks after skips of one, a loop of one block calls $tick at
// every other path end, and a stop there (at its loop) once counted the
// next skip as 2^30 entries.
func TestInterrupted(t *testing.T) {
	mod := trapModule(1 << 30)
	p, err := Compile(context.Background(), mustInstrument(t, mod), ModeSample, runner.Config{Interruptible: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	for i := range 40 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(2+i%20)*time.Millisecond)
		prof, _, err := p.Sample(ctx, Options{MeanSkip: 1, Lengths: []int{2}}, runner.Config{})
		cancel()
		if err == nil || prof == nil || prof.Run.Complete {
			t.Fatalf("run %d: error %v, profile %v", i, err, prof != nil)
		}
		// Every block entry is recorded but for a path cut short, or
		// the rest of a path beyond a sample (a block here).
		if b, rec := prof.Run.BlockEntries, prof.Sampling.SampledBlocks; b < rec || b > rec+2 {
			t.Fatalf("run %d: %d block entries, %d of them recorded", i, b, rec)
		}
	}
}

// mustInstrument instruments mod or fails the test.
func mustInstrument(t *testing.T, mod []byte) *Instrumented {
	t.Helper()
	ins, err := Instrument(mod)
	if err != nil {
		t.Fatal(err)
	}
	return ins
}

// TestSkips checks the skip distribution: geometric with the mean asked for.
func TestSkips(t *testing.T) {
	for _, mean := range []float64{1, 7, 1000} {
		s, err := newSampler(Options{Memory: DefaultMemory, Lengths: DefaultLengths, MeanSkip: mean, Seed: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		const n = 200000
		var sum float64
		ones := 0
		for range n {
			k := s.skip()
			if k < 1 {
				t.Fatalf("skip %d", k)
			}
			sum += float64(k)
			if k == 1 {
				ones++
			}
		}
		got := sum / n
		sd := math.Sqrt(mean * (mean - 1))
		if math.Abs(got-mean) > 5*sd/math.Sqrt(n)+1e-9 {
			t.Errorf("mean skip %v: sample mean %v", mean, got)
		}
		// P(skip = 1) = 1/mean: memoryless.
		if p := float64(ones) / n; math.Abs(p-1/mean) > 5*math.Sqrt(1/mean/n)+1e-9 {
			t.Errorf("mean skip %v: P(1) = %v, want %v", mean, p, 1/mean)
		}
	}
}

// TestReport checks that the report names blocks by source line where
// the module has DWARF (the C programs) and that a written profile reads
// back equal.
func TestReport(t *testing.T) {
	ctx := context.Background()
	p := benchPrograms(t, false)[6] // grid
	orig, err := os.ReadFile(p.Path)
	if err != nil {
		t.Fatal(err)
	}
	prof, _, err := Run(ctx, orig, Options{MeanSkip: 100}, p.Config(t, &bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	prof.Module.Path = p.Path
	file := filepath.Join(t.TempDir(), "osp.json")
	if err := WriteFile(file, prof); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(prof)
	b, _ := json.Marshal(back)
	if !bytes.Equal(a, b) {
		t.Error("the profile read back differs")
	}
	loc, err := NewLocator(back, orig)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := WriteReport(&out, back, loc, 2); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "grid.c:") || !strings.Contains(out.String(), "length 64:") {
		t.Errorf("report:\n%s", out.String())
	}
	// No two subpaths read alike: blocks are named by line and column,
	// and blocks that would read alike by their offsets too.
	seen := map[string][]int{}
	offsets := 0
	for _, sp := range back.Subpaths {
		line := blockLine(sp.Blocks, loc, "", math.MaxInt)
		if other, ok := seen[line]; ok && !slices.Equal(other, sp.Offsets()) {
			t.Errorf("two subpaths read %s", line)
		}
		seen[line] = sp.Offsets()
		offsets += strings.Count(line, "(+0x")
	}
	if len(seen) < 50 || offsets == 0 {
		t.Errorf("%d subpaths, %d blocks with offsets: the test checks too little", len(seen), offsets)
	}
	if _, err := NewLocator(back, trapModule(1)); err == nil {
		t.Error("a locator for another module was made")
	}
	// Without DWARF, blocks are named by function (here by its export)
	// and offset.
	mod := trapModule(10)
	tp, _, _ := Run(ctx, mod, Options{MeanSkip: 1, Lengths: []int{2}}, runner.Config{})
	loc, err = NewLocator(tp, mod)
	if err != nil {
		t.Fatal(err)
	}
	if at := loc.At(tp.Subpaths[0].Blocks[0]); !strings.HasPrefix(at, "_start+0x") {
		t.Errorf("a block of a module without DWARF is at %q", at)
	}
	for _, bad := range []string{`{"format":"pathprof","version":1}`, `{"format":"pathprof-osp","version":5}`, `{"format":"pathprof-osp","version":0}`,
		`{"format":"pathprof-osp","version":2,"subpaths":[{"length":2,"blocks":[{"offset":1}]}]}`} {
		f := filepath.Join(t.TempDir(), "bad.json")
		os.WriteFile(f, []byte(bad), 0o644)
		if _, err := ReadFile(f); err == nil {
			t.Errorf("%s was read", bad)
		}
	}
	// Version 1: one subpath of each length per sample, so the squares
	// are the count.
	f := filepath.Join(t.TempDir(), "v1.json")
	os.WriteFile(f, []byte(`{"format":"pathprof-osp","version":1,"subpaths":[{"length":1,"count":7,"blocks":[{"offset":1}]}]}`), 0o644)
	if p, err := ReadFile(f); err != nil || p.Subpaths[0].Squares != 7 {
		t.Errorf("a version 1 profile: %v", err)
	}
	// Version 2: concise samples, which its lengths say by lacking
	// "counting".
	f = filepath.Join(t.TempDir(), "v2.json")
	os.WriteFile(f, []byte(`{"format":"pathprof-osp","version":2,"sampling":{"by_length":[{"length":2,"tau":3}]},`+
		`"subpaths":[{"length":2,"count":7,"squares":9,"blocks":[{"offset":1},{"offset":2}]}]}`), 0o644)
	if p, err := ReadFile(f); err != nil || p.Sampling.ByLength[0].Counting || p.Subpaths[0].Squares != 9 {
		t.Errorf("a version 2 profile: %v", err)
	}
}

// TestRecorderKeepsTheProgramsView checks that the recorder's area in the
// program's memory is invisible to the program while samples are taken
// (many, inline and through $tick) across growths of its memory that move
// the area: the program's memory holds the same bytes at the end as in
// the original run (what memory.grow and memory.size answered, and that
// new pages were zero, among them), growth beyond a declared maximum
// fails alike, and the sampled run makes as many block entries as the
// traced one.
func TestRecorderKeepsTheProgramsView(t *testing.T) {
	ctx := context.Background()
	for _, max := range []uint64{0, 12} {
		orig := wasmtest.GrowModule(3000, max)
		snapshot := func(dst *[]byte) runner.Config {
			return runner.Config{AfterRun: func(ctx context.Context, mods map[string]api.Module) error {
				m := mods[runner.ProgramKey].Memory()
				b, _ := m.Read(0, m.Size())
				*dst = bytes.Clone(b)
				return nil
			}}
		}
		var want, got []byte
		if _, err := runner.Run(ctx, orig, snapshot(&want)); err != nil {
			t.Fatal(err)
		}
		lengths := []int{2, 8}
		prof, _, err := Run(ctx, orig, Options{MeanSkip: 40, Lengths: lengths}, snapshot(&got))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) <= len(want) || !bytes.Equal(got[:len(want)], want) {
			t.Fatalf("max %d: the program's memory differs (%d bytes, want %d)", max, len(got), len(want))
		}
		ex, _, _, err := Count(ctx, orig, lengths, runner.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if ex.Blocks != prof.Run.BlockEntries || prof.Sampling.Samples < 200 {
			t.Errorf("max %d: %d block entries sampled with %d samples, %d traced", max, prof.Run.BlockEntries, prof.Sampling.Samples, ex.Blocks)
		}
		t.Logf("max %d: %d samples, %d block entries, program memory %d pages, instrumented %d", max, prof.Sampling.Samples, ex.Blocks, len(want)>>16, len(got)>>16)
	}
}

// TestRecorderNeedsItsOwnMemory checks that a module that imports its
// memory is refused, saying why.
func TestRecorderNeedsItsOwnMemory(t *testing.T) {
	m, err := wasm.Decode(wasmtest.GrowModule(10, 0))
	if err != nil {
		t.Fatal(err)
	}
	m.Imports = append(m.Imports, wasm.Import{Module: "env", Name: "memory", Kind: wasm.KindMemory, Memory: m.Memories[0]})
	m.NumImportedMemories, m.Memories = 1, nil
	b := wasmtest.Encode(t, m, wasm.SecImport, wasm.SecMemory)
	if _, err := Instrument(b); err == nil || !strings.Contains(err.Error(), "imports its memory") {
		t.Errorf("got %v, want an error saying the module imports its memory", err)
	}
}

// TestHeld checks how arms share the globals that hold values across
// $tick: the k-th value of a type at an arm (operands on the stack first,
// then kept locals) goes to the k-th global of that type, new globals
// are added only for what no arm needed before, operands are stored from
// the top of the stack down, and each global starts at zero of its type.
func TestHeld(t *testing.T) {
	h := &held{first: 10}
	var a wasm.Asm
	i32, i64, f64 := wasm.ValI32, wasm.ValI64, wasm.ValF64
	if kept, ops := h.hold(&a, nil, nil); kept != nil || ops != nil || len(a.B) != 0 {
		t.Fatalf("nothing held: globals %v %v, code %x", kept, ops, a.B)
	}
	for _, c := range []struct {
		keep     []instrument.Local
		operands []wasm.ValType
		want     []uint32 // the kept locals' globals
		wantOps  []uint32
	}{
		{[]instrument.Local{{Index: 7, Type: i64}, {Index: 1, Type: i32}, {Index: 2, Type: i32}}, nil, []uint32{10, 11, 12}, []uint32{}},
		{[]instrument.Local{{Index: 9, Type: i64}, {Index: 3, Type: f64}, {Index: 0, Type: i32}}, nil, []uint32{10, 13, 11}, []uint32{}},
		{[]instrument.Local{{Index: 4, Type: i32}, {Index: 5, Type: i32}, {Index: 6, Type: i32}}, nil, []uint32{11, 12, 14}, []uint32{}},
		{nil, []wasm.ValType{i32, f64, i32, i64}, []uint32{}, []uint32{11, 13, 12, 10}},
		{[]instrument.Local{{Index: 8, Type: i32}}, []wasm.ValType{i32}, []uint32{12}, []uint32{11}},
	} {
		a.B = a.B[:0]
		kept, ops := h.hold(&a, c.keep, c.operands)
		if !slices.Equal(kept, c.want) || !slices.Equal(ops, c.wantOps) {
			t.Errorf("keep %v, operands %v: globals %v and %v, want %v and %v", c.keep, c.operands, kept, ops, c.want, c.wantOps)
		}
		var want wasm.Asm
		for i := len(c.wantOps) - 1; i >= 0; i-- {
			want.Idx(wasm.OpGlobalSet, c.wantOps[i])
		}
		for i, l := range c.keep {
			want.Idx(wasm.OpLocalGet, l.Index).Idx(wasm.OpGlobalSet, c.want[i])
		}
		if !bytes.Equal(a.B, want.B) {
			t.Errorf("keep %v, operands %v: code %x, want %x", c.keep, c.operands, a.B, want.B)
		}
	}
	if want := []wasm.ValType{i64, i32, i32, f64, i32}; !slices.Equal(h.types, want) {
		t.Fatalf("types %v, want %v", h.types, want)
	}
	gs := h.globals()
	m := &wasm.Module{Version: 1, Globals: gs}
	b := wasmtest.Encode(t, m, wasm.SecGlobal)
	back, err := wasm.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range back.Globals {
		if g.Type != h.types[i] || !g.Mutable || len(g.Init) < 2 || g.Init[len(g.Init)-1] != byte(wasm.OpEnd) {
			t.Errorf("global %d: %+v", i, g)
		}
		for _, x := range g.Init[1 : len(g.Init)-1] {
			if x != 0 {
				t.Errorf("global %d starts at %x, not zero", i, g.Init)
			}
		}
	}
}
