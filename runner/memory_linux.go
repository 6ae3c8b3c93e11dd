package runner

import "syscall"

// mapMemory maps max bytes, private and without swap reservation, so that
// untouched pages cost nothing.
func mapMemory(max uint64) ([]byte, bool) {
	if max == 0 || max > 1<<32 || uint64(int(max)) != max {
		return nil, false
	}
	b, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	return b, err == nil
}

func unmapMemory(b []byte) { syscall.Munmap(b) }
