package profiler

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pathprof/pathprof/internal/history"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/profile"
)

// TestPreviousProfile: with a history store, a P3 run of a module
// profiled before is planned by that profile and says so; a run of
// another build at the same path by the functions matched by name and
// control-flow shape; one with no previous profile by the static
// estimate. Every profile equals SBL's.
func TestPreviousProfile(t *testing.T) {
	ctx := context.Background()
	store := &history.Store{Dir: t.TempDir()}
	runs := map[string]testprogs.Run{}
	for _, r := range testprogs.CRuns(t) {
		runs[r.Name] = r
	}
	path := filepath.Join(t.TempDir(), "vm.wasm")
	// profileAs profiles build name, copied to path, with strategy st.
	profileAs := func(name string, st profile.Strategy) *profile.Profile {
		t.Helper()
		r := runs[name]
		orig := readModule(t, r)
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		p, err := Profile(ctx, orig, Options{Strategy: st, Copies: 4, ModulePath: path, Run: r.Config(t, &out), History: store})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// sameAs checks that p, of build name, equals its SBL profile.
	sameAs := func(name string, p *profile.Profile) {
		t.Helper()
		var out bytes.Buffer
		r := runs[name]
		sbl, err := Profile(ctx, readModule(t, r), Options{ModulePath: path, Run: r.Config(t, &out)})
		if err != nil {
			t.Fatal(err)
		}
		if ok, diff := sbl.Equal(p); !ok {
			t.Fatalf("%s: profile differs from SBL's: %s", name, diff)
		}
	}

	first := profileAs("vm-O0", profile.P3)
	if w := first.Weights; w == nil || w.Source != profile.WeightsEstimate {
		t.Fatalf("first run planned by %v, want the estimate", w)
	}
	sameAs("vm-O0", first)
	again := profileAs("vm-O0", profile.P3)
	if w := again.Weights; w == nil || w.Source != profile.WeightsPrevious || w.SHA256 != first.Module.SHA256 || w.Ran != 0 {
		t.Fatalf("second run planned by %+v, want the previous profile of the module", w)
	}
	sameAs("vm-O0", again)
	// A new build at the same path: the libc functions it shares with
	// the earlier build match, the program's own do not all.
	next := profileAs("vm", profile.P3)
	w := next.Weights
	if w == nil || w.Source != profile.WeightsPrevious || w.SHA256 != first.Module.SHA256 || w.Matched == 0 || w.Matched >= w.Ran {
		t.Fatalf("new build planned by %+v, want part of the earlier build's profile", w)
	}
	sameAs("vm", next)
	// The earlier build's profile made way for the new build's.
	if _, err := os.Stat(filepath.Join(store.Dir, first.Module.SHA256+".json")); !os.IsNotExist(err) {
		t.Fatalf("the earlier build's profile is still kept (%v)", err)
	}
	if p, err := store.Find(next.Module.SHA256, path, nil); err != nil || p == nil || !p.Same {
		t.Fatalf("the new build's profile is not kept: %v", err)
	}
}
