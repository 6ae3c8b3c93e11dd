package profiler

import (
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
