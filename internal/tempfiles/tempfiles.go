// Package tempfiles makes the temporary files and directories that pathprof
// writes on its way to a result, and removes what is left of them when
// pathprof exits before the result is done (Exit): a stop leaves nothing
// half-written behind, in the output's directory or in the temporary one.
// The commands it runs for pathprof (Run), which may write there too, are
// stopped first.
package tempfiles

import (
	"os"
	"os/exec"
	"sync"
	"time"
)

var (
	mu       sync.Mutex
	paths    = map[string]bool{}
	children = map[*exec.Cmd]chan struct{}{}
)

// childGrace is how long Exit waits for a child to stop at SIGINT (the go
// command then stops its own children and removes its work directory)
// before killing it.
const childGrace = 10 * time.Second

// Run runs cmd (cmd.Run) so that Exit stops it, and waits for it to end,
// before it removes anything.
func Run(cmd *exec.Cmd) error {
	mu.Lock()
	if err := cmd.Start(); err != nil {
		mu.Unlock()
		return err
	}
	done := make(chan struct{})
	children[cmd] = done
	mu.Unlock()
	err := cmd.Wait()
	close(done)
	mu.Lock()
	delete(children, cmd)
	mu.Unlock()
	return err
}

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

// Exit stops the commands running under Run, then removes every file and
// directory made here and not forgotten, and exits with code. Nothing is
// made or started here once it has begun: a maker that comes after waits
// until the process is gone.
func Exit(code int) {
	mu.Lock()
	for cmd, done := range children {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(childGrace):
			cmd.Process.Kill()
			<-done
		}
	}
	for p := range paths {
		os.RemoveAll(p)
	}
	os.Exit(code)
}
