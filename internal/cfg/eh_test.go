package cfg

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/wasm"
)

// body encodes a function body with no locals.
func body(ins ...wasm.Instr) *wasm.Code {
	b := []byte{0}
	for i := range ins {
		b = wasm.AppendInstr(b, &ins[i])
	}
	return &wasm.Code{Body: b, ExprOff: 1}
}

// excEdges lists a graph's exception and throw edges as "from->to kind",
// naming blocks by their first instruction.
func excEdges(t *testing.T, c *wasm.Code) []string {
	g, err := BuildBody(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	name := func(n int32) string {
		switch n {
		case Exit:
			return "exit"
		case Entry:
			return "entry"
		}
		// The opcode and position (0-based) of the block's first instruction.
		r := wasm.NewReader(c.Body, 0, "code")
		r.Seek(int(c.ExprOff))
		var in wasm.Instr
		for i := 0; ; i++ {
			r.Next(&in)
			if in.Off == g.Blocks[n].Start {
				return fmt.Sprintf("%s@%d", in.Op.Name(), i)
			}
		}
	}
	var out []string
	for _, e := range g.Edges {
		if e.Kind == EdgeException || e.Kind == EdgeThrow {
			out = append(out, name(e.From)+"->"+name(e.To)+" "+e.Kind.String())
		}
	}
	sort.Strings(out)
	return out
}

func op(o wasm.Op, a uint32) wasm.Instr { return wasm.Instr{Op: o, A: a} }

func TestTryTable(t *testing.T) {
	// block; try_table (catch 1 -> 0); call 0; local.get 0; if; throw 0; end; end; end; end
	c := body(
		op(wasm.OpBlock, 0),
		wasm.Instr{Op: wasm.OpTryTable, Catches: []wasm.Catch{{Kind: wasm.CatchTag, Tag: 1, Label: 0}}},
		op(wasm.OpCall, 0),
		op(wasm.OpLocalGet, 0),
		op(wasm.OpIf, 0),
		op(wasm.OpThrow, 0), // tag 0 is not caught: leaves the function
		op(wasm.OpEnd, 0),
		op(wasm.OpThrow, 1), // tag 1 is caught
		op(wasm.OpEnd, 0),
		op(wasm.OpEnd, 0),
		op(wasm.OpEnd, 0),
	)
	got := strings.Join(excEdges(t, c), "; ")
	// Blocks: the block holding the call (from "block"), the then arm
	// (throw 0), the join after the if (throw 1); the catch label resolves
	// outside the try_table, to the join after the outer block (the
	// function's end).
	want := "block@0->end@10 exception; throw@5->exit throw; throw@7->end@10 exception"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestLegacyTry(t *testing.T) {
	// try; local.get 0; if; throw 1; end; call 0; catch 0; catch_all; end; end
	c := body(
		op(wasm.OpTry, 0),
		op(wasm.OpLocalGet, 0),
		op(wasm.OpIf, 0),
		op(wasm.OpThrow, 1),
		op(wasm.OpEnd, 0),
		op(wasm.OpCall, 0),
		op(wasm.OpCatch, 0),
		op(wasm.OpCatchAll, 0),
		op(wasm.OpEnd, 0),
		op(wasm.OpEnd, 0),
	)
	got := strings.Join(excEdges(t, c), "; ")
	// The call (in the join after the if) may throw anything: both clauses
	// (catch 0's empty arm starts at catch_all, catch_all's arm at end).
	// The throw of tag 1 skips catch 0 and lands in catch_all.
	want := "call@5->catch_all@7 exception; call@5->end@8 exception; throw@3->end@8 exception"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestDelegate(t *testing.T) {
	// try; try; throw 0; delegate 0; catch_all; end; end
	c := body(
		op(wasm.OpTry, 0),
		op(wasm.OpTry, 0),
		op(wasm.OpThrow, 0),
		op(wasm.OpDelegate, 0),
		op(wasm.OpCatchAll, 0),
		op(wasm.OpEnd, 0),
		op(wasm.OpEnd, 0),
	)
	got := strings.Join(excEdges(t, c), "; ")
	if want := "try@0->end@5 exception"; got != want {
		t.Errorf("got %s, want %s: the throw delegated to the outer catch_all", got, want)
	}
}
