// Command rowrite tries every way to change a directory, for the tests of
// read-only mounts: "rowrite DIR" writes, appends to, truncates and
// touches DIR/keep.txt, creates a file, a directory and a link, renames
// and removes, printing "NAME: ok" or "NAME: failed" for each, then what
// DIR/keep.txt holds.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func main() {
	dir := os.Args[1]
	keep := filepath.Join(dir, "keep.txt")
	try := func(name string, err error) {
		if err != nil {
			fmt.Printf("%s: failed\n", name)
			return
		}
		fmt.Printf("%s: ok\n", name)
	}
	try("write", os.WriteFile(keep, []byte("written\n"), 0o644))
	try("append", appendTo(keep))
	try("truncate", os.Truncate(keep, 1))
	try("ftruncate", ftruncate(keep))
	t := time.Unix(1e9, 0)
	try("chtimes", os.Chtimes(keep, t, t))
	try("create", os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644))
	try("mkdir", os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	try("symlink", os.Symlink("keep.txt", filepath.Join(dir, "link")))
	try("link", os.Link(keep, filepath.Join(dir, "hard")))
	try("rename", os.Rename(keep, filepath.Join(dir, "moved.txt")))
	try("remove", os.Remove(keep))
	b, err := os.ReadFile(keep)
	if err != nil {
		fmt.Println("read: failed")
		return
	}
	fmt.Printf("keep.txt holds %q\n", b)
}

func appendTo(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("appended\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ftruncate truncates through a descriptor opened for reading.
func ftruncate(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Truncate(0)
}
