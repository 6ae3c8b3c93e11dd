package main

// This file tests read-only mounts (--dir HOST:GUEST:ro) on every engine.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
)

func TestParseDir(t *testing.T) {
	for _, c := range []struct {
		v, host, guest string
		ro             bool
		err            string
	}{
		{v: "data", host: "data", guest: "data"},
		{v: "data:ro", host: "data", guest: "data", ro: true},
		{v: "data:/in", host: "data", guest: "/in"},
		{v: "data:/in:ro", host: "data", guest: "/in", ro: true},
		{v: "data:/in:rw", host: "data", guest: "/in"},
		{v: "data:/a:b", host: "data", guest: "/a:b"},
		{v: "data:/a:b:ro", host: "data", guest: "/a:b", ro: true},
		{v: "data:/in:ro:rw", host: "data", guest: "/in:ro"},
		{v: "data:/in:ro:ro", host: "data", guest: "/in:ro", ro: true},
		{v: ":/in", err: "no host directory"},
		{v: ":ro", err: "no host directory"},
		{v: "data::ro", err: "no guest path"},
		{v: "data:", err: "no guest path"},
	} {
		m, err := parseDir(c.v)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want an error saying %q", c.v, err, c.err)
			}
		case err != nil || m.HostDir != c.host || m.GuestPath != c.guest || m.ReadOnly != c.ro:
			t.Errorf("%q: %+v, %v; want host %q guest %q read-only %v", c.v, m, err, c.host, c.guest, c.ro)
		}
	}
}

// TestReadOnlyMount runs a program that tries every way to change a
// directory mounted read-only: under wazero and node, with SBL and P3,
// each fails in the program and the host directory is left as it was;
// mounted read-write, the same program changes it. And a program that
// only reads gets the same profile from a read-only mount as from a
// read-write one.
func TestReadOnlyMount(t *testing.T) {
	wasm := testprogs.BuildGo(t, "github.com/pathprof/pathprof/testdata/go/rowrite", testprogs.BuildOptions{})
	engines := []string{"wazero"}
	if testing.Short() {
		t.Log("-short: wazero only")
	} else {
		findNode(t)
		engines = append(engines, "node")
	}
	fill := func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("original\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := func(dir string) string {
		var got []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, _ := d.Info()
			b, _ := os.ReadFile(p)
			got = append(got, p[len(dir):]+" "+info.Mode().String()+" "+info.ModTime().String()+" "+string(b))
			return nil
		})
		return strings.Join(got, "\n")
	}
	ops := []string{"write", "append", "truncate", "ftruncate", "chtimes", "create", "mkdir", "symlink", "link", "rename", "remove"}
	for _, engine := range engines {
		for _, st := range []string{"sbl", "p3"} {
			host := t.TempDir()
			fill(host)
			before := list(host)
			out := filepath.Join(t.TempDir(), "p.json")
			code, stdout, errs := runCmd("profile", "-q", "--no-history", "--engine", engine, "--strategy", st, "-o", out,
				"--dir", host+":/data:ro", wasm, "/data")
			if code != 0 {
				t.Fatalf("%s %s: exit %d\n%s%s", engine, st, code, stdout, errs)
			}
			for _, op := range ops {
				if !strings.Contains(stdout, "\n"+op+": failed\n") && !strings.HasPrefix(stdout, op+": failed\n") {
					t.Errorf("%s %s: %s through a read-only mount did not fail:\n%s", engine, st, op, stdout)
				}
			}
			if !strings.HasSuffix(stdout, "keep.txt holds \"original\\n\"\n") {
				t.Errorf("%s %s: the program read back\n%s", engine, st, stdout)
			}
			if after := list(host); after != before {
				t.Errorf("%s %s: the read-only mount changed:\n%s\nwas\n%s", engine, st, after, before)
			}
		}
		// Read-write, the same program changes the directory, so the
		// checks above can fail.
		host := t.TempDir()
		fill(host)
		code, stdout, errs := runCmd("profile", "-q", "--no-history", "--engine", engine, "-o", filepath.Join(t.TempDir(), "p.json"),
			"--dir", host+":/data", wasm, "/data")
		if code != 0 || !strings.Contains(stdout, "write: ok\n") || !strings.Contains(stdout, "mkdir: ok\n") {
			t.Fatalf("%s read-write: exit %d\n%s%s", engine, code, stdout, errs)
		}
		if _, err := os.Stat(filepath.Join(host, "sub")); err != nil {
			t.Fatalf("%s read-write: %v", engine, err)
		}
	}
	lsdir := filepath.Join(moduleRoot(t), "testdata", "lsdir", "lsdir.wasm")
	data := t.TempDir()
	fill(data)
	for _, engine := range engines {
		for _, st := range []string{"sbl", "p3"} {
			var profiles []string
			for _, mode := range []string{"", ":ro"} {
				out := filepath.Join(t.TempDir(), "p.json")
				code, stdout, errs := runCmd("profile", "-q", "--no-history", "--engine", engine, "--strategy", st, "-o", out,
					"--dir", data+":/data"+mode, lsdir, "/data")
				if code != 0 || stdout != "keep.txt file 9 bytes\n" {
					t.Fatalf("%s %s %q: exit %d\n%s%s", engine, st, mode, code, stdout, errs)
				}
				profiles = append(profiles, out)
			}
			a, b := readProfile(t, profiles[0]), readProfile(t, profiles[1])
			if ok, diff := a.Equal(b); !ok {
				t.Errorf("%s %s: the read-only run's profile differs from the read-write one's: %s", engine, st, diff)
			}
		}
	}
}
