package profiler

// Tests of the copies of writable mounts: links, sparse files, room.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/runner"
)

func TestCopyTree(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	const sparse = 1 << 30
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(src, "sub", "big")
	if err := os.WriteFile(big, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, sparse); err != nil {
		t.Fatal(err)
	}
	// Data in the middle of the holes, which must land at its offset.
	f, err := os.OpenFile(big, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteAt([]byte("middle"), sparse/2)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "small"), []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"link": "sub/big", "dangling": "/nonexistent/x", "dirlink": "sub"} {
		if err := os.Symlink(target, filepath.Join(src, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"link": "sub/big", "dangling": "/nonexistent/x", "dirlink": "sub"} {
		if got, err := os.Readlink(filepath.Join(dst, name)); err != nil || got != target {
			t.Errorf("%s: link to %q (%v), want %q", name, got, err, target)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dst, "small")); err != nil || string(b) != "hello\n" {
		t.Errorf("small: %q, %v", b, err)
	}
	info, err := os.Stat(filepath.Join(dst, "sub", "big"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() != sparse || info.Mode().Perm() != 0o640 {
		t.Errorf("big: %d bytes, mode %v", info.Size(), info.Mode())
	}
	if a := allocated(info); a > 16<<20 {
		t.Errorf("big's copy takes %d bytes on disk: its holes were filled", a)
	}
	g, err := os.Open(filepath.Join(dst, "sub", "big"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	b := make([]byte, 8)
	if _, err := g.ReadAt(b, sparse/2-1); err != nil || string(b) != "\x00middle\x00" {
		t.Errorf("big's data in the middle: %q, %v", b, err)
	}
}

func TestRoom(t *testing.T) {
	if err := roomError(100e6, 3, 301e6, true, "/tmp"); err != nil {
		t.Errorf("room for 3 copies of 100 MB in 301 MB: %v", err)
	}
	if err := roomError(100e6, 3, 0, false, "/tmp"); err != nil {
		t.Errorf("free space unknown: %v", err)
	}
	err := roomError(100e6, 3, 250e6, true, "/tmp")
	if err == nil || !strings.Contains(err.Error(), "need 300.0 MB (3 copies of 100.0 MB) and /tmp has 250.0 MB free") {
		t.Fatalf("3 copies of 100 MB in 250 MB: %v", err)
	}
	// checkRoom measures what files take on disk, and refuses before
	// copying anything.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	free, ok := freeSpace(dir)
	if !ok {
		t.Skip("free space unknown here")
	}
	n := int(free/(1<<20)) + 2
	err = checkRoom([]runner.Mount{{HostDir: dir, GuestPath: "/d"}}, n, dir)
	if err == nil || !strings.Contains(err.Error(), "copies of 1.0 MB") {
		t.Fatalf("%d copies of 1 MiB: %v", n, err)
	}
	if err := checkRoom([]runner.Mount{{HostDir: dir, GuestPath: "/d", ReadOnly: true}}, n, dir); err != nil {
		t.Fatalf("a read-only mount is not copied: %v", err)
	}
}

// TestTempOutside checks that a temporary directory inside a writable
// mount, where each copy's copy of it would copy the ones before, is
// refused, and that one beside it, or inside a read-only mount, is not.
func TestTempOutside(t *testing.T) {
	root := t.TempDir()
	mount, inside, beside := filepath.Join(root, "data"), filepath.Join(root, "data", "tmp"), filepath.Join(root, "data-tmp")
	for _, d := range []string{inside, beside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(inside, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tmp     string
		ro, bad bool
	}{{inside, false, true}, {mount, false, true}, {link, false, true}, {beside, false, false}, {root, false, false}, {inside, true, false}} {
		err := checkTempOutside([]runner.Mount{{HostDir: mount, GuestPath: "/data", ReadOnly: c.ro}}, c.tmp)
		if (err != nil) != c.bad || (err != nil && !strings.Contains(err.Error(), "set TMPDIR")) {
			t.Errorf("TMPDIR %s, read-only %v: %v", c.tmp, c.ro, err)
		}
	}
}
