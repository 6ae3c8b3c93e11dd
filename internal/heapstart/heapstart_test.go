package heapstart

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

// keepSettings restores the collector's settings when the test ends.
func keepSettings(t *testing.T) {
	oldLimit, oldPercent := debug.SetMemoryLimit(-1), gcPercent()
	t.Cleanup(func() {
		End()
		debug.SetMemoryLimit(oldLimit)
		debug.SetGCPercent(oldPercent)
	})
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

// TestStart: the collector waits for the start (GOGC off under a memory
// limit no higher than the one set) until a collection runs, then has its
// settings back; with GOGC set, a start pending, or a start below the
// heap's goal, nothing changes.
func TestStart(t *testing.T) {
	keepSettings(t)
	t.Setenv("GOGC", "")
	limit := int64(3 << 30)
	debug.SetMemoryLimit(limit)
	debug.SetGCPercent(150)
	for _, start := range []int64{1 << 30, 1 << 40} {
		if !Start(start) {
			t.Fatalf("start %d: not changed", start)
		}
		if got, want := debug.SetMemoryLimit(-1), min(start, limit); got != want || gcPercent() != -1 {
			t.Fatalf("start %d: limit %d and GOGC %d, want %d and off", start, got, gcPercent(), want)
		}
		if Start(start / 2) {
			t.Fatalf("start %d: a second start while it is pending changed the settings", start)
		}
		collectUntil(t, func() bool { return !Pending() })
		if got := debug.SetMemoryLimit(-1); got != limit || gcPercent() != 150 {
			t.Fatalf("start %d: after a collection limit %d and GOGC %d, want %d and 150", start, got, gcPercent(), limit)
		}
	}
	if Start(heapGoal() / 2) {
		t.Error("a start below the heap's goal changed the settings")
	}
	t.Setenv("GOGC", "200")
	if Start(1 << 40) {
		t.Error("with GOGC set the settings changed")
	}
	if got := debug.SetMemoryLimit(-1); got != limit || gcPercent() != 150 {
		t.Fatalf("limit %d and GOGC %d, want %d and 150", got, gcPercent(), limit)
	}
}

// TestEndKeepsLaterSettings: End gives the settings back at once, and
// settings made after it stay when the start's collection comes, as a
// collector turned off for running copies must.
func TestEndKeepsLaterSettings(t *testing.T) {
	keepSettings(t)
	t.Setenv("GOGC", "")
	debug.SetMemoryLimit(3 << 30)
	debug.SetGCPercent(150)
	if !Start(1 << 30) {
		t.Fatal("not started")
	}
	End()
	if Pending() || gcPercent() != 150 || debug.SetMemoryLimit(-1) != 3<<30 {
		t.Fatalf("after End: pending %v, GOGC %d and limit %d, want 150 and %d", Pending(), gcPercent(), debug.SetMemoryLimit(-1), 3<<30)
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(2 << 30)
	for range 20 { // the start's cleanup runs after one of these
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got != 2<<30 || gcPercent() != -1 {
		t.Fatalf("after collections: limit %d and GOGC %d, want %d and off", got, gcPercent(), 2<<30)
	}
}
