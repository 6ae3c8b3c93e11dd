// Package parallel runs the independent steps of a loop on several
// goroutines: the functions of a module are planned, estimated and
// instrumented one by one, and each needs nothing of the others.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls f(0) .. f(n-1) on up to workers goroutines (at least one),
// each taking the next index when done with one, so that a few long
// calls do not hold up the rest. It returns the error of the lowest
// index that failed, as a loop that stops at the first error would,
// though every index runs.
func For(n, workers int, f func(int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(max(workers, 1), n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				errs[i] = f(i)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Each calls f(0) .. f(n-1) on GOMAXPROCS goroutines.
func Each(n int, f func(int)) {
	For(n, runtime.GOMAXPROCS(0), func(i int) error {
		f(i)
		return nil
	})
}
