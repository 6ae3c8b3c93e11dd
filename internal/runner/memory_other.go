//go:build !linux

package runner

func mapMemory(max uint64) ([]byte, bool) { return nil, false }

func unmapMemory(b []byte) {}
