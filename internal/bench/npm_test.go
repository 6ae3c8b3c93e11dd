package bench

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const resourcesJS = `export const modules = {
    "x.core.wasm": new URL("./x.core.wasm", import.meta.url),
};
export const filesystem = {
    share: {
        "a.v": "module a;\nendmodule\n\"q\"\u00e9",
        ice40: {
            "big.v": new URL("./share/ice40/big.v", import.meta.url),
            "empty.txt": "",
        },
    },
    top: "t",
};
`

func TestParseResources(t *testing.T) {
	files, err := ParseResources([]byte(resourcesJS))
	if err != nil {
		t.Fatal(err)
	}
	want := []ResourceFile{
		{Path: "share/a.v", Data: []byte("module a;\nendmodule\n\"q\"é")},
		{Path: "share/ice40/big.v", URL: "share/ice40/big.v"},
		{Path: "share/ice40/empty.txt", Data: []byte{}},
		{Path: "top", Data: []byte("t")},
	}
	if len(files) != len(want) {
		t.Fatalf("files %+v, want %+v", files, want)
	}
	for i, f := range files {
		w := want[i]
		if f.Path != w.Path || f.URL != w.URL || !bytes.Equal(f.Data, w.Data) {
			t.Errorf("file %d: %+v, want %+v", i, f, w)
		}
	}
	for _, bad := range []string{
		"export const modules = {};",
		`export const filesystem = { "../x": "y" };`,
		`export const filesystem = { a: { "..": "y" } };`,
		`export const filesystem = { "a/b": "y" };`,
		`export const filesystem = { a: new URL("../../etc/passwd", import.meta.url) };`,
		`export const filesystem = { a: new URL("/etc/passwd", import.meta.url) };`,
		`export const filesystem = { a: new URL("./x", location) };`,
		`export const filesystem = { a: "unterminated };`,
		`export const filesystem = { a: 1 };`,
		`export const filesystem = { a: "x" b: "y" };`,
		`export const filesystem = ` + strings.Repeat("{a:", 40) + `"x"` + strings.Repeat("}", 40) + `;`,
	} {
		if files, err := ParseResources([]byte(bad)); err == nil {
			t.Errorf("%s: accepted: %+v", bad, files)
		}
	}
}

// FuzzParseResources feeds the parser arbitrary modules: it must not
// panic, and every file it accepts must stay inside its directory.
func FuzzParseResources(f *testing.F) {
	f.Add([]byte(resourcesJS))
	f.Add([]byte(`export const filesystem = {a:{b:{"c":"d",},},};`))
	f.Fuzz(func(t *testing.T, data []byte) {
		files, err := ParseResources(data)
		if err != nil {
			return
		}
		for _, fl := range files {
			if _, err := insideDir(fl.Path); err != nil {
				t.Fatalf("accepted %q: %v", fl.Path, err)
			}
			if fl.URL != "" {
				if _, err := insideDir(fl.URL); err != nil {
					t.Fatalf("accepted URL %q: %v", fl.URL, err)
				}
			}
		}
	})
}

// tarball builds a tar file of the given regular files, gzip-compressed
// if gz.
func tarball(t *testing.T, gz bool, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w *tar.Writer
	var z *gzip.Writer
	if gz {
		z = gzip.NewWriter(&buf)
		w = tar.NewWriter(z)
	} else {
		w = tar.NewWriter(&buf)
	}
	for name, data := range files {
		if err := w.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if z != nil {
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestUnpackNPM unpacks a package made here the way Prepare unpacks the
// real ones: a module, a nested tar and a resources tree, and refuses a
// nested tar whose names leave their directory.
func TestUnpackNPM(t *testing.T) {
	inner := tarball(t, false, map[string]string{"include/stdio.h": "int printf();\n", "lib/libc.a": "!<arch>\n"})
	data := tarball(t, true, map[string]string{
		"package/gen/x.core.wasm":        "\x00asm\x01\x00\x00\x00",
		"package/gen/res.tar":            string(inner),
		"package/gen/resources-x.js":     resourcesJS,
		"package/gen/share/ice40/big.v":  "big\n",
		"package/gen/share/unrelated.js": "ignored",
		"package/README.md":              "ignored",
	})
	pkg := &npmPackage{
		Files:     map[string]string{"package/gen/x.core.wasm": "x.wasm"},
		Tars:      map[string]string{"package/gen/res.tar": "usr"},
		Resources: "package/gen/resources-x.js",
	}
	dir := t.TempDir()
	if err := unpackNPM(pkg, data, dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"x.wasm":                "\x00asm\x01\x00\x00\x00",
		"usr/include/stdio.h":   "int printf();\n",
		"usr/lib/libc.a":        "!<arch>\n",
		"share/a.v":             "module a;\nendmodule\n\"q\"é",
		"share/ice40/big.v":     "big\n",
		"share/ice40/empty.txt": "",
		"top":                   "t",
	} {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
		t.Error("an entry nobody asked for was unpacked")
	}

	evil := tarball(t, true, map[string]string{"package/gen/res.tar": string(tarball(t, false, map[string]string{"../../escape": "x"}))})
	dir = t.TempDir()
	if err := unpackNPM(&npmPackage{Tars: pkg.Tars}, evil, filepath.Join(dir, "pkg")); err == nil || !strings.Contains(err.Error(), "leaves its directory") {
		t.Errorf("a nested tar leaving its directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "escape")); err == nil {
		t.Error("a file was written outside the package's directory")
	}
	if err := unpackNPM(&npmPackage{Files: map[string]string{"package/gen/missing.wasm": "m.wasm"}}, data, t.TempDir()); err == nil {
		t.Error("a missing entry was not an error")
	}
}

// TestFetchNPMDigest runs the fetch with a stand-in for npm that packs a
// tarball: a tarball whose digest is not the pinned one is refused and
// leaves nothing behind; the pinned one is unpacked.
func TestFetchNPMDigest(t *testing.T) {
	data := tarball(t, true, map[string]string{"package/gen/x.core.wasm": "\x00asm\x01\x00\x00\x00"})
	dir := t.TempDir()
	tgz := filepath.Join(dir, "pkg.tgz")
	if err := os.WriteFile(tgz, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// npm pack --silent --pack-destination DIR SPEC prints the file name.
	script := filepath.Join(dir, "npm")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncp "+tgz+" \"$4/x-1.0.0.tgz\" && echo x-1.0.0.tgz\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha512.Sum512(data)
	pkg := &npmPackage{Name: "x", Version: "1.0.0", Integrity: "sha512-" + base64.StdEncoding.EncodeToString(sum[:]),
		Files: map[string]string{"package/gen/x.core.wasm": "x.wasm"}}
	opt := PrepareOptions{NPM: script}
	quiet := func(string, ...any) {}

	bad := *pkg
	bad.Integrity = "sha512-AAAA"
	final := filepath.Join(dir, "suite", "npm", pkg.dirName())
	if err := fetchNPM(&bad, final, opt, quiet); err == nil || !strings.Contains(err.Error(), "digest") {
		t.Errorf("a wrong digest: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(final)); len(ents) != 0 {
		t.Errorf("a refused fetch left %v", ents)
	}
	if err := fetchNPM(pkg, final, opt, quiet); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(final, "x.wasm")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(final, ".complete")); err != nil {
		t.Error(err)
	}
}
