package profiler

import (
	"bytes"
	"context"
	"os/exec"
	"testing"

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
