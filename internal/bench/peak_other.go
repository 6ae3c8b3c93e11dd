//go:build !linux

package bench

func resetPeak() bool { return false }

func peakRSS() uint64 { return 0 }
