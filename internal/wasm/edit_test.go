package wasm_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
)

// noopModule exports "noop", a function of type () -> () that does nothing.
var noopModule = []byte{
	0, 'a', 's', 'm', 1, 0, 0, 0,
	1, 4, 1, 0x60, 0, 0, // type section
	3, 2, 1, 0, // function section
	7, 8, 1, 4, 'n', 'o', 'o', 'p', 0, 0, // export section
	10, 4, 1, 2, 0, 0x0b, // code section
}

// editAll adds an import of noop, and in every function a local and a
// no-op sequence at the start (which calls the import) and before every
// br_if. It returns the edited module and checks the offset maps.
func editAll(t *testing.T, orig []byte) []byte {
	m, err := wasm.Decode(orig)
	if err != nil {
		t.Fatal(err)
	}
	imp, err := m.AddFuncImport("pathprof_test", "noop", m.AddType(wasm.FuncType{}))
	if err != nil {
		t.Fatal(err)
	}
	var in wasm.Instr
	for i := range m.Code {
		c := &m.Code[i]
		ft, ok := m.FuncType(m.NumImportedFuncs + uint32(i))
		if !ok {
			t.Fatalf("function %d has no type", i)
		}
		local, err := c.AddLocal(len(ft.Params), wasm.ValI32)
		if err != nil {
			t.Fatal(err)
		}
		var head []byte
		head = wasm.AppendInstr(head, &wasm.Instr{Op: wasm.OpCall, A: imp})
		head = wasm.AppendInstr(head, &wasm.Instr{Op: wasm.OpI32Const, Const: 7})
		head = wasm.AppendInstr(head, &wasm.Instr{Op: wasm.OpLocalSet, A: local})
		head = wasm.AppendInstr(head, &wasm.Instr{Op: wasm.OpNop})
		var beforeBrIf []byte
		beforeBrIf = wasm.AppendInstr(beforeBrIf, &wasm.Instr{Op: wasm.OpLocalGet, A: local})
		beforeBrIf = wasm.AppendInstr(beforeBrIf, &wasm.Instr{Op: wasm.OpDrop})
		edits := []wasm.Edit{{Off: c.ExprOff, Ins: head}}
		r := wasm.NewReader(c.Body, 0, "code")
		r.Seek(int(c.ExprOff))
		for !r.Done() {
			if err := r.Next(&in); err != nil {
				t.Fatal(err)
			}
			if in.Op == wasm.OpBrIf {
				edits = append(edits, wasm.Edit{Off: in.Off, Ins: beforeBrIf})
			}
		}
		if err := c.Splice(edits); err != nil {
			t.Fatal(err)
		}
	}
	out, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	checkOffsetMaps(t, orig, m)
	return out
}

// checkOffsetMaps walks each original body next to its edited body and
// checks that every original instruction survives and maps back to its
// original offset, and that every inserted instruction (4 at the start, 2
// before each br_if) maps to the original instruction it precedes.
func checkOffsetMaps(t *testing.T, orig []byte, m *wasm.Module) {
	mo, err := wasm.Decode(orig)
	if err != nil {
		t.Fatal(err)
	}
	for i := range mo.Code {
		co, ce := &mo.Code[i], &m.Code[i]
		ro := wasm.NewReader(co.Body, 0, "orig")
		ro.Seek(int(co.ExprOff))
		re := wasm.NewReader(ce.Body, 0, "edited")
		re.Seek(int(ce.ExprOff))
		var a, b wasm.Instr
		first := true
		for !ro.Done() {
			if err := ro.Next(&a); err != nil {
				t.Fatal(err)
			}
			skip := 0
			if first {
				skip = 4
				first = false
			}
			if a.Op == wasm.OpBrIf {
				skip += 2
			}
			for k := 0; k < skip; k++ {
				if err := re.Next(&b); err != nil {
					t.Fatal(err)
				}
				if got := ce.Map.Orig(b.Off); got != a.Off {
					t.Fatalf("function %d: inserted %s maps to 0x%x, want 0x%x (%s)", i, b.Op, got, a.Off, a.Op)
				}
			}
			if err := re.Next(&b); err != nil {
				t.Fatal(err)
			}
			if a.Op != b.Op {
				t.Fatalf("function %d: %s at 0x%x became %s", i, a.Op, a.Off, b.Op)
			}
			if got := ce.Map.Orig(b.Off); got != a.Off {
				t.Fatalf("function %d: %s at edited 0x%x maps to 0x%x, want 0x%x", i, b.Op, b.Off, got, a.Off)
			}
		}
		if !re.Done() {
			t.Fatalf("function %d: edited body has extra instructions", i)
		}
	}
}

func TestEditedModulesRun(t *testing.T) {
	type prog struct {
		name string
		path string
		cfg  runner.Config
	}
	var progs []prog
	for _, p := range testprogs.CPrograms(t) {
		progs = append(progs, prog{p.Name, p.Wasm, p.Config(t)})
	}
	progs = append(progs, prog{"go-hello", testprogs.GoHello(t), runner.Config{}})
	progs = append(progs, prog{"go-sort-test", testprogs.GoStdTest(t, "sort"), testprogs.GoStdTestConfig(t, "sort")})
	for _, p := range progs {
		t.Run(p.name, func(t *testing.T) {
			orig, err := os.ReadFile(p.path)
			if err != nil {
				t.Fatal(err)
			}
			edited := editAll(t, orig)
			run := func(mod []byte) (string, string, uint32) {
				cfg := p.cfg
				if r, ok := cfg.Stdin.(*bytes.Reader); ok {
					r.Seek(0, 0)
				}
				var stdout, stderr bytes.Buffer
				cfg.Stdout, cfg.Stderr = &stdout, &stderr
				cfg.ProgramName = filepath.Base(p.path)
				cfg.CacheDir = testprogs.WazeroCacheDir(t)
				cfg.Modules = []runner.NamedModule{{Name: "pathprof_test", Wasm: noopModule}}
				res, err := runner.Run(context.Background(), mod, cfg)
				if err != nil && res.Trap == nil {
					t.Fatal(err)
				}
				return stdout.String(), stderr.String(), res.ExitCode
			}
			o1, e1, c1 := run(orig)
			o2, e2, c2 := run(edited)
			if o1 != o2 || e1 != e2 || c1 != c2 {
				t.Fatalf("edited module behaves differently: exit %d vs %d\nstdout:\n%.2000s\nvs\n%.2000s\nstderr:\n%.1000s\nvs\n%.1000s", c1, c2, o1, o2, e1, e2)
			}
			if len(o1) == 0 {
				t.Fatal("the program printed nothing: the comparison proves little")
			}
			if path, err := exec.LookPath("wasm-validate"); err == nil {
				f := filepath.Join(t.TempDir(), "edited.wasm")
				if err := os.WriteFile(f, edited, 0o644); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command(path, "--enable-all", f).CombinedOutput(); err != nil {
					t.Errorf("wasm-validate rejects the edited module: %v\n%s", err, strings.TrimSpace(string(out)))
				}
			}
		})
	}
}
