// Package heapstart lets the heap grow to a given size before the first
// garbage collection, then gives the collector its settings back.
//
// Code that sets the collector's settings itself (GOGC or the memory
// limit) calls End first: a start's settings come back at the first
// collection, from a cleanup that runs on a goroutine of its own, and
// would otherwise overwrite settings made after the collection began.
package heapstart

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

var (
	mu      sync.Mutex
	pending bool
	gen     int // counts the starts, so that an old cleanup ends none after it
	percent int
	limit   int64
)

// Start lets the heap grow to start bytes before the first collection:
// GOGC off under a memory limit of start (no higher than the limit set),
// until a collection finishes or End is called; then the settings go
// back. It changes nothing, and returns false, when GOGC is set, when a
// start is pending, or when start is not above the heap's current goal.
func Start(start int64) bool {
	if os.Getenv("GOGC") != "" {
		return false
	}
	mu.Lock()
	defer mu.Unlock()
	if pending {
		return false
	}
	old := debug.SetMemoryLimit(-1)
	start = min(start, old)
	if start <= heapGoal() {
		return false
	}
	pending, limit = true, old
	gen++
	percent = debug.SetGCPercent(-1)
	debug.SetMemoryLimit(start)
	// The sentinel is unreachable at once, so the first collection that
	// finishes runs its cleanup: then the settings go back.
	sentinel := new([16]byte)
	runtime.AddCleanup(sentinel, end, gen)
	return true
}

// End gives the collector its settings from before the pending start, if
// one is pending. Code that changes the settings calls it first.
func End() {
	mu.Lock()
	defer mu.Unlock()
	if pending {
		endLocked()
	}
}

// end is the cleanup of start g: it ends g if it is still pending.
func end(g int) {
	mu.Lock()
	defer mu.Unlock()
	if pending && gen == g {
		endLocked()
	}
}

func endLocked() {
	debug.SetGCPercent(percent)
	debug.SetMemoryLimit(limit)
	pending = false
}

// Pending reports whether a start's settings are not back yet.
func Pending() bool {
	mu.Lock()
	defer mu.Unlock()
	return pending
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
