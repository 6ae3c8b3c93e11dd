//go:build !linux

// Package cputime reads the CPU time the whole process, or one of its
// threads, has used, which benchmarks compare beside wall-clock time:
// OSP's sampling worker runs on other threads than the program, and its
// work shows only in the process's; a thread's is what the program run on
// it cost, whatever else the machine runs.
package cputime

import "time"

// Process is not measured here: it returns 0, and ratios of it are left
// out.
func Process() time.Duration { return 0 }

// Thread is not measured here: it returns 0, and ratios of it are left
// out.
func Thread() time.Duration { return 0 }
