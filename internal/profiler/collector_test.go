package profiler

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/pathprof/pathprof/internal/heapstart"
)

// TestCollectorAfterHeapStart: a collector that turns the garbage
// collector off for running copies while a heap start is pending keeps it
// off until it turns it back on, and then gives back the settings from
// before the start. The collection the collector runs first ends the
// start, whose settings would otherwise come back from a cleanup over the
// collector's, the collector on while copies run.
func TestCollectorAfterHeapStart(t *testing.T) {
	gcPercent := func() int {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}
	oldLimit, oldPercent := debug.SetMemoryLimit(-1), gcPercent()
	defer func() {
		heapstart.End()
		debug.SetMemoryLimit(oldLimit)
		debug.SetGCPercent(oldPercent)
	}()
	t.Setenv("GOGC", "")
	limit := int64(3 << 30)
	debug.SetMemoryLimit(limit)
	debug.SetGCPercent(150)
	if !heapstart.Start(1 << 30) {
		t.Fatal("no heap start")
	}
	g := &collector{managed: true, alone: true}
	if !g.running() {
		t.Fatal("not running")
	}
	for range 20 { // the start's cleanup runs after one of these
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got != g.limit || gcPercent() != -1 {
		t.Fatalf("while copies run: limit %d and GOGC %d, want %d and off", got, gcPercent(), g.limit)
	}
	g.restore()
	if got := debug.SetMemoryLimit(-1); got != limit || gcPercent() != 150 {
		t.Fatalf("after the run: limit %d and GOGC %d, want %d and 150", got, gcPercent(), limit)
	}
}
