package bench

import (
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
)

// resetPeak makes the process's peak resident set (VmHWM) its current
// one, after returning freed memory to the system, so that peakRSS then
// tells the peak of what follows. It reports whether the kernel allowed
// the reset.
func resetPeak() bool {
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS is the process's peak resident set in bytes, 0 if unknown.
func peakRSS() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseUint(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
