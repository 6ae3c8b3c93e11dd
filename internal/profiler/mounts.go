package profiler

// This file copies the writable mounts for the copies of a run, each copy
// writing to its own: links as links, files streamed with their holes (or
// cloned where the file system can), after checking that they fit.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pathprof/pathprof/internal/runner"
)

// checkRoom says why n copies of the writable mounts would not fit in the
// free space of the file system holding tmp, if they would not: a copy
// takes the blocks each file has allocated (a sparse file's holes take
// none). Where the space cannot be told, it says nothing.
func checkRoom(mounts []runner.Mount, n int, tmp string) error {
	var need int64
	for _, d := range mounts {
		if d.ReadOnly {
			continue
		}
		size, err := treeSize(d.HostDir)
		if err != nil {
			return fmt.Errorf("measure %s: %w", d.HostDir, err)
		}
		need += size
	}
	free, ok := freeSpace(tmp)
	return roomError(need, n, free, ok, tmp)
}

// checkTempOutside says why the copies of the writable mounts cannot be
// made in tmp, if tmp lies inside one of them: each copy would copy the
// copies made before it, without end.
func checkTempOutside(mounts []runner.Mount, tmp string) error {
	t, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		return nil // not there: MkdirTemp says so
	}
	for _, d := range mounts {
		if d.ReadOnly {
			continue
		}
		h, err := filepath.EvalSymlinks(d.HostDir)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(h, t); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("the temporary directory %s, where each copy gets its own copy of the writable mount %s, is inside that mount: set TMPDIR to a directory outside it", tmp, d.HostDir)
		}
	}
	return nil
}

// roomError is checkRoom's verdict on copies of need bytes each, n of
// them, where free bytes are free (known if ok).
func roomError(need int64, n int, free int64, ok bool, tmp string) error {
	if !ok || need*int64(n) <= free {
		return nil
	}
	return fmt.Errorf("the copies of the writable mounts need %s (%d copies of %s) and %s has %s free: free some space, set TMPDIR to a disk with room, or profile with --strategy sbl, which copies nothing",
		mb(need*int64(n)), n, mb(need), tmp, mb(free))
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// treeSize is the bytes the regular files under dir have allocated.
func treeSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += allocated(info)
		return nil
	})
	return n, err
}

// copyTree copies the directories, regular files and symbolic links under
// src into dst; sockets, devices and pipes are left out. Links are copied
// as links, their targets as written, so that a program reads the same
// link in every copy (a relative one that leads out of the mount leads,
// from dst, somewhere else: docs/threat-model.md).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			return copyFile(p, target, info)
		}
		return nil
	})
}

// copyFile copies the regular file src to dst: a clone sharing the
// blocks until either is written where the file system can (clone), else
// its data streamed, a region at a time, the holes of a sparse file left
// holes.
func copyFile(src, dst string, info fs.FileInfo) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	if clone(out, in) {
		return nil
	}
	size := info.Size()
	for off := int64(0); off < size; {
		data, err := in.Seek(off, seekData)
		if errors.Is(err, syscall.ENXIO) {
			break // only a hole is left
		}
		if err != nil { // no SEEK_DATA here: copy the rest whole
			data = off
		}
		hole, err := in.Seek(data, seekHole)
		if err != nil {
			hole = size
		}
		if _, err := io.Copy(io.NewOffsetWriter(out, data), io.NewSectionReader(in, data, hole-data)); err != nil {
			return err
		}
		off = hole
	}
	return out.Truncate(size)
}

// whence values of lseek that find a file's data and holes (Linux, the
// BSDs and Solaris agree on them; elsewhere lseek refuses them).
const (
	seekData = 3
	seekHole = 4
)
