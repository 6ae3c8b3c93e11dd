package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestProcessAdvances spins until the process's CPU time has grown by 10
// ms: on Linux it must, within far more wall time than that takes even
// on a loaded machine, and it must never go back.
func TestProcessAdvances(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("measured on Linux only")
	}
	start := Process()
	last := start
	deadline := time.Now().Add(20 * time.Second)
	for last-start < 10*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("20 s of spinning added %v of CPU time", last-start)
		}
		now := Process()
		if now < last {
			t.Fatalf("CPU time went back from %v to %v", last, now)
		}
		last = now
	}
}
