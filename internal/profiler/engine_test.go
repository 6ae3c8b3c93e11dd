package profiler

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/profile"
)

// TestNodeEngineEqualsWazero: the copies run under node (EngineNode)
// print what they print under wazero and give the same profile, path for
// path and count for count, for SBL and for P3's copies (calls and loop
// iterations shared out among them), on the C programs. (Go's runtime
// asks WASI for more than node's host gives as wazero does, so a Go
// program's paths may differ between the two.)
func TestNodeEngineEqualsWazero(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	for _, p := range testprogs.CRuns(t) {
		t.Run(p.Name, func(t *testing.T) {
			orig := readModule(t, p)
			for _, st := range []struct {
				s profile.Strategy
				k int
			}{{profile.SBL, 1}, {profile.P3, 2}} {
				profiles := map[Engine]*profile.Profile{}
				outs := map[Engine]string{}
				for _, e := range []Engine{EngineWazero, EngineNode} {
					var out bytes.Buffer
					pr, err := Profile(context.Background(), orig, Options{ModulePath: p.Path, Strategy: st.s, Copies: st.k,
						Run: p.Config(t, &out), Engine: e})
					if err != nil {
						t.Fatalf("%s k=%d under %s: %v", st.s, st.k, e, err)
					}
					profiles[e], outs[e] = pr, out.String()
				}
				if outs[EngineNode] != outs[EngineWazero] {
					t.Fatalf("%s k=%d: node printed %d bytes, wazero %d", st.s, st.k, len(outs[EngineNode]), len(outs[EngineWazero]))
				}
				a := &profile.Profile{Functions: profiles[EngineWazero].Functions}
				b := &profile.Profile{Functions: profiles[EngineNode].Functions}
				if ok, diff := a.Equal(b); !ok {
					t.Fatalf("%s k=%d: node's profile differs from wazero's: %s", st.s, st.k, diff)
				}
				if len(b.Functions) == 0 || b.Functions[0].Status == "" {
					t.Fatalf("%s k=%d: no functions", st.s, st.k)
				}
			}
		})
	}
}

// TestNodeRenumberAsWazero: a program that renumbers a file onto stdout
// (as yowasp's yosys does to capture ABC's output) is refused under node
// as under wazero, so it prints and counts alike; node's own WASI would
// renumber, and the program would take another path and exit 3.
func TestNodeRenumberAsWazero(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	path := filepath.Join(testprogs.ModuleRoot(t), "testdata", "renumber", "renumber.wasm")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	profiles := map[Engine]*profile.Profile{}
	outs := map[Engine]string{}
	for _, e := range []Engine{EngineWazero, EngineNode} {
		var out, errs bytes.Buffer
		cfg := runner.Config{Stdout: &out, Stderr: &errs, Dirs: []runner.Mount{{HostDir: t.TempDir(), GuestPath: "/out"}}}
		p, err := Profile(context.Background(), orig, Options{ModulePath: path, Strategy: profile.P3, Copies: 2, Run: cfg, Engine: e})
		if err != nil || p.ExitCode != 0 {
			t.Fatalf("under %s: exit %d, %v\n%s", e, p.ExitCode, err, errs.String())
		}
		profiles[e], outs[e] = p, out.String()
	}
	if want := "refused with 58, sum 4950\n"; outs[EngineWazero] != want || outs[EngineNode] != want {
		t.Fatalf("wazero printed %q, node %q; want %q", outs[EngineWazero], outs[EngineNode], want)
	}
	a := &profile.Profile{Functions: profiles[EngineWazero].Functions}
	b := &profile.Profile{Functions: profiles[EngineNode].Functions}
	if ok, diff := a.Equal(b); !ok {
		t.Fatalf("node's profile differs from wazero's: %s", diff)
	}
}
