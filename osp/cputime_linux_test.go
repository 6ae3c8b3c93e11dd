package osp

import (
	"runtime"
	"syscall"
	"time"
)

// threadCPU is the CPU time of the calling thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuTime runs f on one locked thread and returns the CPU time that
// thread spent, which other work on a busy machine disturbs less than the
// wall-clock time.
func cpuTime(f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	f()
	return threadCPU() - start
}
