package profiler

import (
	"bytes"
	"context"
	"os"
	"testing"

	"pathprof/profile"
)

// TestStrategiesEqualSBL checks that the merged PBL and P3 profiles equal
// the SBL profile exactly, for k = 2, 4 and 8.
func TestStrategiesEqualSBL(t *testing.T) {
	ctx := context.Background()
	for _, p := range oraclePrograms(t) {
		if testing.Short() && p.name != "calc" {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			orig, err := os.ReadFile(p.path)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			sbl, err := Profile(ctx, orig, Options{ModulePath: p.path, Run: p.config(t, &want)})
			if err != nil {
				t.Fatal(err)
			}
			for _, strategy := range []string{"pbl", "p3"} {
				for _, k := range []int{2, 4, 8} {
					var got bytes.Buffer
					prof, err := Profile(ctx, orig, Options{Strategy: strategy, Copies: k, Jobs: 2, ModulePath: p.path, Run: p.config(t, &got)})
					if err != nil {
						t.Fatalf("%s k=%d: %v", strategy, k, err)
					}
					if got.String() != want.String() || prof.ExitCode != sbl.ExitCode {
						t.Fatalf("%s k=%d: output or exit code differs", strategy, k)
					}
					if ok, diff := sbl.Equal(prof); !ok {
						t.Fatalf("%s k=%d: merged profile differs from SBL: %s", strategy, k, diff)
					}
					if err := prof.Validate(); err != nil {
						t.Fatalf("%s k=%d: %v", strategy, k, err)
					}
					t.Logf("%s k=%d: %s", strategy, k, hitsLine(sbl, prof))
				}
			}
		})
	}
}

func hitsLine(sbl, p *profile.Profile) string {
	var slowest uint64
	for _, r := range p.Runs {
		slowest = max(slowest, r.ProbeHits)
	}
	return "slowest copy's hits " + pct(slowest, sbl.Runs[0].ProbeHits) + " of SBL's"
}

func pct(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	x := float64(a) * 100 / float64(b)
	return string(rune('0'+int(x)/100%10)) + string(rune('0'+int(x)/10%10)) + string(rune('0'+int(x)%10)) + "%"
}
