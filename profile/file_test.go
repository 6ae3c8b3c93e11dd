package profile

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sample is a valid profile with more than one function and path, listed
// out of order so that Write's sorting shows.
func sample() *Profile {
	return &Profile{
		Format:  Format,
		Version: Version,
		Module: Module{
			Path:       "testdata/c/calc.wasm",
			SHA256:     strings.Repeat("ab", 32),
			Size:       5000,
			CodeOffset: 450,
		},
		Strategy:   "p3",
		Copies:     2,
		Complete:   false,
		Incomplete: "interrupted by SIGINT after 1.5s; copy 1 trapped: unreachable",
		Interrupted: &Interruption{Reason: "SIGINT", Time: "2026-11-27T09:30:00Z", Seconds: 1.5,
			Approximate: true},
		ExitCode: 3,
		Runs: []Run{
			{Copy: 0, ProbeHits: 1234, Seconds: 0.5, ExitCode: 3},
			{Copy: 1, ProbeHits: 99, Seconds: 0.25, ExitCode: 3, Error: "unreachable"},
		},
		Functions: []Function{
			{Index: 9, Name: "parse_add", Status: "profiled", PossiblePaths: "123456789012345678901234567890",
				Cuts: []int{700},
				Paths: []Path{
					{ID: 7, Count: 1 << 40, Kind: KindBackExit, Blocks: []int{600, 640}},
					{ID: 2, Count: 5, Kind: KindEntryExit, Blocks: []int{500, 520, 560}},
				}},
			{Index: 3, Status: "skipped: too many locals", PossiblePaths: "0"},
			{Index: 5, Name: "main", Status: "profiled", PossiblePaths: "4",
				Paths: []Path{{ID: 3, Count: 1, Kind: KindEntryExit, Blocks: []int{460}}}},
		},
	}
}

func write(t *testing.T, p *Profile) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	p := sample()
	before := sample()
	data := write(t, p)
	if !reflect.DeepEqual(p, before) {
		t.Fatal("Write modified its argument")
	}
	if !json.Valid(data) {
		t.Fatalf("Write produced invalid JSON:\n%s", data)
	}
	q, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Read: %v\n%s", err, data)
	}
	// Read gives the profile sorted; everything else is as written.
	want := sample()
	want.Functions[0], want.Functions[1], want.Functions[2] = want.Functions[1], want.Functions[2], want.Functions[0]
	want.Functions[2].Paths[0], want.Functions[2].Paths[1] = want.Functions[2].Paths[1], want.Functions[2].Paths[0]
	want.Functions[0].Paths = []Path{} // written as [], not null
	if !reflect.DeepEqual(q, want) {
		t.Fatalf("read back\n%+v\nwant\n%+v", q, want)
	}
	if again := write(t, q); !bytes.Equal(again, data) {
		t.Fatalf("second write differs:\n%s\nfirst:\n%s", again, data)
	}
	if ok, diff := p.Equal(q); !ok {
		t.Fatalf("read back profile not Equal: %s", diff)
	}
}

func TestWriteLayout(t *testing.T) {
	data := string(write(t, sample()))
	// One path per line, sorted by id; functions by index.
	for _, want := range []string{
		"\n        {\"id\":2,\"count\":5,\"kind\":\"entry-exit\",\"blocks\":[500,520,560]},\n",
		"\n        {\"id\":7,\"count\":1099511627776,\"kind\":\"back-exit\",\"blocks\":[600,640]}\n",
		"\"possible_paths\": \"123456789012345678901234567890\"",
		"\"incomplete\": \"interrupted by SIGINT after 1.5s; copy 1 trapped: unreachable\"",
		"\"interrupted\": {\n    \"reason\": \"SIGINT\",",
		"\"paths\": []",
	} {
		if !strings.Contains(data, want) {
			t.Errorf("output lacks %q:\n%s", want, data)
		}
	}
	i3, i5, i9 := strings.Index(data, `"index": 3`), strings.Index(data, `"index": 5`), strings.Index(data, `"index": 9`)
	if !(i3 >= 0 && i3 < i5 && i5 < i9) {
		t.Errorf("functions not in index order:\n%s", data)
	}
	if !strings.HasPrefix(data, "{\n  \"format\": \"pathprof-profile\",\n  \"version\": 2,\n") {
		t.Errorf("unexpected start:\n%s", data)
	}
}

func TestWriteFillsHeaderAndEmpty(t *testing.T) {
	p := &Profile{Strategy: "sbl", Copies: 1, Complete: true}
	data := write(t, p)
	q, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if q.Format != Format || q.Version != Version || len(q.Functions) != 0 || q.Runs == nil {
		t.Fatalf("got %+v", q)
	}
	if !strings.Contains(string(data), "\"functions\": []\n}") {
		t.Fatalf("empty function list written as:\n%s", data)
	}
}

func TestWriteRefusesInvalid(t *testing.T) {
	p := sample()
	p.Functions[0].Paths[0].Count = 0
	if err := Write(&bytes.Buffer{}, p); err == nil || !strings.Contains(err.Error(), "count 0") {
		t.Fatalf("Write of a zero count: %v", err)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.json")
	if err := WriteFile(path, sample()); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format": "pathprof-profile", "version": 1`), 0o644)
	_, err := ReadFile(bad)
	if err == nil || !strings.HasPrefix(err.Error(), bad+": truncated profile") {
		t.Fatalf("got %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("no error for a missing file")
	}
}

func TestReadErrors(t *testing.T) {
	good := string(write(t, sample()))
	edit := func(old, new string) string {
		if !strings.Contains(good, old) {
			t.Fatalf("sample lacks %q", old)
		}
		return strings.Replace(good, old, new, 1)
	}
	for _, tc := range []struct {
		name, data, want string
	}{
		{"empty", "", "not a pathprof profile: the file is empty"},
		{"spaces", " \n", "the file is empty"},
		{"truncated", good[:len(good)/2], "truncated profile: the JSON ends early"},
		{"truncated at end", strings.TrimSpace(good)[:len(strings.TrimSpace(good))-1], "truncated profile"},
		{"garbage", "\x00\x01wasm", "not a pathprof profile: invalid JSON at byte 1"},
		{"trailing", good + "{}", "invalid JSON"},
		{"array", "[1, 2]", "not a pathprof profile: the file holds a JSON array, not an object"},
		{"string", `"pathprof-profile"`, "holds a JSON string"},
		{"other object", `{"functions": []}`, `not a pathprof profile: no "format" field`},
		{"other format", `{"format": "pprof", "version": 1}`, `not a pathprof profile: format is "pprof"`},
		{"format number", `{"format": 1}`, `not a pathprof profile`},
		{"newer", edit(`"version": 2`, `"version": 3`), "profile format version 3 is newer than this pathprof reads (version 2): use a newer pathprof"},
		{"newer incompatible", `{"format": "pathprof-profile", "version": 7, "functions": {"x": 1}}`, "version 7 is newer"},
		{"no version", `{"format": "pathprof-profile"}`, `no "version" field`},
		{"version 0", edit(`"version": 2`, `"version": 0`), "invalid profile: version 0"},
		{"fraction version", edit(`"version": 2`, `"version": 1.5`), "version 1.5 is not a whole number"},
		{"negative count", edit(`"count":5`, `"count":-5`), "invalid profile: functions.paths.count: a JSON number -5 where a non-negative whole number belongs"},
		{"string count", edit(`"count":5`, `"count":"5"`), "functions.paths.count: a JSON string"},
		{"zero count", edit(`"count":5`, `"count":0`), "function 9, path 2: count 0"},
		{"bad kind", edit(`"kind":"back-exit"`, `"kind":"loop"`), `function 9, path 7: kind "loop" (want entry-exit, entry-back, back-back or back-exit)`},
		{"no blocks", edit(`"blocks":[500,520,560]`, `"blocks":[]`), "function 9, path 2: no blocks"},
		{"null blocks", edit(`"blocks":[500,520,560]`, `"blocks":null`), "function 9, path 2: no blocks"},
		{"block outside code", edit(`"blocks":[500,520,560]`, `"blocks":[500,20]`), "block offset 20 outside the code section"},
		{"block past end", edit(`"blocks":[500,520,560]`, `"blocks":[5000]`), "block offset 5000 outside"},
		{"duplicate path", edit(`"id":7`, `"id":2`), "function 9: path 2 listed twice"},
		{"duplicate function", edit(`"index": 3`, `"index": 5`), "function 5 listed twice"},
		{"id too big", edit(`"possible_paths": "4"`, `"possible_paths": "3"`), "function 5: path id 3 not below the 3 possible paths"},
		{"bad possible", edit(`"possible_paths": "4"`, `"possible_paths": "4e3"`), `possible paths "4e3" is not a decimal`},
		{"no possible", edit(`"possible_paths": "4"`, `"possible_paths": ""`), `possible paths "" is not a decimal`},
		{"zero possible", edit(`"possible_paths": "4"`, `"possible_paths": "0"`), "1 executed paths but only 0 possible"},
		{"bad status", edit(`"status": "profiled"`, `"status": "done"`), `status "done"`},
		{"skipped with paths", edit(`"status": "profiled"`, `"status": "skipped: big"`), "skipped, yet 1 paths counted"},
		{"bad strategy", edit(`"strategy": "p3"`, `"strategy": "xyz"`), `strategy "xyz"`},
		{"no copies", edit(`"copies": 2`, `"copies": 0`), "0 copies for strategy p3"},
		{"sbl copies", edit(`"strategy": "p3"`, `"strategy": "sbl"`), "2 copies for strategy sbl"},
		{"complete and incomplete", edit(`"complete": false`, `"complete": true`), "marked complete but also incomplete"},
		{"bad sha", edit(strings.Repeat("ab", 32), "xyz"), `module sha256 "xyz"`},
		{"negative seconds", edit(`"seconds": 0.5`, `"seconds": -1`), "run 0: -1 seconds"},
		{"complete and interrupted", edit(`"complete": false,
  "incomplete": "interrupted by SIGINT after 1.5s; copy 1 trapped: unreachable",`, `"complete": true,`), "marked complete but also interrupted"},
		{"interrupted without reason", edit(`"reason": "SIGINT"`, `"reason": ""`), "interrupted, with no reason"},
		{"interrupted at no time", edit(`"time": "2026-11-27T09:30:00Z"`, `"time": "now"`), `interrupted at "now": not an RFC 3339 time`},
		{"interrupted before start", edit(`"seconds": 1.5`, `"seconds": -1.5`), "interrupted after -1.5 seconds"},
		{"cut outside", edit(`"cuts": [`, `"cuts": [1,`), "cut at offset 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Read(strings.NewReader(tc.data))
			if err == nil {
				t.Fatalf("no error; read %+v", p)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q\nwant it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
		})
	}
}

func TestReadIgnoresUnknownFields(t *testing.T) {
	data := strings.Replace(string(write(t, sample())), `"copies": 2,`, `"copies": 2, "host": "x86",`, 1)
	if _, err := Read(strings.NewReader(data)); err != nil {
		t.Fatal(err)
	}
}

func TestEqual(t *testing.T) {
	base := sample()
	for _, tc := range []struct {
		name   string
		change func(p *Profile)
		want   string // "" for equal
	}{
		{"identical", func(p *Profile) {}, ""},
		{"run facts ignored", func(p *Profile) {
			p.Strategy, p.Copies, p.Runs, p.Module.Path = "sbl", 1, nil, "elsewhere.wasm"
			p.Complete, p.Incomplete = true, ""
			p.Functions[0].Name = "renamed"
		}, ""},
		{"order ignored", func(p *Profile) {
			p.Functions[0], p.Functions[2] = p.Functions[2], p.Functions[0]
		}, ""},
		{"empty function same as absent", func(p *Profile) {
			p.Functions = append(p.Functions[:1], p.Functions[2:]...)
		}, ""},
		{"count", func(p *Profile) { p.Functions[0].Paths[1].Count++ }, "function 9 (parse_add): path 2: count 5 vs 6"},
		{"kind", func(p *Profile) { p.Functions[0].Paths[0].Kind = KindBackBack }, "function 9 (parse_add): path 7: kind back-exit vs back-back"},
		{"blocks", func(p *Profile) { p.Functions[0].Paths[0].Blocks = []int{600} }, "function 9 (parse_add): path 7: blocks [600 640] vs [600]"},
		{"extra path", func(p *Profile) {
			p.Functions[2].Paths = append(p.Functions[2].Paths, Path{ID: 0, Count: 2, Kind: KindEntryExit, Blocks: []int{460}})
		}, "function 5 (main): path 0 (count 2) only in the second profile"},
		{"missing path", func(p *Profile) { p.Functions[0].Paths = p.Functions[0].Paths[:1] }, "function 9 (parse_add): path 2 (count 5) only in the first profile"},
		{"missing function", func(p *Profile) { p.Functions = p.Functions[:2] }, "function 5 (main): 1 paths in the first profile, none in the second"},
		{"module", func(p *Profile) { p.Module.SHA256 = strings.Repeat("cd", 32) }, "different modules: sha256 " + strings.Repeat("ab", 32) + " vs " + strings.Repeat("cd", 32)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := sample()
			tc.change(q)
			ok, diff := base.Equal(q)
			if tc.want == "" {
				if !ok {
					t.Fatalf("not equal: %s", diff)
				}
				if ok2, diff2 := q.Equal(base); !ok2 {
					t.Fatalf("not symmetric: %s", diff2)
				}
				return
			}
			if ok || diff != tc.want {
				t.Fatalf("Equal = %v, %q; want false, %q", ok, diff, tc.want)
			}
		})
	}
	if !reflect.DeepEqual(base, sample()) {
		t.Fatal("Equal modified its receiver")
	}
}

func FuzzRead(f *testing.F) {
	var b bytes.Buffer
	if err := Write(&b, sample()); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add(b.Bytes()[:100])
	f.Add([]byte(`{"format":"pathprof-profile","version":1,"strategy":"sbl","copies":1,"complete":true,"functions":[{"index":1,"status":"profiled","possible_paths":"99999999999999999999999","paths":[{"id":18446744073709551615,"count":1,"kind":"back-back","blocks":[0]}]}]}`))
	f.Add([]byte(`{"format":"pathprof-profile","version":2}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Read(bytes.NewReader(data))
		if err != nil {
			if p != nil {
				t.Fatal("profile and error both returned")
			}
			return
		}
		// Whatever Read accepts, Write must write, and the result must read
		// back as the same profile.
		var out bytes.Buffer
		if err := Write(&out, p); err != nil {
			t.Fatalf("Write of a profile Read accepted: %v", err)
		}
		q, err := Read(&out)
		if err != nil {
			t.Fatalf("reading back: %v\n%s", err, out.Bytes())
		}
		if ok, diff := p.Equal(q); !ok {
			t.Fatalf("round trip changed counts: %s", diff)
		}
	})
}

// docExample returns the example profile of docs/profile-format.md.
func docExample(t *testing.T) []byte {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "profile-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```json\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/profile-format.md has no json example")
	}
	return []byte(example)
}

// TestDocExample checks that the documentation's example is a valid
// profile, laid out as Write lays it out.
func TestDocExample(t *testing.T) {
	ex := docExample(t)
	p, err := Read(bytes.NewReader(ex))
	if err != nil {
		t.Fatal(err)
	}
	if got := write(t, p); !bytes.Equal(got, ex) {
		t.Fatalf("Write lays the example out as\n%s", got)
	}
}

// TestDocCoversFields checks that docs/profile-format.md names every field
// of the file.
func TestDocCoversFields(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "profile-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{Profile{}, Interruption{}, Module{}, Run{}, Function{}, Path{}} {
		typ := reflect.TypeOf(v)
		for i := 0; i < typ.NumField(); i++ {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if !bytes.Contains(doc, []byte("`"+name+"`")) {
				t.Errorf("docs/profile-format.md does not describe %s.%s (`%s`)", typ.Name(), typ.Field(i).Name, name)
			}
		}
	}
}
