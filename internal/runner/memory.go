package runner

import (
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// Linear memories live outside the Go heap where the system allows it.
//
// wazero's default linear memory is a Go slice that memory.grow appends
// to: every growth past its capacity allocates a larger slice and copies
// the memory into it, and the allocations start garbage collections in
// the middle of the run. A collection must stop the goroutine running
// compiled WebAssembly, which it can only do when the program next calls
// out to Go, so the collector spins, signalling it, meanwhile. For a
// program that grows its memory many times (an interpreter building
// strings) that made runs vary by a factor of two and cost more system
// time than the program itself. A memory reserved whole at instantiation
// (address space only: pages are backed as they are touched) never
// moves, never copies and never allocates on the Go heap.

// memories allocates the linear memories of one run and releases them
// when the run is over. wazero frees a memory when its instance closes,
// which proc_exit does in the middle of the run, before AfterRun reads
// the memory: so Free only marks it, and release unmaps.
type memories struct {
	mu     sync.Mutex
	mapped [][]byte
}

func (ms *memories) Allocate(capBytes, maxBytes uint64) experimental.LinearMemory {
	if b, ok := mapMemory(maxBytes); ok {
		ms.mu.Lock()
		ms.mapped = append(ms.mapped, b)
		ms.mu.Unlock()
		return mappedMemory(b)
	}
	return &heapMemory{buf: make([]byte, 0, capBytes), max: maxBytes}
}

// release unmaps the run's memories: no slice of them may be used after.
func (ms *memories) release() {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for _, b := range ms.mapped {
		unmapMemory(b)
	}
	ms.mapped = nil
}

// mappedMemory is a linear memory whose whole maximum is mapped: fresh
// pages read as zero.
type mappedMemory []byte

func (m mappedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m)) {
		return nil
	}
	return m[:size:size]
}

func (m mappedMemory) Free() {}

// heapMemory is a Go slice that grows by copying, doubling its capacity,
// for where a memory cannot be mapped.
type heapMemory struct {
	buf []byte
	max uint64
}

func (m *heapMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size] // never shrinks: the bytes past len are zero
		return m.buf
	}
	c := min(max(size, 2*uint64(cap(m.buf))), m.max)
	b := make([]byte, size, c)
	copy(b, m.buf)
	m.buf = b
	return b
}

func (m *heapMemory) Free() { m.buf = nil }
