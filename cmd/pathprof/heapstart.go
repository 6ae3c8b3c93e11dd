package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// heapPerModuleByte is how much heap, per byte of the module a command
// reads, may grow before the first collection. Instrumenting a module
// holds its graphs, DAGs and numberings until the copies are written: a
// heap many times the module's size and live almost to the end, which
// collections at every doubling from a few megabytes (GOGC=100) mark again
// and again to free little. The start is twice that live heap, where
// GOGC=100 ends anyway, so the peak stays where it was (docs/RESULTS.md,
// "Instrumentation time: the collector's start").
const heapPerModuleByte = 48

var (
	startHeapOnce sync.Once
	// startsPending counts the starts whose settings are not back yet.
	startsPending atomic.Int32
)

// startHeap lets the heap grow to heapPerModuleByte times moduleSize
// before the first collection, then leaves the collector to its usual pace
// (GOGC=100) and the memory limit to setMemoryLimit's or GOMEMLIMIT's,
// which also bounds the start: no collection until the process's Go memory
// reaches the start (GOGC=off under a memory limit), and the settings back
// once a collection ran. Nothing changes when GOGC is set, or when the
// start is not above the heap's current goal. Only the first call counts.
func startHeap(moduleSize int) {
	startHeapOnce.Do(func() { startHeapAt(heapPerModuleByte * int64(moduleSize)) })
}

// startHeapAt is startHeap with the start in bytes; it reports whether it
// changed the settings.
func startHeapAt(start int64) bool {
	if os.Getenv("GOGC") != "" {
		return false
	}
	limit := debug.SetMemoryLimit(-1)
	start = min(start, limit)
	if start <= heapGoal() {
		return false
	}
	startsPending.Add(1)
	percent := debug.SetGCPercent(-1)
	debug.SetMemoryLimit(start)
	// The sentinel is unreachable at once, so the first collection that
	// finishes runs its cleanup: then the settings go back.
	sentinel := new([16]byte)
	runtime.AddCleanup(sentinel, func(struct{}) {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
		startsPending.Add(-1)
	}, struct{}{})
	return true
}

// heapGoal is the heap size at which the collector would next run, 0 if
// unknown.
func heapGoal() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
