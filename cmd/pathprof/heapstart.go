package main

import (
	"sync"

	"github.com/pathprof/pathprof/internal/heapstart"
)

// heapPerModuleByte is how much heap, per byte of the module a command
// reads, may grow before the first collection. Instrumenting a module
// holds its graphs, DAGs and numberings until the copies are written: a
// heap many times the module's size and live almost to the end, which
// collections at every doubling from a few megabytes (GOGC=100) mark again
// and again to free little. The start is twice that live heap, where
// GOGC=100 ends anyway, so instrumenting's peak stays where it was
// (docs/RESULTS.md, "Instrumentation time: the collector's start"). A
// command that builds one copy (exec) holds less, and its peak rises to
// about the start: exec of gofmt's copy (4.9 MB) 242–244 MB against
// 201–221 MB with GOGC=100, in 2.0–2.5 s of wall against 3.1–3.4 s.
const heapPerModuleByte = 48

var (
	startHeapOnce sync.Once
	heapStart     = heapstart.Start // tests see the starts asked for
)

// startHeap lets the heap grow to heapPerModuleByte times moduleSize
// before the first collection, then leaves the collector to its usual pace
// (GOGC=100) and the memory limit to setMemoryLimit's or GOMEMLIMIT's,
// which also bounds the start (heapstart.Start). Nothing changes when GOGC
// is set, or when the start is not above the heap's current goal. Only
// the first call counts.
func startHeap(moduleSize int) {
	startHeapOnce.Do(func() { heapStart(heapPerModuleByte * int64(moduleSize)) })
}
