//go:build !linux

// Package cputime reads the CPU time the whole process has used, which
// benchmarks compare beside wall-clock time: OSP's sampling worker runs on
// other threads than the program, and its work shows only there.
package cputime

import "time"

// Process is not measured here: it returns 0, and ratios of it are left
// out.
func Process() time.Duration { return 0 }
