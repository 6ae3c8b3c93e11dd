package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/osp"
	"github.com/pathprof/pathprof/internal/testprogs"
)

func TestOSPCommand(t *testing.T) {
	p := testprogs.CProgramByName(t, "calc")
	dir := t.TempDir()
	out := filepath.Join(dir, "calc-osp.json")
	code, stdout, stderr := runCmd("osp", "--memory", "32K", "--seed", "5", "--top", "2", "-o", out, "--stdin", p.Stdin, p.Wasm)
	if code != int(p.WantExitCode) || stdout != p.WantStdout {
		t.Fatalf("exit %d, stdout differs: %v\n%s", code, stdout != p.WantStdout, stderr)
	}
	if !strings.Contains(stderr, "pathprof: wrote "+out) || !strings.Contains(stderr, "length 2:") || !strings.Contains(stderr, "calc.c:") {
		t.Errorf("stderr:\n%s", stderr)
	}
	prof, err := osp.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if prof.Module.Path != p.Wasm || prof.Memory.Bound != 32<<10 || prof.Memory.HotListBytes > 32<<10 || prof.Sampling.Seed != 5 || len(prof.Subpaths) == 0 {
		t.Errorf("profile: module %q, memory %+v, seed %d, %d subpaths", prof.Module.Path, prof.Memory, prof.Sampling.Seed, len(prof.Subpaths))
	}

	if !prof.Sampling.Compact || prof.Sampling.Concise || !prof.Sampling.ByLength[0].Counting {
		t.Errorf("the profile says compact %v, concise %v, counting %v by default",
			prof.Sampling.Compact, prof.Sampling.Concise, prof.Sampling.ByLength[0].Counting)
	}
	plain := filepath.Join(dir, "calc-plain.json")
	if code, stdout, stderr := runCmd("osp", "--memory", "32K", "--compact=false", "-q", "-o", plain, "--stdin", p.Stdin, p.Wasm); code != int(p.WantExitCode) || stdout != p.WantStdout {
		t.Fatalf("--compact=false: exit %d, stdout differs: %v\n%s", code, stdout != p.WantStdout, stderr)
	}
	if pp, err := osp.ReadFile(plain); err != nil {
		t.Error(err)
	} else if pp.Sampling.Compact || pp.Memory.HotListBytes > 32<<10 || len(pp.Subpaths) == 0 {
		t.Errorf("--compact=false: compact %v, %d bytes, %d subpaths", pp.Sampling.Compact, pp.Memory.HotListBytes, len(pp.Subpaths))
	}
	// --concise: the same samples in concise samples, the lengths the
	// bound thinned estimated from one offer in τ.
	concise := filepath.Join(dir, "calc-concise.json")
	if code, stdout, stderr := runCmd("osp", "--memory", "32K", "--seed", "5", "--concise", "-q", "-o", concise, "--stdin", p.Stdin, p.Wasm); code != int(p.WantExitCode) || stdout != p.WantStdout {
		t.Fatalf("--concise: exit %d, stdout differs: %v\n%s", code, stdout != p.WantStdout, stderr)
	}
	if cp, err := osp.ReadFile(concise); err != nil {
		t.Error(err)
	} else {
		thinned := false
		for _, l := range cp.Sampling.ByLength {
			thinned = thinned || l.Tau > 1
			if l.Counting {
				t.Errorf("--concise: length %d is a counting sample", l.Length)
			}
		}
		if !cp.Sampling.Concise || cp.Sampling.Samples != prof.Sampling.Samples || !thinned || cp.Memory.HotListBytes > 32<<10 {
			t.Errorf("--concise: concise %v, %d samples (want %d), thinned %v, %d bytes", cp.Sampling.Concise, cp.Sampling.Samples, prof.Sampling.Samples, thinned, cp.Memory.HotListBytes)
		}
	}

	if code, stdout, _ := runCmd("osp", "--show", concise, "--top", "1"); code != 0 || !strings.Contains(stdout, "hot list: concise samples,") {
		t.Errorf("--show of a concise profile: exit %d\n%s", code, stdout)
	}
	code, stdout, stderr = runCmd("osp", "--show", out, "--top", "1")
	if code != 0 || !strings.Contains(stdout, "hot list: counting samples,") || !strings.Contains(stdout, "length 64:") || !strings.Contains(stdout, "calc.c:") || strings.Count(stdout, "  #1 ") != 6 || strings.Contains(stdout, "  #2 ") {
		t.Errorf("--show: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// A module moved with its profile is found next to it; another
	// module is refused.
	moved := filepath.Join(dir, "moved")
	if err := os.MkdirAll(moved, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(moved, "calc.wasm"), b, 0o644)
	prof.Module.Path = "calc.wasm"
	osp.WriteFile(filepath.Join(moved, "p.json"), prof)
	code, stdout, stderr = runCmd("osp", "--show", filepath.Join(moved, "p.json"))
	if code != 0 || !strings.Contains(stdout, "calc.c:") || stderr != "" {
		t.Errorf("--show of a moved profile: exit %d\n%s\n%s", code, stdout, stderr)
	}
	os.WriteFile(filepath.Join(dir, "other.wasm"), append(b, 0), 0o644)
	code, _, stderr = runCmd("osp", "--show", out, "--module", filepath.Join(dir, "other.wasm"))
	if code != 1 || !strings.Contains(stderr, "not the module profiled") {
		t.Errorf("--module with another module: exit %d\n%s", code, stderr)
	}
	prof.Module.Path = "nowhere.wasm"
	osp.WriteFile(out, prof)
	code, stdout, stderr = runCmd("osp", "--show", out)
	if code != 0 || !strings.Contains(stderr, "not found") || !strings.Contains(stdout, "0x") {
		t.Errorf("--show without the module: exit %d\n%s\n%s", code, stdout, stderr)
	}

	for _, bad := range [][]string{
		{"--lengths", "2,x", p.Wasm},
		{"--lengths", "0", p.Wasm},
		{"--skip", "0.5", p.Wasm},
		{"--memory", "-3", p.Wasm},
		{},
	} {
		if code, _, _ := runCmd(append([]string{"osp"}, bad...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	if code, _, stderr := runCmd("osp", "--memory", "100", "-o", out, p.Wasm); code != 1 || !strings.Contains(stderr, "too small") {
		t.Errorf("a 100-byte bound: exit %d\n%s", code, stderr)
	}
}

func TestOSPScoreCommand(t *testing.T) {
	p := testprogs.CProgramByName(t, "grid")
	dir := t.TempDir()
	js := filepath.Join(dir, "score.json")
	code, stdout, stderr := runCmd(append([]string{"osp-score", "--skip", "100", "--lengths", "2,4,8", "--top", "3", "--unbounded", "-o", js, p.Wasm, "--"}, p.Args...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"recall@10", "recall@100", "all (count×length)", "length 8, true top 3:", "exact ",
		"\nThe same samples counted with no bound, the hot list's windows:\n", "\nThe same samples counted with no bound, every window of each sample:\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	var s struct {
		BlockEntries uint64     `json:"block_entries"`
		Score        *osp.Score `json:"score"`
		Unbounded    []struct {
			Every bool       `json:"every"`
			Score *osp.Score `json:"score"`
		} `json:"unbounded"`
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil || s.BlockEntries == 0 || len(s.Score.Lengths) != 3 || s.Score.Lengths[0].At[0].Recall < 0.5 {
		t.Fatalf("score JSON: %v\n%s", err, b)
	}
	if len(s.Unbounded) != 2 || s.Unbounded[0].Every || !s.Unbounded[1].Every || len(s.Unbounded[1].Score.Lengths) != 3 {
		t.Fatalf("score JSON, unbounded: %s", b)
	}

	// Scoring a written profile.
	prof := filepath.Join(dir, "grid.json")
	if code, _, stderr := runCmd(append([]string{"osp", "-q", "--skip", "100", "-o", prof, p.Wasm, "--"}, p.Args...)...); code != 0 {
		t.Fatalf("osp: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr = runCmd(append([]string{"osp-score", "--profile", prof, p.Wasm, "--"}, p.Args...)...)
	if code != 0 || !strings.Contains(stdout, "recall@10") || !strings.Contains(stdout, "\n                  64") {
		t.Errorf("--profile: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The unbounded counts need the samples.
	if code, _, stderr := runCmd("osp-score", "--profile", prof, "--unbounded", p.Wasm); code != 2 || !strings.Contains(stderr, "--unbounded") {
		t.Errorf("--profile with --unbounded: exit %d\n%s", code, stderr)
	}
	// Another input makes another run: refused.
	code, _, stderr = runCmd("osp-score", "--profile", prof, p.Wasm, "--", "3")
	if code != 1 || !strings.Contains(stderr, "not comparable") {
		t.Errorf("--profile with other arguments: exit %d\n%s", code, stderr)
	}
	calc := testprogs.CProgramByName(t, "calc")
	code, _, stderr = runCmd("osp-score", "--profile", prof, calc.Wasm)
	if code != 1 || !strings.Contains(stderr, "not a profile of") {
		t.Errorf("--profile of another module: exit %d\n%s", code, stderr)
	}
}
