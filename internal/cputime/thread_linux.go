package cputime

import (
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTime is the kernel's CLOCK_THREAD_CPUTIME_ID.
const clockThreadCPUTime = 3

// Thread returns the CPU time, user and system, that the calling OS
// thread has used so far, or 0 if the kernel does not say. Only
// differences are meaningful, and only between two calls on the same
// thread: the caller keeps its goroutine there (runtime.LockOSThread).
//
// Unlike wall time it does not grow while the thread waits for a CPU
// that other processes hold, which is what a benchmark on a shared
// machine needs.
func Thread() time.Duration {
	var ts syscall.Timespec
	_, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	if e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
