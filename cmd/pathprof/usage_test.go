package main

import (
	"regexp"
	"strings"
	"testing"
)

// flagRef matches a flag named in a synopsis: "-o", "--top", "--compact=false".
var flagRef = regexp.MustCompile(`(?:^|[\s\[|])--?([a-z][a-z0-9-]*)`)

// definedFlags returns the flags "pathprof NAME -h" lists, and the text it
// printed.
func definedFlags(t *testing.T, name string) (map[string]bool, string) {
	t.Helper()
	code, out, errs := runCmd(name, "-h")
	if code != 2 || out != "" {
		t.Fatalf("%s -h: exit %d, stdout %q", name, code, out)
	}
	flags := map[string]bool{}
	for _, line := range strings.Split(errs, "\n") {
		if f, ok := strings.CutPrefix(line, "  -"); ok {
			flags[strings.Fields(f)[0]] = true
		}
	}
	return flags, errs
}

// TestUsage checks the command table against the commands: each command's
// -h prints its usage line from the table, every flag a synopsis names is
// one the command defines, and the top-level usage names every command.
func TestUsage(t *testing.T) {
	code, _, top := runCmd("help")
	if code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	for _, c := range commands {
		flags, errs := definedFlags(t, c.name)
		if !strings.HasPrefix(errs, usageOf(c.name)+"\n") {
			t.Errorf("%s -h does not start with its usage line from the table:\n%s", c.name, errs)
		}
		if len(flags) == 0 {
			t.Errorf("%s -h lists no flags:\n%s", c.name, errs)
		}
		for _, form := range c.synopsis {
			for _, m := range flagRef.FindAllStringSubmatch(form, -1) {
				if !flags[m[1]] {
					t.Errorf("%s: the synopsis names -%s, which the command does not define", c.name, m[1])
				}
			}
		}
		if !strings.Contains(top, "\n  pathprof "+c.name+" ") || !strings.Contains(top, "\n      "+c.summary+"\n") {
			t.Errorf("the top-level usage lacks %s's synopsis or summary", c.name)
		}
	}
	if code, _, errs := runCmd("no-such-command"); code != 2 || !strings.Contains(errs, `unknown command "no-such-command"`) || !strings.Contains(errs, top) {
		t.Errorf("unknown command: exit %d\n%s", code, errs)
	}
}
