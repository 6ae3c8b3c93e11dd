package profiler

// This file holds what copying the mounts asks of Linux: cloning a file,
// its allocated size and a file system's free space.

import (
	"io/fs"
	"os"
	"syscall"
)

// ficlone is the FICLONE ioctl: dst shares src's blocks, copied on write.
const ficlone = 0x40049409

// clone makes dst a clone of src where the file system can (btrfs, xfs).
func clone(dst, src *os.File) bool {
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, dst.Fd(), ficlone, src.Fd())
	return errno == 0
}

// allocated is the bytes a file's blocks take on disk.
func allocated(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return info.Size()
}

// freeSpace is the bytes free to an unprivileged user on the file system
// holding dir.
func freeSpace(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * st.Bsize, true
}
