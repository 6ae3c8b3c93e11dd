package report

// This file makes the paths of a function print differently: blocks that
// would show alike get their offsets.

import (
	"fmt"
)

// distinguish sets the At and Label of f's paths so that no two paths of
// the same kind print alike.
func distinguish(f *Function, loc *locator) {
	if loc != nil {
		// Blocks at one source position (or none) are told apart by offset.
		offs := map[string]map[int]bool{}
		each(f, func(b *Block) {
			if offs[b.At] == nil {
				offs[b.At] = map[int]bool{}
			}
			offs[b.At][b.Offset] = true
		})
		each(f, func(b *Block) {
			if len(offs[b.At]) > 1 && b.File != "" {
				b.At += fmt.Sprintf("(+0x%x)", b.FuncOffset)
			}
		})
	}
	// Two paths through the same blocks could differ only in the edge
	// taken between two of them, were there two; their ids tell them apart.
	seen := map[string]int{}
	for i := range f.Paths {
		p := &f.Paths[i]
		p.Label = blockList(p.Blocks, 0, 0)
		seen[p.Kind+" "+p.Label]++
	}
	for i := range f.Paths {
		p := &f.Paths[i]
		if seen[p.Kind+" "+p.Label] > 1 {
			p.suffix = fmt.Sprintf(" (path %d)", p.ID)
			p.Label += p.suffix
		}
	}
}

// each calls fn on every block of f's paths and cuts.
func each(f *Function, fn func(*Block)) {
	for i := range f.Cuts {
		fn(&f.Cuts[i])
	}
	for i := range f.Paths {
		for j := range f.Paths[i].Blocks {
			fn(&f.Paths[i].Blocks[j])
		}
	}
}
