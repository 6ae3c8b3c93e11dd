package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTrimCache: the least recently used entries go first, until the rest
// fits; entries used since keep, files that are not wazero's and fresh
// temporary files stay.
func TestTrimCache(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "wazero-v0-test")
	other := filepath.Join(dir, "wazero-v1-test")
	for _, d := range []string{sub, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	keep := now.Add(-10 * time.Minute)
	key := func(i int) string { return fmt.Sprintf("%064x", i) }
	write := func(path string, size int, used time.Time) {
		t.Helper()
		if err := os.WriteFile(path, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, used, used); err != nil {
			t.Fatal(err)
		}
	}
	// Ten entries of 100 bytes, entry i last used i hours before keep,
	// spread over two version directories.
	for i := 0; i < 10; i++ {
		d := sub
		if i%2 == 1 {
			d = other
		}
		write(filepath.Join(d, key(i)), 100, keep.Add(-time.Duration(i)*time.Hour))
	}
	// Used since keep: never removed, though it is counted.
	write(filepath.Join(sub, key(100)), 300, now)
	// Not wazero's: never removed nor counted.
	write(filepath.Join(sub, "notes.txt"), 5000, now.Add(-100*time.Hour))
	write(filepath.Join(dir, key(101)), 5000, now.Add(-100*time.Hour))
	// A temporary file of an interrupted write: removed first when old,
	// kept when fresh.
	write(filepath.Join(sub, key(102)+".123.tmp"), 50, now.Add(-2*time.Hour))
	write(filepath.Join(other, key(103)+".456.tmp"), 50, now)

	// 1000 + 300 + 50 bytes of entries; a limit of 900 removes the old
	// temporary file and the four least recently used entries (9 to 6).
	removed, err := TrimCache(dir, 900, keep)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 450 {
		t.Errorf("removed %d bytes, want 450", removed)
	}
	exists := func(path string) bool {
		_, err := os.Stat(path)
		return err == nil
	}
	for i := 0; i < 10; i++ {
		d := sub
		if i%2 == 1 {
			d = other
		}
		if got, want := exists(filepath.Join(d, key(i))), i < 6; got != want {
			t.Errorf("entry %d (used %d h before) exists: %v, want %v", i, i, got, want)
		}
	}
	for _, p := range []string{filepath.Join(sub, key(100)), filepath.Join(sub, "notes.txt"), filepath.Join(dir, key(101)), filepath.Join(other, key(103)+".456.tmp")} {
		if !exists(p) {
			t.Errorf("%s was removed", p)
		}
	}
	if exists(filepath.Join(sub, key(102)+".123.tmp")) {
		t.Error("the old temporary file was kept")
	}

	// Under the limit: nothing goes. Over it, but with every entry used
	// since keep: nothing goes either.
	if removed, err := TrimCache(dir, 1<<20, keep); err != nil || removed != 0 {
		t.Errorf("under the limit: removed %d, %v", removed, err)
	}
	if removed, err := TrimCache(dir, 1, now.Add(-100*time.Hour)); err != nil || removed != 0 {
		t.Errorf("all used since keep: removed %d, %v", removed, err)
	}
	// A missing directory is an empty cache.
	if removed, err := TrimCache(filepath.Join(dir, "none"), 1, keep); err != nil || removed != 0 {
		t.Errorf("missing directory: removed %d, %v", removed, err)
	}
}

// TestTrimCacheOnClose: closing a program compiled with a cache trims the
// cache to PATHPROF_CACHE_LIMIT, keeping what the process itself wrote.
func TestTrimCacheOnClose(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATHPROF_CACHE_LIMIT", "1B")
	old := filepath.Join(dir, "wazero-old", fmt.Sprintf("%064x", 1))
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte("compiled code"), 0o600); err != nil {
		t.Fatal(err)
	}
	long := processStart.Add(-48 * time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	// A command whose _start does nothing: wazero writes its cache entry.
	wasm := []byte{0, 'a', 's', 'm', 1, 0, 0, 0,
		1, 4, 1, 0x60, 0, 0, // type: () -> ()
		3, 2, 1, 0, // function 0 of type 0
		7, 10, 1, 6, '_', 's', 't', 'a', 'r', 't', 0, 0, // exported as _start
		10, 4, 1, 2, 0, 0x0b, // body: no locals, end
	}
	trimmed.Delete(dir)
	p, err := Compile(context.Background(), wasm, Config{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); err == nil {
		t.Error("the old entry was kept above the limit")
	}
	var fresh int
	subs, _ := os.ReadDir(dir)
	for _, s := range subs {
		files, _ := os.ReadDir(filepath.Join(dir, s.Name()))
		for _, f := range files {
			if isCacheKey(f.Name()) {
				fresh++
			}
		}
	}
	if fresh == 0 {
		t.Error("the entry this process wrote was removed")
	}
}

func TestCacheLimit(t *testing.T) {
	for _, c := range []struct {
		env  string
		want int64
		err  bool
	}{
		{"", DefaultCacheLimit, false},
		{"off", 0, false},
		{"4GiB", 4 << 30, false},
		{"512MiB", 512 << 20, false},
		{"1000", 1000, false},
		{"10B", 10, false},
		{"0", 0, true},
		{"-5", 0, true},
		{"4GB", 0, true},
		{"lots", 0, true},
		{"99999999999TiB", 0, true},
	} {
		t.Setenv("PATHPROF_CACHE_LIMIT", c.env)
		got, err := CacheLimit()
		if (err != nil) != c.err || got != c.want {
			t.Errorf("PATHPROF_CACHE_LIMIT=%q: %d, %v; want %d, error %v", c.env, got, err, c.want, c.err)
		}
		if err != nil && !strings.Contains(err.Error(), "PATHPROF_CACHE_LIMIT") {
			t.Errorf("error %q does not name the variable", err)
		}
	}
}
