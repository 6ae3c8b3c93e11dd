// Package atomicfile writes the files pathprof makes (profiles, parts,
// manifests, copies, reports) so that a failure never leaves a half-written
// file or clobbers the one that was there: the data goes to a temporary
// file in the same directory, which is renamed over the target only once
// it is complete and on disk. It also checks, before a long run, that the target can be
// written at all.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/pathprof/pathprof/internal/tempfiles"
)

// WriteFile writes data to path atomically, with permissions perm.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write calls write with a buffered writer to a temporary file beside path
// and renames the file to path once write and every step after it have
// succeeded; otherwise the temporary file is removed and path is as it
// was. Errors name path.
func Write(path string, perm os.FileMode, write func(io.Writer) error) (err error) {
	f, err := createTemp(path)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			tempfiles.RemoveAll(f.Name())
			err = fmt.Errorf("%s: %w", path, err)
		}
	}()
	bw := bufio.NewWriter(f)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	// CreateTemp makes the file private; outputs are for everyone to
	// read, as os.WriteFile would have made them.
	if err = f.Chmod(perm); err != nil {
		return err
	}
	// On disk before the rename: a machine that goes down then leaves
	// the old file or the new one, never one renamed but not written.
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	tempfiles.Forget(f.Name())
	return syncDir(filepath.Dir(path))
}

// syncDir puts a directory's entries on disk, so that a rename survives
// a machine that goes down right after it. Filesystems that cannot sync a
// directory say so with EINVAL; the rename then stands as it is.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}

// CheckWritable checks that a file can be written at path, by creating
// and removing a temporary file beside it, so that a command finds a typo
// in its output path before a long run rather than after.
func CheckWritable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("cannot write %s: it is a directory", path)
	}
	f, err := createTemp(path)
	if err != nil {
		return err
	}
	f.Close()
	return tempfiles.RemoveAll(f.Name())
}

// createTemp creates the temporary file for path. Its errors say the
// target and why, not the temporary name.
func createTemp(path string) (*os.File, error) {
	f, err := tempfiles.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("cannot write %s: directory %s does not exist", path, filepath.Dir(path))
		}
		return nil, fmt.Errorf("cannot write %s: %w", path, err)
	}
	return f, nil
}
