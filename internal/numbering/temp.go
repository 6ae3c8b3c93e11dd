package numbering

import "sync"

// Temporary arrays of one DAG's steps (marks, positions, per-edge indices)
// come from pools and go back when the step ends, zeroed on the way out of
// the pool: a fresh array read before it is written costs the kernel two
// faults per page, the second one a TLB shootdown across cores, and an
// instrumenter takes a fresh one for every function.
var (
	boolTemps  = sync.Pool{New: func() any { return new([]bool) }}
	int32Temps = sync.Pool{New: func() any { return new([]int32) }}
)

// tempBools returns n false flags from the pool; put them back with
// boolTemps.Put(p) once no longer used.
func tempBools(n int) (*[]bool, []bool) {
	p := boolTemps.Get().(*[]bool)
	if cap(*p) < n {
		*p = make([]bool, n)
	}
	s := (*p)[:n]
	clear(s)
	return p, s
}

// tempInt32s returns n zeros from the pool; put them back with
// int32Temps.Put(p) once no longer used.
func tempInt32s(n int) (*[]int32, []int32) {
	p := int32Temps.Get().(*[]int32)
	if cap(*p) < n {
		*p = make([]int32, n)
	}
	s := (*p)[:n]
	clear(s)
	return p, s
}
