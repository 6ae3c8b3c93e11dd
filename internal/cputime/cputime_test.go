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

// TestThreadIsOwn checks that a thread's CPU time grows with its own work
// and not with another thread's: the locked goroutine sleeps while
// another spins for 50 ms of CPU, then spins itself.
func TestThreadIsOwn(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("measured on Linux only")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := Thread()
	if start <= 0 {
		t.Fatalf("thread CPU time %v", start)
	}
	done := make(chan time.Duration)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		s := Thread()
		deadline := time.Now().Add(20 * time.Second)
		for Thread()-s < 50*time.Millisecond && time.Now().Before(deadline) {
		}
		done <- Thread() - s
	}()
	other := <-done
	if other < 50*time.Millisecond {
		t.Fatalf("20 s of spinning added %v of CPU time to the spinning thread", other)
	}
	if own := Thread() - start; own > other/2 {
		t.Errorf("the waiting thread used %v while the other spun for %v", own, other)
	}
	last := Thread()
	deadline := time.Now().Add(20 * time.Second)
	for Thread()-last < 10*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("20 s of spinning added %v of CPU time to the spinning thread", Thread()-last)
		}
	}
}
