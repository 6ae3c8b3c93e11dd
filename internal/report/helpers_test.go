package report

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/internal/wasmtest"
	"github.com/pathprof/pathprof/profile"
)

// prog is a committed C program with what the tests need to know of it.
type prog struct {
	bytes  []byte
	m      *wasm.Module
	source []string // the C source's lines
}

func loadProg(t *testing.T, name string) *prog {
	t.Helper()
	p := testprogs.CProgramByName(t, name)
	b, m := wasmtest.DecodeFile(t, p.Wasm)
	src, err := os.ReadFile(p.Source)
	if err != nil {
		t.Fatal(err)
	}
	return &prog{bytes: b, m: m, source: strings.Split(string(src), "\n")}
}

// fn returns the function index and its body of the function called name.
func (p *prog) fn(t *testing.T, name string) (uint32, *wasm.Code) {
	t.Helper()
	for i := range p.m.Code {
		idx := p.m.NumImportedFuncs + uint32(i)
		if p.m.FuncName(idx) == name {
			return idx, &p.m.Code[i]
		}
	}
	t.Fatalf("no function %s", name)
	return 0, nil
}

// blocks returns the file offsets of the function's basic blocks, in
// body order, from its control-flow graph.
func (p *prog) blocks(t *testing.T, name string) []int {
	t.Helper()
	idx, c := p.fn(t, name)
	g, err := cfg.Build(p.m, int(idx-p.m.NumImportedFuncs), cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, b := range g.Blocks[2:] {
		out = append(out, c.OrigOff+int(b.Start))
	}
	if len(out) < 2 {
		t.Fatalf("%s has %d blocks", name, len(out))
	}
	return out
}

// braceLine is the line of the opening brace of the C function name: where
// clang's line table starts the function.
func (p *prog) braceLine(t *testing.T, name string) int {
	t.Helper()
	for i, l := range p.source {
		if strings.Contains(l, " "+name+"(") && !strings.HasSuffix(l, ";") {
			for j := i; j < len(p.source); j++ {
				if strings.Contains(p.source[j], "{") {
					return j + 1
				}
			}
		}
	}
	t.Fatalf("no definition of %s in the source", name)
	return 0
}

// header returns a complete SBL profile of p's module with no functions.
func (p *prog) header() *profile.Profile {
	sum := sha256.Sum256(p.bytes)
	return &profile.Profile{
		Format:  profile.Format,
		Version: profile.Version,
		Module: profile.Module{
			Path:       "calc.wasm",
			SHA256:     hex.EncodeToString(sum[:]),
			Size:       len(p.bytes),
			CodeOffset: p.m.CodePayloadOff,
		},
		Strategy: "sbl",
		Copies:   1,
		Complete: true,
		Runs:     []profile.Run{{Copy: 0, ProbeHits: 4242, Seconds: 0.125}},
	}
}
