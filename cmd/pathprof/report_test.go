package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasmtest"
	"github.com/pathprof/pathprof/profile"
)

// calcReportProfile writes a profile of calc.wasm, built by hand from the
// blocks of fn_gcd, into dir and returns its path and the module's bytes.
// The profile names the module by modulePath.
func calcReportProfile(t *testing.T, dir, modulePath string) (string, []byte) {
	t.Helper()
	b, m := wasmtest.DecodeFile(t, testprogs.CProgramByName(t, "calc").Wasm)
	def := wasmtest.DefinedFunc(t, m, "fn_gcd")
	g, err := cfg.Build(m, def, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var blocks []int
	for _, bl := range g.Blocks[2:] {
		blocks = append(blocks, m.Code[def].OrigOff+int(bl.Start))
	}
	p := &profile.Profile{
		Module:   profile.Module{Path: modulePath, SHA256: sha256hex(b), Size: len(b), CodeOffset: m.CodePayloadOff},
		Strategy: "pbl", Copies: 2, Complete: true,
		Runs: []profile.Run{{Copy: 0, ProbeHits: 10, Seconds: 0.01}, {Copy: 1, ProbeHits: 12, Seconds: 0.02}},
		Functions: []profile.Function{{Index: m.NumImportedFuncs + uint32(def), Name: "fn_gcd", Status: "profiled", PossiblePaths: "9",
			Paths: []profile.Path{
				{ID: 0, Count: 3, Kind: profile.KindEntryExit, Blocks: blocks[:2]},
				{ID: 4, Count: 700, Kind: profile.KindBackBack, Blocks: blocks[2:5]},
			}}},
	}
	path := filepath.Join(dir, "calc.profile.json")
	if err := profile.WriteFile(path, p); err != nil {
		t.Fatal(err)
	}
	return path, b
}

// calcAbsReportProfile is calcReportProfile naming the module by its
// absolute path, which it returns beside the profile's.
func calcAbsReportProfile(t *testing.T, dir string) (prof, wasmPath string) {
	t.Helper()
	wasmPath, err := filepath.Abs(testprogs.CProgramByName(t, "calc").Wasm)
	if err != nil {
		t.Fatal(err)
	}
	prof, _ = calcReportProfile(t, dir, wasmPath)
	return prof, wasmPath
}

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	prof, wasmPath := calcAbsReportProfile(t, dir)

	code, out, errs := runCmd("report", prof)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"strategy  pbl, 2 copies\n", "source lines and columns from DWARF", "  fn_gcd\n      calc.c:", "22.2%  fn_gcd\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// Flags after the profile, and --json.
	code, out, errs = runCmd("report", prof, "--top", "1", "--json")
	var doc struct {
		Functions []struct {
			Name  string
			Paths []struct {
				ID     uint64
				Count  uint64
				Kind   string
				Blocks []struct{ File string }
			}
		}
		Hottest []struct{ ID uint64 }
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if len(doc.Hottest) != 1 || doc.Hottest[0].ID != 4 || len(doc.Functions) != 1 || doc.Functions[0].Name != "fn_gcd" ||
		len(doc.Functions[0].Paths) != 2 || doc.Functions[0].Paths[0].Blocks[0].File != "calc.c" {
		t.Errorf("JSON %+v", doc)
	}

	// An explicit module.
	if code, out, errs = runCmd("report", "--module", wasmPath, prof); code != 0 || !strings.Contains(out, "calc.c:") {
		t.Errorf("--module: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestReportModuleLookup covers where the module comes from when --module
// is not given: the recorded path, next to the profile, or nowhere.
func TestReportModuleLookup(t *testing.T) {
	dir := t.TempDir()
	prof, b := calcReportProfile(t, dir, "calc-copy.wasm")

	// Missing: a warning, and file offsets.
	code, out, errs := runCmd("report", prof)
	if code != 0 || !strings.Contains(errs, "warning: module calc-copy.wasm not found; blocks are shown as file offsets") ||
		!strings.Contains(out, "blocks    file offsets") || strings.Contains(out, "calc.c:") {
		t.Errorf("missing module: exit %d\n%s\n%s", code, out, errs)
	}
	if strings.Count(errs, "\n") != 1 {
		t.Errorf("warning spans lines: %q", errs)
	}

	// Next to the profile (the recorded path is relative and the current
	// directory does not hold it).
	if err := os.WriteFile(filepath.Join(dir, "calc-copy.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCmd("report", prof)
	if code != 0 || errs != "" || !strings.Contains(out, "calc.c:") {
		t.Errorf("module next to the profile: exit %d\n%s\n%s", code, out, errs)
	}

	// Changed since: a warning, and file offsets.
	changed := bytes.Clone(b)
	changed[len(changed)-1] ^= 1
	if err := os.WriteFile(filepath.Join(dir, "calc-copy.wasm"), changed, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCmd("report", prof)
	if code != 0 || !strings.Contains(errs, "has changed since it was profiled") || strings.Contains(out, "calc.c:") {
		t.Errorf("changed module: exit %d\n%s\n%s", code, out, errs)
	}

	// An explicit module that is not the one profiled is an error.
	other := testprogs.CProgramByName(t, "sort").Wasm
	code, _, errs = runCmd("report", "--module", other, prof)
	if code != 1 || !strings.Contains(errs, "is not the module") || strings.Count(errs, "\n") != 1 {
		t.Errorf("wrong --module: exit %d\n%s", code, errs)
	}
}

func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	prof, _ := calcReportProfile(t, dir, "")
	good, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, usageOf("report")},
		{[]string{prof, prof}, 2, usageOf("report")},
		{[]string{"--top", "0", prof}, 2, "--top 0: want at least 1"},
		{[]string{"--top", "x", prof}, 2, "invalid value"},
		{[]string{"--bogus", prof}, 2, "flag provided but not defined"},
		{[]string{filepath.Join(dir, "none.json")}, 1, "no such file"},
		{[]string{write("trunc.json", string(good[:len(good)/2]))}, 1, "truncated profile"},
		{[]string{write("other.json", `{"functions": []}`)}, 1, `not a pathprof profile: no "format" field`},
		{[]string{write("newer.json", strings.Replace(string(good), `"version": 2`, `"version": 3`, 1))}, 1,
			"profile format version 3 is newer than this pathprof reads (version 2): use a newer pathprof"},
		{[]string{"--module", filepath.Join(dir, "none.wasm"), prof}, 1, "no such file"},
		{[]string{"--lcov", filepath.Join(dir, "a.info"), prof}, 1, "coverage needs the profiled module: the profile names no module; give it with --module FILE"},
		{[]string{"--lcov", filepath.Join(dir, "a.info"), "--module", testprogs.CProgramByName(t, "calc").Wasm, prof}, 1,
			"its blocks are not those its id gives in the module"},
		{[]string{"--cobertura", filepath.Join(dir, "no", "a.xml"), prof}, 1, "a.xml"},
	} {
		code, out, errs := runCmd(append([]string{"report"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.want) || out != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit %d and %q", tc.args, code, errs, out, tc.code, tc.want)
		}
		if code == 1 && strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: error spans lines: %q", tc.args, errs)
		}
		if code == 1 && !strings.HasPrefix(errs, "pathprof: ") {
			t.Errorf("%v: error %q", tc.args, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a.info")); !os.IsNotExist(err) {
		t.Errorf("a failed --lcov left a file: %v", err)
	}
}

// TestReportCoverage profiles a program and writes its lcov and Cobertura
// files, which name the source where it was found.
func TestReportCoverage(t *testing.T) {
	dir := t.TempDir()
	p := testprogs.CProgramByName(t, "vm-O0")
	prof, info, xmlFile := filepath.Join(dir, "vm.json"), filepath.Join(dir, "vm.info"), filepath.Join(dir, "vm.xml")
	if code, _, errs := runCmd("profile", "-q", "-o", prof, p.Wasm); code != 0 {
		t.Fatalf("profile: exit %d: %s", code, errs)
	}
	code, out, errs := runCmd("report", "--lcov", info, "--cobertura", xmlFile, prof)
	if code != 0 || out != "" || strings.Contains(errs, "error") {
		t.Fatalf("report: exit %d\n%s\n%s", code, out, errs)
	}
	src, err := filepath.Abs(p.Source)
	if err != nil {
		t.Fatal(err)
	}
	lcov, err := os.ReadFile(info)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(lcov, []byte("TN:\nSF:"+src+"\n")) || !bytes.Contains(lcov, []byte("\nFN:")) || !bytes.Contains(lcov, []byte("\nBRDA:")) {
		t.Errorf("lcov file:\n%.500s", lcov)
	}
	x, err := os.ReadFile(xmlFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(x, []byte(`<class name="vm.c" filename="`+p.Source+`"`)) {
		t.Errorf("Cobertura file:\n%.800s", x)
	}
}

// TestReportDocExample runs the example of docs/profile-format.md and
// checks what the page says the report shows.
func TestReportDocExample(t *testing.T) {
	root := testprogs.ModuleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "profile-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(doc), "```json\n")
	example, _, _ := strings.Cut(rest, "```")
	prof := filepath.Join(t.TempDir(), "example.json")
	if err := os.WriteFile(prof, []byte(example), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd("report", "--module", filepath.Join(root, "testdata", "c", "calc.wasm"), prof)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"      calc.c:177:15,178:2(+0x61),183:7,185:1\n", "  fn_fib  skipped: an example reason\n", "    783     43      4         6     66.7%  fn_gcd\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
