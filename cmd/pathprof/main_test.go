package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
)

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestInspect(t *testing.T) {
	p := testprogs.CProgramByName(t, "calc").Wasm
	code, out, errs := runCmd("inspect", p)
	if code != 0 || !strings.Contains(out, "__original_main") || !strings.Contains(out, "total:") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = runCmd("inspect", "--json", p)
	var s struct {
		Functions []struct {
			Index         uint32
			Name          string
			Blocks, Loops int
			Paths         string
		}
		Totals struct {
			Defined int `json:"defined_functions"`
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || s.Totals.Defined != len(s.Functions) || len(s.Functions) < 10 {
		t.Fatalf("bad --json output (exit %d):\n%.500s", code, out)
	}
	dot := filepath.Join(t.TempDir(), "f.dot")
	code, out, errs = runCmd("inspect", "--func", "__original_main", "--dot", dot, p)
	if code != 0 || strings.Count(out, "\n") != 3 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	b, err := os.ReadFile(dot)
	if err != nil || !bytes.Contains(b, []byte("cluster_cfg")) || !bytes.Contains(b, []byte("cluster_dag")) || !bytes.Contains(b, []byte("dummy_entry")) {
		t.Fatalf("bad dot file: %v\n%.300s", err, b)
	}
}

// TestBadInput checks that broken modules give one clear line naming the
// section and offset, exit status 1, and no panic.
func TestBadInput(t *testing.T) {
	good, err := os.ReadFile(testprogs.CProgramByName(t, "calc").Wasm)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cases := map[string][]byte{
		"empty":     {},
		"not-wasm":  []byte("#!/bin/sh\necho hi\n"),
		"truncated": good[:len(good)/2],
		"bad-op":    {0, 'a', 's', 'm', 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0, 3, 2, 1, 0, 10, 5, 1, 3, 0, 0xFF, 0x0b},
	}
	for name, b := range cases {
		path := filepath.Join(dir, name+".wasm")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runCmd("inspect", path)
		if code != 1 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "offset 0x") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, errs)
		}
		if name == "bad-op" && !strings.Contains(errs, "unknown opcode 0xFF") {
			t.Errorf("bad-op: the error does not name the opcode: %s", errs)
		}
	}
	if code, _, errs := runCmd("inspect", filepath.Join(dir, "missing.wasm")); code != 1 || !strings.Contains(errs, "no such file") {
		t.Errorf("missing file: exit %d, %s", code, errs)
	}
	if code, _, _ := runCmd("inspect"); code != 2 {
		t.Errorf("no module: exit %d, want 2", code)
	}
}
