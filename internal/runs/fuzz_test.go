package runs

import (
	"strings"
	"testing"
)

// FuzzParse reads arbitrary runs files: an error or runs with labels,
// all different, and environment entries of the form K=V.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"runs": [{"label": "a", "args": ["-n", "3"], "stdin": "in.txt", "env": ["K=V"], "mounts": [{"host": "d", "guest": "/d", "read_only": true}], "timeout": "90s"}]}`))
	f.Add([]byte(`{"runs": [{}, {"label": "run 1"}]}`))
	f.Add([]byte(`{"runs": [{"timeout": "-1s"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		specs, err := Parse(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, s := range specs {
			if s.Label == "" || seen[s.Label] || s.Timeout < 0 {
				t.Fatalf("run %+v", s)
			}
			seen[s.Label] = true
			for _, e := range s.Env {
				if !strings.Contains(e, "=") {
					t.Fatalf("env %q", e)
				}
			}
		}
	})
}
