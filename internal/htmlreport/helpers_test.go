package htmlreport

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/report"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
	"github.com/pathprof/pathprof/profile"
)

// run is one profiled run of a test program.
type run struct {
	path   string
	module []byte
	prof   *profile.Profile
}

var (
	runsMu sync.Mutex
	runs   = map[string]*run{}
)

// profiled profiles a program once per test process: several tests look
// at the same profile.
func profiled(t *testing.T, key, path string, cfg func(t *testing.T) runner.Config) *run {
	t.Helper()
	runsMu.Lock()
	defer runsMu.Unlock()
	if r := runs[key]; r != nil {
		return r
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := cfg(t)
	c.ProgramName = filepath.Base(path)
	c.CacheDir = testprogs.WazeroCacheDir(t)
	if c.Stdout == nil {
		c.Stdout = &bytes.Buffer{}
	}
	p, err := profiler.Profile(context.Background(), b, profiler.Options{ModulePath: path, Run: c})
	if err != nil {
		t.Fatalf("profile %s: %v", key, err)
	}
	r := &run{path: path, module: b, prof: p}
	runs[key] = r
	return r
}

// calcRun is the C calculator with DWARF, on its committed input.
func calcRun(t *testing.T) *run {
	c := testprogs.CProgramByName(t, "calc")
	return profiled(t, "calc", c.Wasm, func(t *testing.T) runner.Config { return c.Config(t) })
}

// goTestRun is a standard-library package's test binary, run with
// -test.short in its source directory.
func goTestRun(t *testing.T, pkg string) *run {
	path := testprogs.GoStdTest(t, pkg)
	return profiled(t, pkg+".test", path, func(t *testing.T) runner.Config { return testprogs.GoStdTestConfig(t, pkg) })
}

// synthRun is a generated module of n functions, each a loop around an
// if, of which _start calls two in three.
func synthRun(t *testing.T, n int) *run {
	path := filepath.Join(t.TempDir(), "synth"+strconv.Itoa(n)+".wasm")
	if err := os.WriteFile(path, synthModule(n), 0o644); err != nil {
		t.Fatal(err)
	}
	return profiled(t, "synth"+strconv.Itoa(n), path, func(t *testing.T) runner.Config { return runner.Config{} })
}

func name(b []byte, s string) []byte {
	b = wasm.AppendULEB128(b, uint64(len(s)))
	return append(b, s...)
}

// synthModule writes the module by hand, since no test program has tens of
// thousands of functions.
func synthModule(n int) []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")
	// Types: 0 is () -> (), 1 is (i32) -> i32.
	m = wasmtest.Section(m, 1, []byte{2, 0x60, 0, 0, 0x60, 1, 0x7F, 1, 0x7F})
	funcs := wasm.AppendULEB128(nil, uint64(n+1))
	for range n {
		funcs = append(funcs, 1)
	}
	funcs = append(funcs, 0)
	m = wasmtest.Section(m, 3, funcs)
	m = wasmtest.Section(m, 5, []byte{1, 0, 1})
	exp := []byte{2}
	exp = append(name(exp, "_start"), 0)
	exp = wasm.AppendULEB128(exp, uint64(n))
	exp = append(name(exp, "memory"), 2, 0)
	m = wasmtest.Section(m, 7, exp)

	// (local $acc i32)
	// block  loop
	//   local.get 0  i32.eqz  br_if 1
	//   local.get 0  i32.const 1  i32.and
	//   if  acc += 3  else  acc += 1  end
	//   n -= 1  br 0
	// end end  local.get 1
	body := []byte{1, 1, 0x7F,
		0x02, 0x40, 0x03, 0x40,
		0x20, 0, 0x45, 0x0D, 1,
		0x20, 0, 0x41, 1, 0x71,
		0x04, 0x40, 0x20, 1, 0x41, 3, 0x6A, 0x21, 1,
		0x05, 0x20, 1, 0x41, 1, 0x6A, 0x21, 1, 0x0B,
		0x20, 0, 0x41, 1, 0x6B, 0x21, 0,
		0x0C, 0, 0x0B, 0x0B, 0x20, 1, 0x0B}
	code := wasm.AppendULEB128(nil, uint64(n+1))
	for range n {
		code = wasm.AppendULEB128(code, uint64(len(body)))
		code = append(code, body...)
	}
	start := []byte{0}
	for i := range n {
		if i%3 == 2 {
			continue
		}
		start = append(start, 0x41, byte(i%5))
		start = wasm.AppendULEB128(append(start, 0x10), uint64(i))
		start = append(start, 0x1A)
	}
	start = append(start, 0x0B)
	code = wasm.AppendULEB128(code, uint64(len(start)))
	code = append(code, start...)
	m = wasmtest.Section(m, 10, code)

	names := wasm.AppendULEB128(nil, uint64(n+1))
	for i := range n {
		names = name(wasm.AppendULEB128(names, uint64(i)), "synth.f"+strconv.Itoa(i))
	}
	names = name(wasm.AppendULEB128(names, uint64(n)), "_start")
	sub := wasm.AppendULEB128([]byte{1}, uint64(len(names)))
	m = wasmtest.Section(m, 0, append(name(nil, "name"), append(sub, names...)...))
	return m
}

// built is a page built from a run, with its data decoded back for the
// tests to compare with what the browser shows.
type built struct {
	r       *report.Report
	pg      *page
	file    string
	size    int
	details []decoded
}

type decoded struct {
	Off       int               `json:"off"`
	Blocks    []uint64          `json:"b"` // flat: start, end, instructions, entries
	Edges     []uint64          `json:"e"` // flat: from, to, kind, back, crossings
	RawP      []json.RawMessage `json:"p"`
	Lines     [][]int           `json:"l"`
	Instrs    string            `json:"i"`
	Offs      []uint32          `json:"io"`
	Cuts      []int             `json:"cuts"`
	Unmatched int               `json:"unmatched"`
	Error     string            `json:"err"`
}

// path is one decoded path of a function: id, count, kind, nodes, label.
type dpath struct {
	id, count string
	kind      int
	nodes     []int
	label     string
}

func (d *decoded) paths(t *testing.T) []dpath {
	var out []dpath
	for _, raw := range d.RawP {
		var p [5]json.RawMessage
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		var dp dpath
		dp.id = string(bytes.Trim(p[0], `"`))
		dp.count = string(bytes.Trim(p[1], `"`))
		json.Unmarshal(p[2], &dp.kind)
		json.Unmarshal(p[3], &dp.nodes)
		json.Unmarshal(p[4], &dp.label)
		out = append(out, dp)
	}
	return out
}

func buildPage(t *testing.T, rn *run, opt Options) *built {
	t.Helper()
	r, err := report.Build(rn.prof, report.Options{Top: DefaultTop, Module: rn.module, ModulePath: rn.path})
	if err != nil {
		t.Fatal(err)
	}
	if opt.Module == nil {
		opt.Module, opt.ModulePath = rn.module, rn.path
	}
	pg, err := build(r, opt)
	if err != nil {
		t.Fatal(err)
	}
	b := &built{r: r, pg: pg, file: filepath.Join(t.TempDir(), "report.html")}
	var buf bytes.Buffer
	if err := pg.write(&buf); err != nil {
		t.Fatal(err)
	}
	b.size = buf.Len()
	if err := os.WriteFile(b.file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b.details = make([]decoded, len(r.Functions))
	for i := range r.Functions {
		if err := json.Unmarshal(pg.details[i], &b.details[i]); err != nil {
			t.Fatalf("function %s: %v", r.Functions[i].Name, err)
		}
	}
	return b
}

// row finds a function's row by name.
func (b *built) row(t *testing.T, fn string) int {
	t.Helper()
	for i, f := range b.r.Functions {
		if f.Name == fn {
			return i
		}
	}
	t.Fatalf("no function %s", fn)
	return -1
}
