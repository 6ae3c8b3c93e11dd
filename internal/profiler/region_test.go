package profiler

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/tracer"
	"github.com/pathprof/pathprof/profile"
)

// TestRegions profiles testdata/hosts/markers.wasm, whose markers and
// helpers are stubbed, limited to the region between its markers and to
// the region of its function measured, with every strategy: each profile
// equals the tracer's with the same region, path for path and in the
// region's openings and cuts, and the program prints what it prints
// unprofiled.
func TestRegions(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(testprogs.ModuleRoot(t), "testdata", "hosts", "markers.wasm")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stubs := []runner.Stub{{Module: "bench", Name: "rounds", Result: "7"}, {Module: "bench", Name: "seed", Result: "-12345"}}
	var plain bytes.Buffer
	if _, err := runner.Run(ctx, orig, runner.Config{Stubs: stubs, StubMissing: true, Stdout: &plain}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(plain.Bytes(), []byte("rounds 7 ")) {
		t.Fatalf("the stub's result did not reach the program: %s", plain.String())
	}
	markers, err := ParseMarkers("bench.start,bench.stop")
	if err != nil {
		t.Fatal(err)
	}
	wasiMarkers, err := ParseMarkers("wasi_snapshot_preview1.fd_fdstat_get,wasi_snapshot_preview1.fd_write")
	if err != nil {
		t.Fatal(err)
	}
	fn, err := FuncRegion(orig, "measured")
	if err != nil {
		t.Fatal(err)
	}
	whole, err := Profile(ctx, orig, Options{Run: runner.Config{Stubs: stubs, StubMissing: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		name   string
		region *Region
		traced tracer.Region
	}{
		{"markers", markers, tracer.Region{Start: [2]string{"bench", "start"}, End: [2]string{"bench", "stop"}}},
		{"func", fn, tracer.Region{Func: fn.FuncIndex, ByFunc: true}},
		// Markers WASI provides: from the first question about standard
		// output to the first write.
		{"wasi", wasiMarkers, tracer.Region{Start: [2]string{"wasi_snapshot_preview1", "fd_fdstat_get"}, End: [2]string{"wasi_snapshot_preview1", "fd_write"}}},
	} {
		tr, err := tracer.Instrument(orig)
		if err != nil {
			t.Fatal(err)
		}
		tr.Region = &r.traced
		res, _, err := tr.Run(ctx, runner.Config{Stubs: r.region.withMarkers(stubs), StubMissing: true})
		if err != nil {
			t.Fatal(err)
		}
		want := res.Profile()
		if want.Region.Opened == 0 || len(want.Region.Cut) == 0 || reflect.DeepEqual(tracer.Counts(want), tracer.Counts(whole)) {
			t.Fatalf("%s: the region cuts nothing or counts the whole run: %+v", r.name, want.Region)
		}
		for _, st := range []struct {
			s        profile.Strategy
			k        int
			separate bool // counters in the counter module
		}{{profile.SBL, 1, false}, {profile.SBL, 1, true}, {profile.PBL, 2, false}, {profile.P3, 2, false}, {profile.P3, 4, true}} {
			label := fmt.Sprintf("%s %s k=%d counter module %v", r.name, st.s, st.k, st.separate)
			var out bytes.Buffer
			p, err := Profile(ctx, orig, Options{Strategy: st.s, Copies: st.k, Jobs: 2, Region: r.region,
				Instrument: instrument.Options{SeparateCounters: st.separate},
				Run:        runner.Config{Stubs: stubs, StubMissing: true, Stdout: &out}})
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			if out.String() != plain.String() {
				t.Errorf("%s: output differs from the unprofiled run's", label)
			}
			if diff := diffCounts(tracer.Counts(p), res.Paths); diff != "" {
				t.Errorf("%s: the profile differs from the tracer's:\n%s", label, diff)
			}
			checkRegionRecord(t, label, p.Region, want.Region)
		}
	}
}

// TestReactor profiles testdata/hosts/reactor.wasm, a reactor, through
// calls of its exports after _initialize, with every strategy: each
// profile equals the tracer's of the same calls, and records them with
// what they returned.
func TestReactor(t *testing.T) {
	ctx := context.Background()
	orig, err := os.ReadFile(filepath.Join(testprogs.ModuleRoot(t), "testdata", "hosts", "reactor.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	var calls []runner.Call
	for _, s := range []string{"fib:15", "lookup_sum:300,-3", "poly:0.5,2.25", "hello"} {
		c, err := runner.ParseCall(s)
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
	}
	var want bytes.Buffer
	tr, _, err := tracer.Run(ctx, orig, runner.Config{Invoke: calls, Stdout: &want})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(want.Bytes(), []byte("table[3] = 2")) {
		t.Fatalf("_initialize did not run first: %q", want.String())
	}
	for _, st := range []struct {
		s profile.Strategy
		k int
	}{{profile.SBL, 1}, {profile.PBL, 2}, {profile.P3, 3}} {
		label := fmt.Sprintf("%s k=%d", st.s, st.k)
		var out bytes.Buffer
		p, err := Profile(ctx, orig, Options{Strategy: st.s, Copies: st.k, Jobs: 2, Run: runner.Config{Invoke: calls, Stdout: &out}})
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if out.String() != want.String() {
			t.Errorf("%s: output %q, the tracer's run %q", label, out.String(), want.String())
		}
		if diff := diffCounts(tracer.Counts(p), tr.Paths); diff != "" {
			t.Errorf("%s: the profile differs from the tracer's:\n%s", label, diff)
		}
		inv := p.Inputs[0].Invoked
		if len(inv) != 4 || !reflect.DeepEqual(inv[0], profile.Invocation{Call: "fib(15)", Results: []string{"610"}}) || inv[2].Call != "poly(0.5, 2.25)" || len(inv[3].Results) != 0 {
			t.Errorf("%s: invocations recorded: %+v", label, inv)
		}
	}
}

// checkRegionRecord compares a profile's region record with the tracer's:
// the same openings and closings, and the same cuts, or with
// CutPartial (a boundary under more frames than the runtime shows, which
// markers.c's deep recursion makes) no more than the tracer's.
func checkRegionRecord(t *testing.T, label string, got, want *profile.Region) {
	t.Helper()
	if got.Opened != want.Opened || got.Closed != want.Closed {
		t.Errorf("%s: region opened %d, closed %d; the tracer's %d, %d", label, got.Opened, got.Closed, want.Opened, want.Closed)
	}
	if !got.CutPartial {
		if !reflect.DeepEqual(got.Cut, want.Cut) {
			t.Errorf("%s: cuts %+v, the tracer's %+v", label, got.Cut, want.Cut)
		}
		return
	}
	tracer := map[uint32]profile.Cut{}
	for _, c := range want.Cut {
		tracer[c.Index] = c
	}
	below := false
	for _, c := range got.Cut {
		w := tracer[c.Index]
		if c.AtOpen > w.AtOpen || c.AtClose > w.AtClose {
			t.Errorf("%s: function %d: cuts %+v, more than the tracer's %+v", label, c.Index, c, w)
		}
		below = below || c.AtOpen < w.AtOpen
	}
	if !below {
		t.Errorf("%s: cut_partial, but every cut is the tracer's", label)
	}
}
