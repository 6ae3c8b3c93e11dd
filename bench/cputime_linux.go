package bench

import (
	"syscall"
	"time"
)

// processCPU is the CPU time of the whole process: OSP's sampling worker
// runs on other threads than the program.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
