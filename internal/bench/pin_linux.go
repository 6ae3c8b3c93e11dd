package bench

import (
	"math/bits"
	"runtime"
	"syscall"
	"unsafe"
)

// cpuSet is the kernel's cpu_set_t (1,024 CPUs).
type cpuSet [16]uint64

func affinity(op uintptr, s *cpuSet) bool {
	_, _, e := syscall.RawSyscall(op, 0, unsafe.Sizeof(*s), uintptr(unsafe.Pointer(s)))
	return e == 0
}

// pinThread keeps the calling goroutine on its thread and the thread on
// one CPU, the highest it may use, until restore is called; cpu is -1
// when the thread could not be pinned.
//
// The machines the benchmark runs on have CPUs of unequal and changing
// speed (shared hosts): a program timed on one CPU and its instrumented
// build on another measured the CPUs, not the builds. Pinned, both builds
// run where the other ran.
func pinThread() (cpu int, restore func()) {
	runtime.LockOSThread()
	var old cpuSet
	if !affinity(syscall.SYS_SCHED_GETAFFINITY, &old) {
		runtime.UnlockOSThread()
		return -1, func() {}
	}
	cpu = -1
	for i := len(old) - 1; i >= 0 && cpu < 0; i-- {
		if old[i] != 0 {
			cpu = 64*i + 63 - bits.LeadingZeros64(old[i])
		}
	}
	var one cpuSet
	if cpu >= 0 {
		one[cpu/64] = 1 << (cpu % 64)
	}
	if cpu < 0 || !affinity(syscall.SYS_SCHED_SETAFFINITY, &one) {
		runtime.UnlockOSThread()
		return -1, func() {}
	}
	return cpu, func() {
		affinity(syscall.SYS_SCHED_SETAFFINITY, &old)
		runtime.UnlockOSThread()
	}
}
