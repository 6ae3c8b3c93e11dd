package profiler

import (
	"fmt"
	"testing"

	"github.com/pathprof/pathprof/internal/runner"
)

// TestInputDigestFreshMount checks that where a fresh directory (a test's
// own /tmp) was made does not enter the input digest, so that two runs of
// the same test record the same input, while any other mount's host
// directory does.
func TestInputDigestFreshMount(t *testing.T) {
	cfg := func(host string, fresh bool) runner.Config {
		return runner.Config{Args: []string{"t.wasm", "-test.run", "^TestX$"},
			Dirs: []runner.Mount{{HostDir: "/src/pkg", GuestPath: "/src/pkg", ReadOnly: true}, {HostDir: host, GuestPath: "/tmp", Fresh: fresh}}}
	}
	if a, b := InputSHA256(cfg("/tmp/pathprof-test-tmp-1", true), nil), InputSHA256(cfg("/tmp/pathprof-test-tmp-2", true), nil); a != b {
		t.Errorf("fresh /tmp in two places: digests %s and %s", a, b)
	}
	if a, b := InputSHA256(cfg("/data/a", false), nil), InputSHA256(cfg("/data/b", false), nil); a == b {
		t.Error("two different mounted directories gave one digest")
	}
	if InputSHA256(cfg("/data/a", false), nil) == InputSHA256(cfg("/data/a", true), nil) {
		t.Error("a fresh directory and a given one gave one digest")
	}
}

// TestInputDigestReadOnly checks that a read-only mount and a read-write
// one differ in the digest, also where the guest path ends in ":ro".
func TestInputDigestReadOnly(t *testing.T) {
	digest := func(guest string, ro bool) string {
		return InputSHA256(runner.Config{Dirs: []runner.Mount{{HostDir: "/data", GuestPath: guest, ReadOnly: ro}}}, nil)
	}
	seen := map[string]string{}
	for _, m := range []struct {
		guest string
		ro    bool
	}{{"/x", false}, {"/x", true}, {"/x:ro", false}, {"/x:ro", true}, {"/x:rw", false}} {
		d := digest(m.guest, m.ro)
		what := fmt.Sprintf("%s read-only %v", m.guest, m.ro)
		if other, ok := seen[d]; ok {
			t.Errorf("%s and %s: one digest", other, what)
		}
		seen[d] = what
	}
}
