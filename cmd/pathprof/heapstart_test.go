package main

import (
	"runtime"
	"testing"
	"time"

	"github.com/pathprof/pathprof/internal/heapstart"
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
