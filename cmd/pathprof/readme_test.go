package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// moduleRoot returns the directory holding go.mod, found from the test's
// directory upwards.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// readmeTable returns the rows of the first table under the README's
// heading "## section", each row's cells trimmed and its first cell with
// its backquotes removed; the header and separator rows are left out.
func readmeTable(t *testing.T, section string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n## "+section+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", section)
	}
	rest, _, _ = strings.Cut(rest, "\n## ")
	var rows [][]string
	inTable := false
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	if len(rows) < 2 {
		t.Fatalf("README.md's section %q has no table", section)
	}
	rows = rows[2:]
	for _, r := range rows {
		if len(r[0]) < 2 || r[0][0] != '`' || r[0][len(r[0])-1] != '`' {
			t.Errorf("README.md, %s: the first cell %q is not in backquotes", section, r[0])
		}
		r[0] = strings.Trim(r[0], "`")
	}
	return rows
}

// TestREADMECommands checks that the README's table of commands lists the
// command line's commands, in the same order, each with the summary that
// "pathprof help" prints.
func TestREADMECommands(t *testing.T) {
	var readme, cli []string
	for _, r := range readmeTable(t, "Commands") {
		readme = append(readme, r[0]+": "+r[1])
	}
	for _, c := range commands {
		cli = append(cli, c.name+": "+c.summary)
	}
	if !slices.Equal(readme, cli) {
		t.Errorf("README.md's commands table and the command line's table (commands in main.go) differ:\nREADME:\n  %s\ncommand line:\n  %s",
			strings.Join(readme, "\n  "), strings.Join(cli, "\n  "))
	}
}

// TestREADMEPackages checks that the README's package map lists exactly
// the module's packages, as go list finds them, each once.
func TestREADMEPackages(t *testing.T) {
	root := moduleRoot(t)
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}", "./...")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	mod := exec.Command("go", "list", "-m")
	mod.Dir = root
	modPath, err := mod.Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	prefix := strings.TrimSpace(string(modPath)) + "/"
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		pkgs = append(pkgs, strings.TrimPrefix(p, prefix))
	}
	var listed []string
	for _, r := range readmeTable(t, "Packages") {
		listed = append(listed, r[0])
		if len(r) < 2 || r[1] == "" {
			t.Errorf("README.md's package map says nothing of %s", r[0])
		}
	}
	slices.Sort(pkgs)
	slices.Sort(listed)
	for _, p := range listed {
		if _, found := slices.BinarySearch(pkgs, p); !found {
			t.Errorf("README.md's package map lists %s, which go list does not find", p)
		}
	}
	for i, p := range listed {
		if i > 0 && listed[i-1] == p {
			t.Errorf("README.md's package map lists %s twice", p)
		}
	}
	for _, p := range pkgs {
		if _, found := slices.BinarySearch(listed, p); !found {
			t.Errorf("README.md's package map lacks %s", p)
		}
	}
}
