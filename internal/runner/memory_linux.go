package runner

import "syscall"

// madvHugepage is MADV_HUGEPAGE, which package syscall lacks on some
// architectures.
const madvHugepage = 14

// mapMemory maps max bytes, private and without swap reservation, so that
// untouched pages cost nothing. The mapping asks for transparent huge
// pages, as the Go heap gets them: with 4 KiB pages, the TLB misses of a
// program touching counters all over a few megabytes made a Go program's
// profiling run half again as slow.
func mapMemory(max uint64) ([]byte, bool) {
	if max == 0 || max > 1<<32 || uint64(int(max)) != max {
		return nil, false
	}
	b, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, false
	}
	syscall.Madvise(b, madvHugepage) // a hint: without it, plain pages
	return b, true
}

func unmapMemory(b []byte) { syscall.Munmap(b) }
