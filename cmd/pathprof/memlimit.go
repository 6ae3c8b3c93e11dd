package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// setMemoryLimit gives Go a soft memory limit of three quarters of the
// memory the process may use (the machine's, or its control group's when
// lower), unless GOMEMLIMIT sets one. Planning and compiling a big
// module's copies allocate gigabytes, and by default the heap may grow to
// twice what it holds live before a collection: near the limit the
// collector runs sooner instead, so that a run whose live data fits is
// not killed for its garbage. Memory outside Go's heap (compiled code,
// the programs' linear memories) is not counted against it.
func setMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if n := memoryLimit(); n > 0 {
		debug.SetMemoryLimit(n / 4 * 3)
	}
}

// memoryLimit is the memory the process may use: the least of the
// machine's memory and the limits of control groups v2 and v1 at their
// usual places, or 0 if none is known.
func memoryLimit() int64 {
	n := physicalMemory()
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(f); err == nil {
			if m := parseLimit(string(b)); m > 0 && (n == 0 || m < n) {
				n = m
			}
		}
	}
	return n
}

// parseLimit reads a control group's memory limit: bytes, or "max" (or
// garbage) for none, 0.
func parseLimit(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
