//go:build !linux

package runner

import (
	"io/fs"
	"time"
)

// lastUse is a file's modification time: where access times are not read,
// the cache is trimmed oldest written first.
func lastUse(info fs.FileInfo) time.Time { return info.ModTime() }
