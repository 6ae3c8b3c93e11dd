package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pathprof/pathprof/internal/heapstart"
	"github.com/pathprof/pathprof/internal/testprogs"
)

// collectUntilStartEnds collects until no heap start is pending (a command
// run in this test process may have started one), for at most ten seconds.
func collectUntilStartEnds(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); heapstart.Pending(); {
		if time.Now().After(deadline) {
			t.Fatal("the collector's settings did not come back")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHeapStartWhereCopiesAreBuilt: exec --unit starts the heap for the
// copy it builds, collect only once it merges, not while units are
// missing (nor while it waits for them), and merge of the copies' parts,
// which builds the copies again.
func TestHeapStartWhereCopiesAreBuilt(t *testing.T) {
	g := testprogs.CProgramByName(t, "grid")
	dir := t.TempDir()
	runsFile, _ := gridRuns(t, dir)
	work := filepath.Join(dir, "work")
	if code, _, errs := runCmd("instrument", "--strategy", "pbl", "--copies", "2", "--runs", runsFile, "-o", work, g.Wasm); code != 0 {
		t.Fatalf("instrument --runs: exit %d\n%s", code, errs)
	}
	orig, err := os.ReadFile(g.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	var starts []int64
	defer func(old func(int64) bool) {
		heapStart, startHeapOnce = old, sync.Once{}
	}(heapStart)
	heapStart = func(start int64) bool {
		starts = append(starts, start)
		return false
	}
	startHeapOnce = sync.Once{}
	if code, _, errs := runCmd("collect", "-o", filepath.Join(dir, "p.json"), work); code != 1 || len(starts) != 0 {
		t.Fatalf("collect with no unit run: exit %d, starts %v\n%s", code, starts, errs)
	}
	startHeapOnce = sync.Once{}
	want := []int64{heapPerModuleByte * int64(len(orig))}
	if code, _, errs := runCmd("exec", "-q", work, "--unit", "0"); code != 0 || !slices.Equal(starts, want) {
		t.Fatalf("exec --unit: exit %d, starts %v\n%s", code, starts, errs)
	}
	copies := filepath.Join(dir, "copies")
	if code, _, errs := runCmd("instrument", "--strategy", "pbl", "--copies", "2", "-o", copies, g.Wasm); code != 0 {
		t.Fatalf("instrument: exit %d\n%s", code, errs)
	}
	var parts []string
	for c := range 2 {
		part := filepath.Join(dir, fmt.Sprintf("part-%d.json", c))
		parts = append(parts, part)
		if code, _, errs := runCmd(append([]string{"exec", "-q", "-o", part, copies, fmt.Sprint(c)}, g.Args...)...); code != 0 {
			t.Fatalf("exec copy %d: exit %d\n%s", c, code, errs)
		}
	}
	starts = nil
	startHeapOnce = sync.Once{}
	if code, _, errs := runCmd(append([]string{"merge", "--dir", copies, "-o", filepath.Join(dir, "merged.json")}, parts...)...); code != 0 || !slices.Equal(starts, want) {
		t.Fatalf("merge: exit %d, starts %v\n%s", code, starts, errs)
	}
}
