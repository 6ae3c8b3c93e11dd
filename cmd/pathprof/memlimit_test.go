package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestParseLimit(t *testing.T) {
	for s, want := range map[string]int64{"max\n": 0, "1073741824\n": 1 << 30, "": 0, "-1": 0, "9223372036854771712\n": 9223372036854771712} {
		if got := parseLimit(s); got != want {
			t.Errorf("parseLimit(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestSetMemoryLimit: without GOMEMLIMIT the soft limit is three
// quarters of the memory the process may use; with it, it is left alone.
func TestSetMemoryLimit(t *testing.T) {
	collectUntilStartEnds(t)
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	n := memoryLimit()
	if runtime.GOOS == "linux" && (n <= 0 || n > physicalMemory()) {
		t.Fatalf("memory limit %d with %d bytes of memory", n, physicalMemory())
	}
	t.Setenv("GOMEMLIMIT", "")
	setMemoryLimit()
	if got := debug.SetMemoryLimit(-1); n > 0 && got != n/4*3 {
		t.Fatalf("limit %d, want %d", got, n/4*3)
	}
	debug.SetMemoryLimit(old)
	t.Setenv("GOMEMLIMIT", "1GiB")
	setMemoryLimit()
	if got := debug.SetMemoryLimit(-1); got != old {
		t.Fatalf("with GOMEMLIMIT set the limit went from %d to %d", old, got)
	}
}
