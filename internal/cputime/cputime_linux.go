// Package cputime reads the CPU time the whole process, or one of its
// threads, has used, which benchmarks compare beside wall-clock time:
// OSP's sampling worker runs on other threads than the program, and its
// work shows only in the process's; a thread's is what the program run on
// it cost, whatever else the machine runs.
package cputime

import (
	"syscall"
	"time"
)

// Process returns the user and system CPU time of the process so far.
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
