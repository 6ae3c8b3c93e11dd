// Package tempfiles makes the temporary files and directories that pathprof
// writes on its way to a result, and removes what is left of them when
// pathprof exits before the result is done (Exit): a stop leaves nothing
// half-written behind, in the output's directory or in the temporary one.
package tempfiles

import (
	"os"
	"sync"
)

var (
	mu    sync.Mutex
	paths = map[string]bool{}
)

// CreateTemp is os.CreateTemp, the file removed by Exit until Forget.
func CreateTemp(dir, pattern string) (*os.File, error) {
	mu.Lock()
	defer mu.Unlock()
	f, err := os.CreateTemp(dir, pattern)
	if err == nil {
		paths[f.Name()] = true
	}
	return f, err
}

// MkdirTemp is os.MkdirTemp, the directory removed by Exit until
// RemoveAll or Forget.
func MkdirTemp(dir, pattern string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	d, err := os.MkdirTemp(dir, pattern)
	if err == nil {
		paths[d] = true
	}
	return d, err
}

// Forget leaves path to its maker: it has been renamed into place or
// removed.
func Forget(path string) {
	mu.Lock()
	defer mu.Unlock()
	delete(paths, path)
}

// RemoveAll removes path and everything under it, and forgets it.
func RemoveAll(path string) error {
	mu.Lock()
	defer mu.Unlock()
	delete(paths, path)
	return os.RemoveAll(path)
}

// Exit removes every file and directory made here and not forgotten, and
// exits with code. Nothing is made here once it has begun: a maker that
// comes after waits until the process is gone.
func Exit(code int) {
	mu.Lock()
	for p := range paths {
		os.RemoveAll(p)
	}
	os.Exit(code)
}
