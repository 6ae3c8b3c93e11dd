package runner

import (
	"io/fs"
	"syscall"
	"time"
)

// lastUse is the later of a file's modification and access times.
func lastUse(info fs.FileInfo) time.Time {
	t := info.ModTime()
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		if a := time.Unix(st.Atim.Unix()); a.After(t) {
			t = a
		}
	}
	return t
}
