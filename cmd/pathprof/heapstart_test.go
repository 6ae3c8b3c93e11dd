package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// gcPercent reads GOGC's current value without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestStartHeap: the collector waits for the start (GOGC off under a
// memory limit no higher than the one set) until a collection runs, then
// has its settings back; with GOGC set, or a start below the heap's goal,
// nothing changes.
func TestStartHeap(t *testing.T) {
	// A command run in this process before may have started the heap:
	// its settings come back at a collection.
	collectUntil(t, func() bool { return startsPending.Load() == 0 })
	oldLimit, oldPercent := debug.SetMemoryLimit(-1), gcPercent()
	defer func() {
		debug.SetMemoryLimit(oldLimit)
		debug.SetGCPercent(oldPercent)
	}()
	t.Setenv("GOGC", "")
	limit := int64(3 << 30)
	debug.SetMemoryLimit(limit)
	debug.SetGCPercent(150)
	for _, start := range []int64{1 << 30, 1 << 40} {
		if !startHeapAt(start) {
			t.Fatalf("start %d: not changed", start)
		}
		if got, want := debug.SetMemoryLimit(-1), min(start, limit); got != want || gcPercent() != -1 {
			t.Fatalf("start %d: limit %d and GOGC %d, want %d and off", start, got, gcPercent(), want)
		}
		collectUntil(t, func() bool { return startsPending.Load() == 0 })
		if got := debug.SetMemoryLimit(-1); got != limit || gcPercent() != 150 {
			t.Fatalf("start %d: after a collection limit %d and GOGC %d, want %d and 150", start, got, gcPercent(), limit)
		}
	}
	if startHeapAt(heapGoal() / 2) {
		t.Error("a start below the heap's goal changed the settings")
	}
	t.Setenv("GOGC", "200")
	if startHeapAt(1 << 40) {
		t.Error("with GOGC set the settings changed")
	}
	if got := debug.SetMemoryLimit(-1); got != limit || gcPercent() != 150 {
		t.Fatalf("limit %d and GOGC %d, want %d and 150", got, gcPercent(), limit)
	}
}

// collectUntil collects until done holds, for at most ten seconds.
func collectUntil(t *testing.T, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !done(); {
		if time.Now().After(deadline) {
			t.Fatal("the collector's settings did not come back")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
