//go:build !linux

package osp

import "time"

// processCPU is 0 without getrusage.
func processCPU() time.Duration { return 0 }
