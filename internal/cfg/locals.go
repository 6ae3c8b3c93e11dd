package cfg

// This file says what a loop's nodes are and which locals each node reads,
// writes and finds live: what a loop carries round.

import (
	"fmt"

	"github.com/pathprof/pathprof/internal/wasm"
)

// LoopNodes returns the nodes of the loop with header h: h and every node
// that reaches a back edge into h without passing through h. In an
// irreducible graph some of them may also be entered from outside.
func (g *Graph) LoopNodes(h int32) []int32 {
	in := map[int32]bool{h: true}
	nodes := []int32{h}
	var stack []int32
	for _, ei := range g.Blocks[h].In {
		if e := g.Edges[ei]; e.Back && !in[e.From] {
			in[e.From] = true
			nodes = append(nodes, e.From)
			stack = append(stack, e.From)
		}
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, ei := range g.Blocks[n].In {
			if from := g.Edges[ei].From; !in[from] {
				in[from] = true
				nodes = append(nodes, from)
				stack = append(stack, from)
			}
		}
	}
	return nodes
}

// Locals says which locals each node of a graph reads and writes, and,
// for the locals chosen with Track, which are live where a node starts:
// read, on some path from there, before they are written. The code at a
// path end uses it to know which locals a loop carries round.
type Locals struct {
	g      *Graph
	reads  [][]uint32 // per node, the locals it reads before writing them
	writes [][]uint32 // per node, the locals it writes, each once
	track  map[uint32]int
	words  int
	liveIn []uint64 // per node, words words of bits, by track's index
}

// ScanLocals reads the local accesses of every node of g from body, the
// function body g was built from.
func ScanLocals(g *Graph, body []byte) (*Locals, error) {
	n := len(g.Blocks)
	l := &Locals{g: g, reads: make([][]uint32, n), writes: make([][]uint32, n)}
	r := wasm.NewReader(body, 0, "code")
	var in wasm.Instr
	seen := map[uint32]uint8{}
	for b := 2; b < n; b++ {
		blk := g.Blocks[b]
		r.Seek(int(blk.Start))
		clear(seen)
		for r.Pos() < int(blk.End) {
			if err := r.Next(&in); err != nil {
				return nil, fmt.Errorf("cfg: node %d: %w", b, err)
			}
			if in.Op != wasm.OpLocalGet && in.Op != wasm.OpLocalSet && in.Op != wasm.OpLocalTee {
				continue
			}
			// seen: 1 read, 2 written.
			x := uint32(in.A)
			switch s := seen[x]; {
			case in.Op == wasm.OpLocalGet:
				if s == 0 {
					seen[x] = 1
					l.reads[b] = append(l.reads[b], x)
				}
			case s != 2:
				seen[x] = 2
				l.writes[b] = append(l.writes[b], x)
			}
		}
	}
	return l, nil
}

// Writes returns the locals that node n writes, in the order of their
// first write.
func (l *Locals) Writes(n int32) []uint32 { return l.writes[n] }

// Track works out liveness for the locals xs, so that Live can answer
// for them. It answers as if an exception edge left its node at the end:
// this liveness is for choosing what to keep, not for anything that must
// hold.
func (l *Locals) Track(xs []uint32) {
	g := l.g
	l.track = make(map[uint32]int, len(xs))
	for _, x := range xs {
		if _, ok := l.track[x]; !ok {
			l.track[x] = len(l.track)
		}
	}
	n := len(g.Blocks)
	l.words = (len(l.track) + 63) / 64
	use := make([]uint64, n*l.words)
	def := make([]uint64, n*l.words)
	mark := func(set []uint64, b int, xs []uint32) {
		for _, x := range xs {
			if i, ok := l.track[x]; ok {
				set[b*l.words+i/64] |= 1 << (i % 64)
			}
		}
	}
	for b := 2; b < n; b++ {
		mark(use, b, l.reads[b])
		mark(def, b, l.writes[b])
	}
	// Backward dataflow to a fixed point; visiting nodes from the last
	// settles most graphs in two or three rounds.
	l.liveIn = make([]uint64, n*l.words)
	out := make([]uint64, l.words)
	for changed := true; changed; {
		changed = false
		for b := n - 1; b >= 2; b-- {
			clear(out)
			for _, ei := range g.Blocks[b].Out {
				to := int(g.Edges[ei].To)
				for w := range out {
					out[w] |= l.liveIn[to*l.words+w]
				}
			}
			for w := range out {
				i := b*l.words + w
				v := use[i] | out[w]&^def[i]
				if v != l.liveIn[i] {
					l.liveIn[i] = v
					changed = true
				}
			}
		}
	}
}

// Live reports whether local x, one of those tracked, is live where node
// n starts.
func (l *Locals) Live(n int32, x uint32) bool {
	i, ok := l.track[x]
	return ok && l.liveIn[int(n)*l.words+i/64]>>(i%64)&1 != 0
}
