// Package gobuild runs the go command for GOOS=wasip1 GOARCH=wasm: the one
// builder behind the bench suite's Go programs and the test programs.
package gobuild

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/pathprof/pathprof/internal/tempfiles"
)

// Build builds the package pkg for wasip1 into the file out, or with test
// its test binary (go test -c); flags are extra build flags, such as
// "-trimpath". goTool is the go command and dir the directory it runs in.
// The go command writes a private file that is renamed into place only when
// complete, so concurrent builds never see a partial module, the last of
// several identical builds simply wins, and an interrupted build leaves
// nothing behind.
func Build(goTool, dir, out, pkg string, test bool, flags ...string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp, err := tempfiles.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+"-*")
	if err != nil {
		return err
	}
	tmp.Close()
	defer tempfiles.RemoveAll(tmp.Name())
	args := []string{"test", "-c"}
	if !test {
		// Without this a build inside a Git work tree embeds the commit
		// and dirty flag, so the module would change with them.
		args = []string{"build", "-buildvcs=false"}
	}
	args = append(args, "-o", tmp.Name())
	args = append(args, flags...)
	args = append(args, pkg)
	if _, err := Cmd(goTool, dir, args...); err != nil {
		return err
	}
	if fi, err := os.Stat(tmp.Name()); err != nil || fi.Size() == 0 {
		// go test -c succeeds without output for a package with no tests.
		return fmt.Errorf("go %s produced no binary", strings.Join(args, " "))
	}
	return os.Rename(tmp.Name(), out)
}

// Cmd runs the go command goTool with args in dir for wasip1 and returns
// its standard output; an error carries its standard error.
func Cmd(goTool, dir string, args ...string) ([]byte, error) {
	// The go command's work directory goes in one made here, removed
	// whether or not the go command could remove it (it leaves it at a
	// stop).
	work, err := tempfiles.MkdirTemp(os.Getenv("GOTMPDIR"), "pathprof-go-")
	if err != nil {
		return nil, err
	}
	defer tempfiles.RemoveAll(work)
	cmd := exec.Command(goTool, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOTMPDIR="+work)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A stop (tempfiles.Exit) ends the command before removing the
	// private file it writes.
	if err := tempfiles.Run(cmd); err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.Bytes(), nil
}
