package cfg

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pathprof/pathprof/internal/wasm"
)

// checkLocals checks ScanLocals and Track on g (built from m's function
// def without options) against liveness worked out instruction by
// instruction on the oracle's own successor graph, for every local, and
// LoopNodes against a forward search.
func checkLocals(m *wasm.Module, def int, g *Graph) string {
	c := &m.Code[def]
	o, err := newOracle(c)
	if err != nil {
		return "" // exception handling: outside the oracle's scope
	}
	ft, _ := m.FuncType(m.NumImportedFuncs + uint32(def))
	nl := len(ft.Params) + int(c.NumLocals())
	if nl*len(o.ops) > 4_000_000 {
		return ""
	}
	l, err := ScanLocals(g, c.Body)
	if err != nil {
		return err.Error()
	}
	all := make([]uint32, nl)
	for x := range all {
		all[x] = uint32(x)
	}
	l.Track(all)
	at := map[uint32]int{}
	for i, off := range o.offs {
		at[off] = i
	}
	preds := make([][]int, len(o.ops))
	for i := range o.ops {
		for _, s := range o.succs(i) {
			if s != exitInstr && s < len(o.ops) {
				preds[s] = append(preds[s], i)
			}
		}
	}
	live := make([]bool, len(o.ops))
	for x := range uint32(nl) {
		// Live before i: i reads x, or i does not write x and a successor
		// has x live; found backwards from the reads.
		clear(live)
		var stack []int
		for i, op := range o.ops {
			if op == wasm.OpLocalGet && o.a[i] == x {
				live[i] = true
				stack = append(stack, i)
			}
		}
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, p := range preds[i] {
				writes := (o.ops[p] == wasm.OpLocalSet || o.ops[p] == wasm.OpLocalTee) && o.a[p] == x
				if !live[p] && !writes {
					live[p] = true
					stack = append(stack, p)
				}
			}
		}
		for n := int32(2); n < int32(len(g.Blocks)); n++ {
			i, ok := at[g.Blocks[n].Start]
			if !ok {
				return fmt.Sprintf("node %d starts at %d, no instruction", n, g.Blocks[n].Start)
			}
			if got := l.Live(n, x); got != live[i] {
				return fmt.Sprintf("local %d at node %d: live %v, the instructions say %v", x, n, got, live[i])
			}
		}
	}
	for n := int32(2); n < int32(len(g.Blocks)); n++ {
		var want []uint32
		b := g.Blocks[n]
		for i := at[b.Start]; i < len(o.ops) && o.offs[i] < b.End; i++ {
			if (o.ops[i] == wasm.OpLocalSet || o.ops[i] == wasm.OpLocalTee) && !slices.Contains(want, o.a[i]) {
				want = append(want, o.a[i])
			}
		}
		if got := l.Writes(n); !slices.Equal(got, want) {
			return fmt.Sprintf("node %d writes %v, the instructions say %v", n, got, want)
		}
	}
	for _, h := range g.Loops() {
		got := g.LoopNodes(h)
		slices.Sort(got)
		if msg := checkLoopNodes(g, h, got); msg != "" {
			return msg
		}
	}
	return ""
}

// checkLoopNodes checks that nodes are the loop of h: h, and the nodes
// from which a forward search that does not enter h reaches the source of
// a back edge into h.
func checkLoopNodes(g *Graph, h int32, nodes []int32) string {
	var want []int32
	for n := range int32(len(g.Blocks)) {
		if n == h {
			want = append(want, n)
			continue
		}
		seen := map[int32]bool{n: true}
		stack := []int32{n}
		found := false
		for len(stack) > 0 && !found {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, ei := range g.Blocks[v].Out {
				e := g.Edges[ei]
				if e.To == h {
					found = found || e.Back
					continue
				}
				if !seen[e.To] {
					seen[e.To] = true
					stack = append(stack, e.To)
				}
			}
		}
		if found {
			want = append(want, n)
		}
	}
	if !slices.Equal(nodes, want) {
		return fmt.Sprintf("loop of %d: %v, a forward search finds %v", h, nodes, want)
	}
	return ""
}

// TestLiveRandom checks Track on random graphs, irreducible ones
// included, whose nodes read and write random locals, against a search
// for a path to a read that writes nothing on the way; and LoopNodes
// against checkLoopNodes.
func TestLiveRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 3000 {
		g := randomGraph(r, 1+r.IntN(12))
		nl := 1 + r.IntN(70) // past one word of bits
		n := len(g.Blocks)
		l := &Locals{g: g, reads: make([][]uint32, n), writes: make([][]uint32, n)}
		for b := 2; b < n; b++ {
			for x := range uint32(nl) {
				switch r.IntN(8) {
				case 0:
					l.reads[b] = append(l.reads[b], x)
				case 1:
					l.writes[b] = append(l.writes[b], x)
				case 2: // read, then written
					l.reads[b] = append(l.reads[b], x)
					l.writes[b] = append(l.writes[b], x)
				}
			}
		}
		var track []uint32
		for x := range uint32(nl) {
			if r.IntN(4) > 0 {
				track = append(track, x)
			}
		}
		l.Track(track)
		for x := range uint32(nl) {
			tracked := slices.Contains(track, x)
			for v := int32(2); v < int32(n); v++ {
				want := tracked && liveByPaths(g, l, v, x)
				if got := l.Live(v, x); got != want {
					t.Fatalf("iteration %d: local %d at node %d: live %v, paths say %v", iter, x, v, got, want)
				}
			}
		}
		for _, h := range g.Loops() {
			got := g.LoopNodes(h)
			slices.Sort(got)
			if msg := checkLoopNodes(g, h, got); msg != "" {
				t.Fatalf("iteration %d: %s", iter, msg)
			}
		}
	}
}

// liveByPaths reports whether a path from the start of node v reaches a
// read of x with no write of x before it.
func liveByPaths(g *Graph, l *Locals, v int32, x uint32) bool {
	seen := map[int32]bool{v: true}
	stack := []int32{v}
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if u < 2 {
			continue
		}
		if slices.Contains(l.reads[u], x) {
			return true
		}
		if slices.Contains(l.writes[u], x) {
			continue
		}
		for _, ei := range g.Blocks[u].Out {
			if to := g.Edges[ei].To; !seen[to] {
				seen[to] = true
				stack = append(stack, to)
			}
		}
	}
	return false
}
