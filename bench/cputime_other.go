//go:build !linux

package bench

import "time"

// processCPU is not measured here: CPU ratios come out as NaN.
func processCPU() time.Duration { return 0 }
