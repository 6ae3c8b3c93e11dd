// Keeping the compilation cache within a size limit.

package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultCacheLimit bounds the compilation cache when PATHPROF_CACHE_LIMIT
// does not: every instrumented copy is a module of its own, and a big
// program's compiled copy takes hundreds of megabytes, so an unbounded
// cache fills a disk within days of ordinary use.
const DefaultCacheLimit int64 = 8 << 30

// CacheLimit is the size the compilation cache is trimmed to: the bytes of
// PATHPROF_CACHE_LIMIT (a number with an optional B, KiB, MiB, GiB or TiB
// suffix; "off" for none, 0), or DefaultCacheLimit when it is unset.
func CacheLimit() (int64, error) {
	s := strings.TrimSpace(os.Getenv("PATHPROF_CACHE_LIMIT"))
	switch s {
	case "":
		return DefaultCacheLimit, nil
	case "off":
		return 0, nil
	}
	n, err := ParseBytes(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("PATHPROF_CACHE_LIMIT=%q: want a size such as 4GiB, or off", s)
	}
	return n, nil
}

// ParseBytes reads a size written as GOMEMLIMIT is: digits with an
// optional B, KiB, MiB, GiB or TiB suffix.
func ParseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	shift := uint(0)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, shift = strings.TrimSuffix(s, u.suffix), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	if n > (1<<63-1)>>shift {
		return 0, fmt.Errorf("size %q too large", s)
	}
	return n << shift, nil
}

// trimmed holds the cache directories this process has trimmed: once per
// process is enough, and a profile compiles many copies.
var trimmed sync.Map

// trimOnce trims dir to the limit the environment sets, the first time the
// process closes a program compiled with it. Trimming is housekeeping: a
// failure leaves the cache as it was and is not the run's error.
func trimOnce(dir string) {
	if _, done := trimmed.LoadOrStore(dir, true); done {
		return
	}
	if limit, err := CacheLimit(); err == nil && limit > 0 {
		TrimCache(dir, limit, processStart)
	}
}

var processStart = time.Now()

// cacheEntry is one compiled module in the cache.
type cacheEntry struct {
	path string
	size int64
	used time.Time
}

// TrimCache removes the least recently used compiled modules of the cache
// directory dir (wazero keeps them in a subdirectory per wazero version
// and platform) until what remains takes at most limit bytes, and returns
// the bytes removed. An entry's last use is the later of its modification
// and access times: reading an entry marks its access time at least once a
// day on filesystems mounted relatime, the usual default. Entries used
// since keep (the start of the calling process) are never removed, nor is
// anything that is not wazero's: only files named by a 64-digit hex key,
// and temporary files of an interrupted write more than an hour old.
func TrimCache(dir string, limit int64, keep time.Time) (int64, error) {
	subs, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	var entries []cacheEntry
	var total int64
	for _, sub := range subs {
		if !sub.IsDir() || !strings.HasPrefix(sub.Name(), "wazero-") {
			continue
		}
		files, err := os.ReadDir(filepath.Join(dir, sub.Name()))
		if err != nil {
			continue
		}
		for _, f := range files {
			if !f.Type().IsRegular() {
				continue
			}
			info, err := f.Info()
			if err != nil {
				continue
			}
			e := cacheEntry{path: filepath.Join(dir, sub.Name(), f.Name()), size: info.Size(), used: lastUse(info)}
			switch {
			case isCacheKey(f.Name()):
			case strings.HasSuffix(f.Name(), ".tmp") && time.Since(info.ModTime()) > time.Hour:
				e.used = time.Time{}
			default:
				continue
			}
			entries = append(entries, e)
			total += e.size
		}
	}
	if total <= limit {
		return 0, nil
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].used.Before(entries[j].used) })
	var removed int64
	for _, e := range entries {
		if total-removed <= limit || !e.used.Before(keep) {
			break
		}
		if err := os.Remove(e.path); err == nil || errors.Is(err, fs.ErrNotExist) {
			removed += e.size
		}
	}
	return removed, nil
}

// isCacheKey says whether name is a wazero cache key: 64 lowercase hex
// digits.
func isCacheKey(name string) bool {
	if len(name) != 64 {
		return false
	}
	for _, c := range name {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
