package bench

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pathprof/pathprof/internal/proglist"
)

func TestParseErrors(t *testing.T) {
	cases := []struct{ name, manifest, want string }{
		{"not json", `{`, "unexpected EOF"},
		{"trailing", `{"version": 1, "programs": [{"name": "a", "wasm": "a.wasm"}]} {}`, "trailing data"},
		{"unknown field", `{"version": 1, "programs": [{"name": "a", "wasm": "a.wasm", "stdni": "x"}]}`, `unknown field "stdni"`},
		{"version", `{"version": 2, "programs": [{"name": "a", "wasm": "a.wasm"}]}`, "version 2, want 1"},
		{"no version", `{"programs": [{"name": "a", "wasm": "a.wasm"}]}`, "version 0, want 1"},
		{"no programs", `{"version": 1, "programs": []}`, "no programs"},
		{"no name", `{"version": 1, "programs": [{"wasm": "a.wasm"}]}`, "program 0: no name"},
		{"bad name", `{"version": 1, "programs": [{"name": "a b", "wasm": "a.wasm"}]}`, `program "a b": the name may not`},
		{"no wasm", `{"version": 1, "programs": [{"name": "a"}]}`, `program "a": no wasm file`},
		{"duplicate", `{"version": 1, "programs": [{"name": "a", "wasm": "a.wasm"}, {"name": "a", "wasm": "b.wasm"}]}`, `program "a" is listed twice`},
		{"env", `{"version": 1, "programs": [{"name": "a", "wasm": "a.wasm", "env": ["PWD"]}]}`, `environment entry "PWD": want KEY=VALUE`},
		{"env key", `{"version": 1, "programs": [{"name": "a", "wasm": "a.wasm", "env": ["=x"]}]}`, `environment entry "=x"`},
		{"mount guest", `{"version": 1, "programs": [{"name": "a", "wasm": "a.wasm", "mounts": ["data:tmp"]}]}`, `guest path "tmp" is not absolute`},
		{"mount flag", `{"version": 1, "programs": [{"name": "a", "wasm": "a.wasm", "mounts": ["/d:/d:rw"]}]}`, `may only be "ro"`},
		{"mount fields", `{"version": 1, "programs": [{"name": "a", "wasm": "a.wasm", "mounts": ["/d:/d:ro:x"]}]}`, "want HOST:GUEST"},
		{"mount empty", `{"version": 1, "programs": [{"name": "a", "wasm": "a.wasm", "mounts": [":/d"]}]}`, "empty host directory"},
		{"tmp alone", `{"version": 1, "programs": [{"name": "a", "wasm": "a.wasm", "mounts": ["@tmp"]}]}`, "needs a guest path"},
		{"mounted twice", `{"version": 1, "programs": [{"name": "a", "wasm": "a.wasm", "mounts": ["@tmp:/tmp", "/x:/tmp"]}]}`, `"/tmp" is mounted twice`},
		{"exit code", `{"version": 1, "programs": [{"name": "a", "wasm": "a.wasm", "expect_exit_code": -1}]}`, "cannot unmarshal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.manifest))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestParseAndLoad(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.wasm", "in/a.txt", "a.expected"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	manifest := `{
  "version": 1,
  "programs": [
    {"name": "a", "wasm": "a.wasm", "args": ["-v", "x"], "env": ["K=V=W"], "stdin": "in/a.txt",
     "mounts": ["in:/in:ro", "@tmp:/tmp"], "expect_stdout": "a.expected", "expect_exit_code": 3, "quick": true}
  ]
}`
	write := func(m string) {
		if err := os.WriteFile(filepath.Join(dir, ManifestName), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(manifest)
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := s.Program("a")
	if !ok || !p.Quick || p.ExpectExitCode == nil || *p.ExpectExitCode != 3 || p.Env[0] != "K=V=W" {
		t.Fatalf("parsed %+v", s.Programs)
	}
	cfg, cleanup, err := s.runConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Dirs) != 2 || cfg.Dirs[0].HostDir != filepath.Join(dir, "in") || !cfg.Dirs[0].ReadOnly ||
		cfg.Dirs[1].GuestPath != "/tmp" || cfg.Dirs[1].ReadOnly {
		t.Fatalf("mounts %+v", cfg.Dirs)
	}
	tmp := cfg.Dirs[1].HostDir
	if fi, err := os.Stat(tmp); err != nil || !fi.IsDir() {
		t.Fatalf("fresh temporary directory: %v", err)
	}
	cleanup()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatalf("temporary directory %s left behind", tmp)
	}

	for _, c := range []struct{ from, to, want string }{
		{`"wasm": "a.wasm"`, `"wasm": "b.wasm"`, `program "a": wasm:`},
		{`"stdin": "in/a.txt"`, `"stdin": "in"`, "stdin in is a directory"},
		{`"expect_stdout": "a.expected"`, `"expect_stdout": "nope"`, "expect_stdout"},
		{`"in:/in:ro"`, `"a.wasm:/in:ro"`, "is not a directory"},
	} {
		write(strings.Replace(manifest, c.from, c.to, 1))
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.to, err, c.want)
		}
	}
}

func TestParseMount(t *testing.T) {
	for in, want := range map[string]Mount{
		"/a":           {Host: "/a", Guest: "/a"},
		"data:/data":   {Host: "data", Guest: "/data"},
		"/x:/y:ro":     {Host: "/x", Guest: "/y", ReadOnly: true},
		"@tmp:/tmp":    {Host: TempMount, Guest: "/tmp"},
		"@tmp:/tmp:ro": {Host: TempMount, Guest: "/tmp", ReadOnly: true},
	} {
		got, err := ParseMount(in)
		if err != nil || got != want {
			t.Errorf("ParseMount(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	if _, err := ParseMount("rel"); err == nil {
		t.Error(`ParseMount("rel"): a relative path alone has no absolute guest path, want an error`)
	}
}

func TestBigCell(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "15236300": "15,236,300", "999999999999": "999,999,999,999",
		"1000000000000": "1.00×10^12", "1903505823820560900": "1.90×10^18"} {
		if got := bigCell(in); got != want {
			t.Errorf("bigCell(%s) = %q, want %q", in, got, want)
		}
	}
}

// TestPrepareC copies the committed C programs into a suite and loads it.
func TestPrepareC(t *testing.T) {
	l := preparedSuite(t, prepareC, filepath.Join("testdata", "c"))
	calc, ok := l.Program("calc")
	if !ok || calc.Stdin != "c/calc.in" || calc.ExpectExitCode == nil || *calc.ExpectExitCode != 0 {
		t.Fatalf("calc: %+v", calc)
	}
	grid, ok := l.Program("grid")
	if !ok || len(grid.Args) != 1 || grid.Args[0] != "9" {
		t.Fatalf("grid: %+v", grid)
	}
	records, ok := l.Program("records")
	if !ok || records.ExpectExitCode == nil || *records.ExpectExitCode == 0 {
		t.Fatalf("records should expect a non-zero exit code: %+v", records)
	}
}

// TestPrepareKernels copies the committed kernels into a suite and loads
// it: each has its module and expected output, and the sets are the list's.
func TestPrepareKernels(t *testing.T) {
	l := preparedSuite(t, prepareKernels, filepath.FromSlash(KernelsDir))
	for _, name := range []string{"filter", "apsp", "fft", "bsearch"} {
		p, ok := l.Program(name)
		if !ok || p.Validation || p.Origin != OriginKernels || p.ExpectStdout == "" {
			t.Errorf("%s: %+v, want a training kernel with its expected output", name, p)
		}
	}
	if p, ok := l.Program("matmul"); !ok || !p.Validation {
		t.Errorf("matmul: %+v, want a validation kernel", p)
	}
}

// TestValidationThird counts the programs a full preparation makes, from
// the lists it reads, and checks that a third or more of them, and of the
// default run (without the big programs), are in the validation set.
func TestValidationThird(t *testing.T) {
	src, err := FindSource(".")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := proglist.ReadC(filepath.Join(src, "testdata", "c"))
	if err != nil {
		t.Fatal(err)
	}
	ks, err := proglist.ReadKernels(filepath.Join(src, filepath.FromSlash(KernelsDir)))
	if err != nil {
		t.Fatal(err)
	}
	lua, err := filepath.Glob(filepath.Join(src, "bench", "debian", "lua", "*.lua"))
	if err != nil {
		t.Fatal(err)
	}
	// hello, gofmt and the test binaries; bzip2, bzip2-d, minigzip and a
	// Lua run per script: all training programs.
	train := len(cs) + 2 + len(stdTests) + 3 + len(lua)
	valid := 0
	for _, k := range ks {
		if k.Validation {
			valid++
		} else {
			train++
		}
	}
	third := func(what string, train, valid int) {
		if 3*valid < train+valid {
			t.Errorf("%s: %d of %d programs in the validation set, fewer than a third", what, valid, train+valid)
		}
		t.Logf("%s: %d of %d programs in the validation set", what, valid, train+valid)
	}
	third("default run", train, valid)
	for _, pkg := range npmPackages {
		for _, p := range pkg.Programs {
			if p.Validation {
				valid++
			} else {
				train++
			}
		}
	}
	for _, p := range debianBigLists(t, src) {
		if p.Validation {
			valid++
		} else {
			train++
		}
	}
	third("with the big programs", train, valid)
}

// preparedSuite prepares programs of the source tree's directory src
// with prepare into a new suite, writes its manifest and loads it.
func preparedSuite(t *testing.T, prepare func(dir, src string) ([]Program, error), src string) *Suite {
	t.Helper()
	root, err := FindSource(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	progs, err := prepare(dir, filepath.Join(root, src))
	if err != nil {
		t.Fatal(err)
	}
	s := &Suite{Version: ManifestVersion, Programs: progs, Dir: dir}
	if err := s.Write(); err != nil {
		t.Fatal(err)
	}
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestSelect(t *testing.T) {
	s := &Suite{Programs: []Program{{Name: "a", Quick: true}, {Name: "b"}, {Name: "c", Quick: true}, {Name: "d", Big: true}}}
	names := func(ps []*Program) string {
		var n []string
		for _, p := range ps {
			n = append(n, p.Name)
		}
		return strings.Join(n, ",")
	}
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{}, "a,b,c"},
		{Options{Big: true}, "a,b,c,d"},
		{Options{Quick: true}, "a,c"},
		{Options{Only: []string{"c", "b"}}, "b,c"},
		{Options{Only: []string{"d"}}, "d"},
		{Options{Quick: true, Only: []string{"c"}}, "c"},
	} {
		ps, err := Select(s, c.opt)
		if err != nil || names(ps) != c.want {
			t.Errorf("Select(%+v) = %s, %v; want %s", c.opt, names(ps), err, c.want)
		}
	}
	if _, err := Select(s, Options{Only: []string{"x"}}); err == nil {
		t.Error("an unknown name was accepted")
	}
	if _, err := Select(s, Options{Quick: true, Only: []string{"b"}}); err == nil {
		t.Error("an empty selection was accepted")
	}
}

func TestMarkdown(t *testing.T) {
	r := &Report{
		RunInfo: RunInfo{Date: time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC), Command: "pathprof bench", GoVersion: "go1.26.8",
			CPUs: 2, OS: "linux", Arch: "amd64", Runs: 5},
		Seconds: 200, Strategies: []Variant{SBL},
		Programs: []ProgramResult{
			{Name: "calc", Bytes: 127037, Functions: 71, Profiled: 70, PossiblePaths: "4977938878998691329",
				ExecutedPaths: 1234, PathExecutions: 10761402, Original: Timing{MedianSeconds: 0.040, CompileSeconds: 0.12}, PeakRSSBytes: 57e6,
				Strategies: []Measure{{Strategy: SBL, Timing: Timing{MedianSeconds: 0.050, CompileSeconds: 0.25}, WallRatio: 1.25, ProbeHits: 1234567,
					InstrumentSeconds: 0.01, CopyBytes: 190556}}},
			{Name: "bad", Error: "instrumented run: exit code 1 | x\nline 2"},
		},
		GeoMean: map[string]float64{"sbl": 1.25},
		Failed:  1,
	}
	var b strings.Builder
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| program | original ms | SBL ms | ratio | probe hits | paths executed | instrument s |",
		"| calc | 40.0 | 50.0 | 1.25 | 1,234,567 | 1,234 | 0.01 |",
		"| bad |  |  | **FAILED** |",
		"| **geometric mean** |  |  | **1.25** |",
		"- **bad FAILED**: instrumented run: exit code 1 \\| x / line 2",
		"3.3 min",
		"| calc | 0.13 | 71 | 70 | 4.97×10^18 | 1,234 | 10,761,402 |",
		"| calc | 0.01 | 0.19 | 1.50 | 0.12 | 0.25 | 57 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "validation") {
		t.Errorf("a run without validation programs reports a validation set:\n%s", out)
	}

	// With programs of both sets, each set has its geometric mean and the
	// validation programs are marked.
	r.Programs[1] = ProgramResult{Name: "fft", Validation: true, Original: Timing{MedianSeconds: 0.1},
		Strategies: []Measure{{Strategy: SBL, Timing: Timing{MedianSeconds: 0.2}, WallRatio: 2}}}
	r.GeoMean, r.GeoMeanTraining, r.GeoMeanValidation = map[string]float64{"sbl": 1.58}, map[string]float64{"sbl": 1.25}, map[string]float64{"sbl": 2}
	b.Reset()
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	out = b.String()
	for _, want := range []string{
		"| fft (v) | 100.0 | 200.0 | 2.00 |",
		"| **geometric mean** |  |  | **1.58** |",
		"| **geometric mean, training** |  |  | **1.25** |",
		"| **geometric mean, validation (v)** |  |  | **2.00** |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

// TestGeoMeans checks the means per set that Run reports.
func TestGeoMeans(t *testing.T) {
	rep := &Report{Strategies: []Variant{SBL}, Programs: []ProgramResult{
		{Name: "a", Strategies: []Measure{{WallRatio: 1, CPURatio: 2}}},
		{Name: "b", Strategies: []Measure{{WallRatio: 4, CPURatio: 2}}},
		{Name: "c", Validation: true, Strategies: []Measure{{WallRatio: 2, CPURatio: 1}}},
		{Name: "d", Validation: true, Error: "failed", Strategies: []Measure{{WallRatio: 100, CPURatio: 100}}},
	}}
	all := geoMeans(rep, func(*ProgramResult) bool { return true }, rep.Ratio)
	valid := geoMeans(rep, func(r *ProgramResult) bool { return r.Validation }, rep.Ratio)
	if math.Abs(all["sbl"]-2) > 1e-9 || math.Abs(valid["sbl"]-2) > 1e-9 {
		t.Errorf("geometric means %v over all, %v over the validation set; want 2 and 2", all, valid)
	}
	// By CPU time, the means are of the CPU ratios.
	rep.Measure = MeasureCPU
	all = geoMeans(rep, func(*ProgramResult) bool { return true }, rep.Ratio)
	valid = geoMeans(rep, func(r *ProgramResult) bool { return r.Validation }, rep.Ratio)
	if math.Abs(all["sbl"]-math.Cbrt(4)) > 1e-9 || math.Abs(valid["sbl"]-1) > 1e-9 {
		t.Errorf("CPU geometric means %v over all, %v over the validation set; want %v and 1", all, valid, math.Cbrt(4))
	}
}

// TestMarkdownCPU checks the table of a run measured by CPU time: CPU
// medians and ratios, the wall ratios beside them, and both geometric
// means.
func TestMarkdownCPU(t *testing.T) {
	r := &Report{
		RunInfo: RunInfo{Date: time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC), Runs: 3},
		Measure: MeasureCPU, Strategies: []Variant{SBL},
		Programs: []ProgramResult{
			{Name: "calc", Original: Timing{MedianSeconds: 0.080, MedianCPUSeconds: 0.040},
				Strategies: []Measure{{Strategy: SBL, Timing: Timing{MedianSeconds: 0.200, MedianCPUSeconds: 0.050}, WallRatio: 2.5, CPURatio: 1.25}}},
			{Name: "fft", Validation: true, Original: Timing{MedianSeconds: 0.1, MedianCPUSeconds: 0.1},
				Strategies: []Measure{{Strategy: SBL, Timing: Timing{MedianSeconds: 0.16, MedianCPUSeconds: 0.2}, WallRatio: 1.6, CPURatio: 2}}},
		},
	}
	r.GeoMean = geoMeans(r, func(*ProgramResult) bool { return true }, r.Ratio)
	r.GeoMeanTraining = geoMeans(r, func(p *ProgramResult) bool { return !p.Validation }, r.Ratio)
	r.GeoMeanValidation = geoMeans(r, func(p *ProgramResult) bool { return p.Validation }, r.Ratio)
	var b strings.Builder
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| program | original CPU ms | SBL CPU ms | ratio | wall ratio | probe hits |",
		"| calc | 40.0 | 50.0 | 1.25 | 2.50 |",
		"| fft (v) | 100.0 | 200.0 | 2.00 | 1.60 |",
		"| **geometric mean** |  |  | **1.58** | **2.00** |",
		"| **geometric mean, training** |  |  | **1.25** | **2.50** |",
		"| **geometric mean, validation (v)** |  |  | **2.00** | **1.60** |",
		"CPU time of the thread that ran the program",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

// TestReadOldReport checks that a results.json from before the CPU
// measure reads as a report by wall time.
func TestReadOldReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), JSONName)
	old := `{"strategies":[{"name":"sbl","copies":1}],"geomean_ratio":{"sbl":1.2},"programs":[{"name":"calc",` +
		`"original":{"compile_seconds":0.1,"seconds":[0.04],"median_seconds":0.04},` +
		`"strategies":[{"strategy":{"name":"sbl","copies":1},"compile_seconds":0.2,"seconds":[0.048],"median_seconds":0.048,"ratio":1.2}]}]}`
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := &r.Programs[0].Strategies[0]; r.Measure != "" || r.Ratio(m) != 1.2 || m.CPURatio != 0 {
		t.Fatalf("measure %q, ratio %v, CPU ratio %v; want wall time and 1.2", r.Measure, r.Ratio(m), m.CPURatio)
	}
	var b strings.Builder
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if want := "| calc | 40.0 | 48.0 | 1.20 |"; !strings.Contains(b.String(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, b.String())
	}
}

// TestPeakRSS checks that the peak resident set follows an allocation
// made after the reset, where the kernel tells it.
func TestPeakRSS(t *testing.T) {
	if !resetPeak() {
		t.Skip("the kernel does not let the peak resident set be reset")
	}
	before := peakRSS()
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	after := peakRSS()
	if after < before+32<<20 {
		t.Errorf("peak resident set %d bytes after touching 64 MiB, %d before", after, before)
	}
	runtime.KeepAlive(buf)
	if !resetPeak() || peakRSS() >= after {
		t.Errorf("the reset left the peak at %d bytes", peakRSS())
	}
}
