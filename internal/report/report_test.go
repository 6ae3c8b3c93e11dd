package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasmtest"
	"github.com/pathprof/pathprof/profile"
)

// calcProfile is a profile of calc.wasm built by hand from real block
// offsets: fn_gcd with three paths (one through its loop), parse_cmp with
// one, accept profiled but not run, and a skipped function.
func calcProfile(t *testing.T, c *prog) *profile.Profile {
	t.Helper()
	p := c.header()
	gcd, _ := c.fn(t, "fn_gcd")
	gb := c.blocks(t, "fn_gcd")
	cmpIdx, _ := c.fn(t, "parse_cmp")
	cb := c.blocks(t, "parse_cmp")
	acc, _ := c.fn(t, "accept")
	fib, _ := c.fn(t, "fn_fib")
	p.Functions = []profile.Function{
		{Index: acc, Name: "accept", Status: "profiled", PossiblePaths: "12", Paths: []profile.Path{}},
		{Index: gcd, Status: "profiled", PossiblePaths: "9", Paths: []profile.Path{
			{ID: 0, Count: 3, Kind: profile.KindEntryExit, Blocks: gb[:2]},
			{ID: 4, Count: 700, Kind: profile.KindBackBack, Blocks: gb[2:5]},
			{ID: 5, Count: 40, Kind: profile.KindEntryBack, Blocks: gb},
		}},
		{Index: cmpIdx, Name: "parse_cmp", Status: "profiled", PossiblePaths: "400", Paths: []profile.Path{
			{ID: 17, Count: 100, Kind: profile.KindEntryExit, Blocks: cb[:1]},
		}},
		{Index: fib, Name: "fn_fib", Status: "skipped: too many paths", PossiblePaths: "0", Paths: []profile.Path{}},
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

func build(t *testing.T, p *profile.Profile, opt Options) *Report {
	t.Helper()
	r, err := Build(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func text(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// isAt reports whether at names calc.c's line, with a column or without,
// and the block's offset in the function (only where two blocks of a
// function would show alike, which the text test does not know).
func isAt(at string, line, funcOff int) bool {
	rest, ok := strings.CutPrefix(at, fmt.Sprintf("calc.c:%d", line))
	rest = strings.TrimSuffix(rest, fmt.Sprintf("(+0x%x)", funcOff))
	return ok && regexp.MustCompile(`^(:[1-9][0-9]*)?$`).MatchString(rest)
}

func TestCalcText(t *testing.T) {
	c := loadProg(t, "calc")
	p := calcProfile(t, c)
	r := build(t, p, Options{Module: c.bytes})
	out := text(t, r)
	t.Log("\n" + out)

	gcdLine := c.braceLine(t, "fn_gcd")
	for _, want := range []string{
		"module    calc.wasm\n",
		"blocks    source lines and columns from DWARF, else function+offset\n",
		"strategy  sbl, 1 copy\n",
		"result    complete, exit code 0\n",
		// The runs table.
		"copy  probe hits  seconds  exit\n   0        4242    0.125     0\n",
		// Coverage: executions 3+700+40, calls 3+40, 3 of 9 paths.
		"executions  calls  paths  possible  coverage  function\n" +
			"       743     43      3         9     33.3%  fn_gcd\n" +
			"       100    100      1       400      0.2%  parse_cmp\n" +
			"       843    143      4       421      1.0%  total\n" +
			"3 functions profiled: 2 ran, 1 did not (not listed)\n" +
			"1 function not profiled, so not counted:\n  fn_fib  skipped: too many paths\n",
		// The gcd loop's back-back path has the highest count.
		"hottest paths by count\nrank  count  blocks  count×blocks        kind  path  function\n   1    700       3          2100   back-back     4  fn_gcd\n      calc.c:",
		"   2    100       1           100  entry-exit    17  parse_cmp\n      calc.c:",
		fmt.Sprintf("  fn_gcd\n      calc.c:%d,", gcdLine),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	if strings.Contains(out, "INCOMPLETE") {
		t.Error("a complete profile marked incomplete")
	}
	// Count × blocks puts the loop path first, then the long entry-back
	// path (40 × len), then the entry-exit path of parse_cmp (100 × 1) or
	// fn_gcd's first one.
	byLen := out[strings.Index(out, "hottest paths by count × blocks"):]
	n := len(c.blocks(t, "fn_gcd"))
	want := fmt.Sprintf("   2     40  %6d  %12d  entry-back     5  fn_gcd\n", n, 40*n)
	if !strings.Contains(byLen, want) {
		t.Errorf("by-length list lacks %q:\n%s", want, byLen)
	}

	// Every fn_gcd block is in calc.c within fn_gcd's lines.
	for _, f := range r.Functions {
		if f.Name != "fn_gcd" {
			continue
		}
		for _, p := range f.Paths {
			for _, b := range p.Blocks {
				if b.File != "calc.c" || b.Line < gcdLine || b.Line > gcdLine+12 || !isAt(b.At, b.Line, b.FuncOffset) {
					t.Errorf("fn_gcd block %+v not in fn_gcd's source", b)
				}
				if b.FuncOffset <= 0 || b.Instr == "" {
					t.Errorf("fn_gcd block %+v lacks its offset or instruction", b)
				}
			}
		}
		// Paths go by count, so path 0 (from the entry) is last.
		if p := f.Paths[2]; p.ID != 0 || p.Blocks[0].Line != gcdLine {
			t.Errorf("fn_gcd path %d starts at line %d, want path 0 at %d", p.ID, p.Blocks[0].Line, gcdLine)
		}
	}
}

// TestCalcJSON checks the JSON report's shape and contents.
func TestCalcJSON(t *testing.T) {
	c := loadProg(t, "calc")
	p := calcProfile(t, c)
	r := build(t, p, Options{Module: c.bytes, Top: 2})
	data, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Functions []struct {
			Name          string  `json:"name"`
			Index         uint32  `json:"index"`
			Executions    uint64  `json:"executions"`
			PossiblePaths string  `json:"possible_paths"`
			Coverage      float64 `json:"coverage"`
			Paths         []struct {
				ID     uint64 `json:"id"`
				Count  uint64 `json:"count"`
				Kind   string `json:"kind"`
				Blocks []struct {
					Offset     int    `json:"offset"`
					FuncOffset int    `json:"func_offset"`
					File       string `json:"file"`
					Line       int    `json:"line"`
					Instr      string `json:"instr"`
					At         string `json:"at"`
				} `json:"blocks"`
			} `json:"paths"`
		} `json:"functions"`
		Totals struct {
			Executions    uint64 `json:"executions"`
			Paths         int    `json:"paths"`
			PossiblePaths string `json:"possible_paths"`
		} `json:"totals"`
		Hottest []struct {
			Rank     int    `json:"rank"`
			Function string `json:"function"`
			ID       uint64 `json:"id"`
			Count    uint64 `json:"count"`
			Weight   uint64 `json:"weight"`
		} `json:"hottest"`
		Run struct {
			Source   string `json:"source"`
			Complete bool   `json:"complete"`
		} `json:"run"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if len(doc.Functions) != 4 {
		t.Fatalf("%d functions, want 4", len(doc.Functions))
	}
	names := []string{}
	for _, f := range doc.Functions {
		names = append(names, f.Name)
	}
	// Most executed first; fn_fib (skipped) and accept (not run) tie at 0
	// and go by index.
	if got := strings.Join(names, " "); got != "fn_gcd parse_cmp accept fn_fib" && got != "fn_gcd parse_cmp fn_fib accept" {
		t.Errorf("function order %s", got)
	}
	g := doc.Functions[0]
	gcd, code := c.fn(t, "fn_gcd")
	if g.Index != gcd || g.Executions != 743 || g.PossiblePaths != "9" || g.Coverage < 33.33 || g.Coverage > 33.34 {
		t.Errorf("fn_gcd: %+v", g)
	}
	if len(g.Paths) != 3 || g.Paths[0].ID != 4 || g.Paths[0].Count != 700 || g.Paths[0].Kind != "back-back" {
		t.Fatalf("fn_gcd paths: %+v", g.Paths)
	}
	gb := c.blocks(t, "fn_gcd")
	for i, b := range g.Paths[0].Blocks {
		if b.Offset != gb[2+i] || b.FuncOffset != gb[2+i]-code.OrigOff || b.File != "calc.c" || b.Line == 0 ||
			!isAt(b.At, b.Line, b.FuncOffset) || b.Instr == "" {
			t.Errorf("block %d: %+v", i, b)
		}
	}
	entry := g.Paths[2].Blocks[0] // path 0, the entry block
	if entry.Offset != code.OrigOff+int(code.ExprOff) || entry.Line != c.braceLine(t, "fn_gcd") {
		t.Errorf("entry block %+v", entry)
	}
	if doc.Totals.Executions != 843 || doc.Totals.Paths != 4 || doc.Totals.PossiblePaths != "421" {
		t.Errorf("totals %+v", doc.Totals)
	}
	if len(doc.Hottest) != 2 || doc.Hottest[0].Count != 700 || doc.Hottest[0].Weight != 2100 || doc.Hottest[1].Function != "parse_cmp" || doc.Hottest[1].Rank != 2 {
		t.Errorf("hottest %+v", doc.Hottest)
	}
	if doc.Run.Source != "dwarf" || !doc.Run.Complete {
		t.Errorf("run %+v", doc.Run)
	}
}

// TestNoModule: without the module, blocks are file offsets and names
// come from the profile or are func[INDEX].
func TestNoModule(t *testing.T) {
	c := loadProg(t, "calc")
	p := calcProfile(t, c)
	r := build(t, p, Options{})
	out := text(t, r)
	gcd, _ := c.fn(t, "fn_gcd")
	gb := c.blocks(t, "fn_gcd")
	for _, want := range []string{
		"blocks    file offsets (give the module for function offsets and source lines)\n",
		fmt.Sprintf("  func[%d]\n", gcd),
		fmt.Sprintf("      0x%x 0x%x 0x%x\n", gb[2], gb[3], gb[4]),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if r.Run.Source != "none" {
		t.Errorf("source %q", r.Run.Source)
	}
}

// TestOffsetsWithoutDWARF: a Go module has no DWARF, so blocks are named
// function+offset from the body start.
func TestOffsetsWithoutDWARF(t *testing.T) {
	b, m := wasmtest.DecodeFile(t, testprogs.GoHello(t))
	def := wasmtest.DefinedFunc(t, m, "main.main")
	code := &m.Code[def]
	first := code.OrigOff + int(code.ExprOff)
	p := (&prog{bytes: b, m: m}).header()
	p.Functions = []profile.Function{{Index: m.NumImportedFuncs + uint32(def), Status: "profiled", PossiblePaths: "2",
		Paths: []profile.Path{{ID: 1, Count: 1, Kind: profile.KindEntryExit, Blocks: []int{first}}}}}
	r := build(t, p, Options{Module: b})
	out := text(t, r)
	if want := fmt.Sprintf("      main.main+0x%x\n", code.ExprOff); !strings.Contains(out, want) {
		t.Errorf("text lacks %q:\n%s", want, out)
	}
	if !strings.Contains(out, "blocks    function+offset (the module has no DWARF)\n") || r.Run.Source != "offsets" {
		t.Errorf("source not marked as offsets:\n%s", out)
	}
}

func TestIncomplete(t *testing.T) {
	c := loadProg(t, "calc")
	p := calcProfile(t, c)
	p.Complete = false
	p.Incomplete = "copy 0 trapped: integer divide by zero"
	p.ExitCode = 134
	p.Runs[0].Error = "integer divide by zero"
	p.Runs[0].ExitCode = 134
	r := build(t, p, Options{Module: c.bytes})
	out := text(t, r)
	if !strings.HasPrefix(out, "INCOMPLETE PROFILE: copy 0 trapped: integer divide by zero\n") {
		t.Errorf("incomplete profile not marked first:\n%s", out)
	}
	for _, want := range []string{"result    INCOMPLETE, exit code 134\n", "copy  probe hits  seconds  exit  error\n", "   0        4242    0.125   134  integer divide by zero\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	data, _ := r.JSON()
	if !bytes.Contains(data, []byte(`"complete": false`)) || !bytes.Contains(data, []byte(`"incomplete": "copy 0 trapped: integer divide by zero"`)) {
		t.Errorf("JSON does not say incomplete:\n%s", data)
	}

	p.Incomplete = ""
	if out := text(t, build(t, p, Options{})); !strings.HasPrefix(out, "INCOMPLETE PROFILE: no reason given\n") {
		t.Errorf("incomplete without reason:\n%s", out)
	}

	// An interrupted profile says its counts were read as the program ran.
	p.Incomplete = "interrupted by SIGINT after 1.00s: counts read while the program ran"
	p.Interrupted = &profile.Interruption{Reason: "SIGINT", Time: "2026-11-27T09:30:00Z", Seconds: 1}
	r = build(t, p, Options{})
	if out := text(t, r); !strings.HasPrefix(out, "INCOMPLETE PROFILE: interrupted by SIGINT after 1.00s: counts read while the program ran\n  Counts were read while the program ran: each is at most the full run's;") {
		t.Errorf("interrupted profile:\n%s", out)
	}
	if data, _ := r.JSON(); !bytes.Contains(data, []byte(`"interrupted": true`)) {
		t.Errorf("JSON does not say interrupted:\n%s", data)
	}
}

// TestHugeCoverage checks coverage with possible-path counts far beyond
// 2^64, exactly where it matters: the totals' sum and the percentages.
func TestHugeCoverage(t *testing.T) {
	c := loadProg(t, "calc")
	p := calcProfile(t, c)
	two128 := new(big.Int).Lsh(big.NewInt(1), 128)
	two200 := new(big.Int).Lsh(big.NewInt(1), 200)
	p.Functions[1].PossiblePaths = two128.String() // fn_gcd, 3 paths
	p.Functions[2].PossiblePaths = "4"             // parse_cmp, 1 path
	p.Functions[2].Paths[0].ID = 3
	p.Functions[0].PossiblePaths = two200.String() // accept, none
	r := build(t, p, Options{Module: c.bytes})
	sum := new(big.Int).Add(two128, two200)
	sum.Add(sum, big.NewInt(4))
	if r.Totals.PossiblePaths != sum.String() {
		t.Errorf("total possible %s, want %s", r.Totals.PossiblePaths, sum)
	}
	want := 4 / 1.6069380442589903e60 * 100 // 4 / (2^200 + 2^128 + 4), in float64
	if got := r.Totals.Coverage; got < want*0.999999 || got > want*1.000001 || got == 0 {
		t.Errorf("total coverage %g, want %g", got, want)
	}
	for _, f := range r.Functions {
		switch f.Name {
		case "fn_gcd":
			if want := 3 / 3.402823669209385e38 * 100; *f.Coverage < want*0.999999 || *f.Coverage > want*1.000001 {
				t.Errorf("fn_gcd coverage %g, want %g", *f.Coverage, want)
			}
		case "parse_cmp":
			if *f.Coverage != 25 {
				t.Errorf("parse_cmp coverage %g, want 25", *f.Coverage)
			}
		case "accept":
			if *f.Coverage != 0 {
				t.Errorf("accept coverage %g", *f.Coverage)
			}
		}
	}
	out := text(t, r)
	for _, want := range []string{
		"      3  ~3.403e+38     <0.1%  fn_gcd\n",
		"      1           4     25.0%  parse_cmp\n",
		"      4  ~1.607e+60     <0.1%  total\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	data, _ := r.JSON()
	if !bytes.Contains(data, []byte(`"possible_paths": "`+sum.String()+`"`)) {
		t.Errorf("JSON lacks the exact total")
	}
}

// TestTopN checks both orders, the cut-off, ties and weights past 2^64.
func TestTopN(t *testing.T) {
	c := loadProg(t, "calc")
	p := c.header()
	gcd, _ := c.fn(t, "fn_gcd")
	gb := c.blocks(t, "fn_gcd")
	cmpIdx, _ := c.fn(t, "parse_cmp")
	cb := c.blocks(t, "parse_cmp")
	f1 := profile.Function{Index: gcd, Status: "profiled", PossiblePaths: "1000"}
	f2 := profile.Function{Index: cmpIdx, Status: "profiled", PossiblePaths: "1000"}
	// Path i of fn_gcd has count 10*i and i%4+1 blocks; parse_cmp's paths
	// tie with some of them.
	for i := 1; i <= 30; i++ {
		f1.Paths = append(f1.Paths, profile.Path{ID: uint64(i), Count: uint64(10 * i), Kind: profile.KindEntryExit, Blocks: gb[:i%4+1]})
	}
	f2.Paths = []profile.Path{
		{ID: 1, Count: 300, Kind: profile.KindEntryExit, Blocks: cb[:1]},      // ties with gcd path 30 by count
		{ID: 2, Count: 1 << 63, Kind: profile.KindBackBack, Blocks: cb[:3]},   // weight 3 × 2^63 > 2^64
		{ID: 3, Count: 1<<63 + 1, Kind: profile.KindBackExit, Blocks: cb[:1]}, // highest count, lower weight
	}
	// parse_cmp first in the profile: the order of the lists must not
	// depend on it.
	p.Functions = []profile.Function{f2, f1}
	r := build(t, p, Options{Module: c.bytes, Top: 5})
	type key struct {
		fn string
		id uint64
	}
	got := func(l []Hot) []key {
		var k []key
		for i, h := range l {
			if h.Rank != i+1 {
				t.Errorf("rank %d at position %d", h.Rank, i)
			}
			k = append(k, key{h.Function, h.ID})
		}
		return k
	}
	gname := "fn_gcd" // from the module's name section
	if gcd < cmpIdx {
		t.Fatalf("test assumes fn_gcd (%d) comes after parse_cmp (%d)", gcd, cmpIdx)
	}
	wantCount := []key{{"parse_cmp", 3}, {"parse_cmp", 2}, {"parse_cmp", 1}, {gname, 30}, {gname, 29}}
	if g := got(r.Hottest); fmt.Sprint(g) != fmt.Sprint(wantCount) {
		t.Errorf("by count %v, want %v", g, wantCount)
	}
	// Weights: parse_cmp 2 is 3×2^63, 3 is 2^63+1; gcd i is 10i(i%4+1):
	// 27 → 1080, 23 → 920, 30 → 900, 26 → 780 (ties: 19 → 760).
	wantWeight := []key{{"parse_cmp", 2}, {"parse_cmp", 3}, {gname, 27}, {gname, 23}, {gname, 30}}
	if g := got(r.HottestByLength); fmt.Sprint(g) != fmt.Sprint(wantWeight) {
		t.Errorf("by count × length %v, want %v", g, wantWeight)
	}
	if w := r.HottestByLength[0].Weight; w != "27670116110564327424" {
		t.Errorf("weight of 3 × 2^63 is %s", w)
	}
	out := text(t, r)
	if n := len(regexp.MustCompile(`(?m)^ +\d+ +\d+ +\d+ +\d+ +[a-z-]+ +\d+  \S+$`).FindAllString(out, -1)); n != 10 {
		t.Errorf("%d ranked lines, want 2 × 5:\n%s", n, out)
	}

	// Top larger than the paths: all of them.
	r = build(t, p, Options{Top: 1000})
	if len(r.Hottest) != 33 || len(r.HottestByLength) != 33 {
		t.Errorf("top 1000 of 33 paths gave %d and %d", len(r.Hottest), len(r.HottestByLength))
	}
	// Default.
	if r = build(t, p, Options{}); len(r.Hottest) != DefaultTop {
		t.Errorf("default top gave %d", len(r.Hottest))
	}
}

func TestEmptyProfile(t *testing.T) {
	c := loadProg(t, "calc")
	p := c.header()
	r := build(t, p, Options{Module: c.bytes})
	out := text(t, r)
	if !strings.Contains(out, "hottest paths by count\n  (no paths ran)\n") {
		t.Errorf("empty profile:\n%s", out)
	}
	data, _ := r.JSON()
	if !bytes.Contains(data, []byte(`"functions": []`)) || !bytes.Contains(data, []byte(`"hottest": []`)) {
		t.Errorf("empty lists not [] in JSON:\n%s", data)
	}
}

func TestWrongModule(t *testing.T) {
	c := loadProg(t, "calc")
	p := calcProfile(t, c)
	other := loadProg(t, "sort")
	if _, err := Build(p, Options{Module: other.bytes}); err == nil || !strings.Contains(err.Error(), "the module is not the one profiled") {
		t.Errorf("other module: %v", err)
	}

	// Without a hash to go by, offsets outside the function are caught.
	p.Module.SHA256 = ""
	_, code := c.fn(t, "accept")
	p.Functions[1].Paths[0].Blocks = []int{code.OrigOff + 1}
	if _, err := Build(p, Options{Module: c.bytes}); err == nil || !strings.Contains(err.Error(), "is not within the function's code") {
		t.Errorf("block outside its function: %v", err)
	}
	p = calcProfile(t, c)
	p.Module.SHA256 = ""
	p.Functions[0].Index = 0 // an import
	if _, err := Build(p, Options{Module: c.bytes}); err == nil || !strings.Contains(err.Error(), "function 0 is not a function defined in the module") {
		t.Errorf("imported function: %v", err)
	}
}

func TestBlockListWraps(t *testing.T) {
	var bl []Block
	for i := 0; i < 40; i++ {
		bl = append(bl, Block{File: "calc.c", Line: 100 + i, At: fmt.Sprintf("calc.c:%d", 100+i)})
	}
	bl = append(bl, Block{File: "util.h", Line: 7, At: "util.h:7"}, Block{File: "calc.c", Line: 3, At: "calc.c:3"})
	s := blockList(bl, 6, wrapAt)
	lines := strings.Split(s, "\n")
	if len(lines) < 2 {
		t.Fatalf("no wrap: %q", s)
	}
	for _, l := range lines {
		if len(l) > wrapAt || !strings.HasPrefix(l, "      calc.c:") {
			t.Errorf("line %q", l)
		}
	}
	// A continued line names its file again.
	if want := "      calc.c:100,101,102,103,104,105,106,107,108,109,110,111,112,113,114,115,116,117,118,119,120,121\n" +
		"      calc.c:122,123,124,125,126,127,128,129,130,131,132,133,134,135,136,137,138,139 util.h:7\n" +
		"      calc.c:3"; s != want {
		t.Errorf("blocks %q", s)
	}
	if got := blockList([]Block{{At: "ns::f+0x3"}, {At: "ns::f+0x1c"}, {At: "g+0x1"}, {At: "0x99"}, {At: "0x9a"}}, 0, 0); got != "ns::f+0x3,0x1c g+0x1 0x99 0x9a" {
		t.Errorf("offsets %q", got)
	}
	// Columns and offsets stay with their block; no width, no wrap.
	cols := []Block{{File: "a.c", At: "a.c:3:7(+0x1a)"}, {File: "a.c", At: "a.c:4:2"}, {File: "b.h", At: "b.h:1:1"}}
	if got := blockList(slices.Repeat(cols, 20), 0, 0); strings.Contains(got, "\n") || !strings.HasPrefix(got, "a.c:3:7(+0x1a),4:2 b.h:1:1 a.c:3:7(+0x1a),4:2") {
		t.Errorf("columns %q", got)
	}
}

func TestPercent(t *testing.T) {
	for p, want := range map[float64]string{0: "0.0%", 1e-30: "<0.1%", 0.05: "0.1%", 33.3333: "33.3%", 99.99: ">99.9%", 100: "100.0%"} {
		if got := pct(p); got != want {
			t.Errorf("pct(%g) = %q, want %q", p, got, want)
		}
	}
	if got := percent(1, new(big.Int).Lsh(big.NewInt(1), 300)); got == 0 || got > 1e-88 {
		t.Errorf("1 / 2^300 = %g%%", got)
	}
}

// TestBadDWARF: a module whose DWARF cannot be read still gets a report,
// with function offsets and a warning.
func TestBadDWARF(t *testing.T) {
	c := loadProg(t, "calc")
	p := calcProfile(t, c)
	p.Module.SHA256 = "" // the garbled module is not the one profiled
	bad := bytes.Clone(c.bytes)
	for _, s := range c.m.CustomSections() {
		if s.Name == ".debug_info" {
			// The payload is the section's last bytes.
			i := bytes.Index(bad, s.Payload)
			for j := range s.Payload {
				bad[i+j] = 0xFF
			}
		}
	}
	r := build(t, p, Options{Module: bad})
	out := text(t, r)
	if r.Run.Source != "offsets" || len(r.Warnings) != 1 || !strings.HasPrefix(out, "warning: no source lines: DWARF") ||
		!strings.Contains(out, "  fn_gcd\n      fn_gcd+0x") {
		t.Errorf("garbled DWARF:\n%s", out)
	}
}
