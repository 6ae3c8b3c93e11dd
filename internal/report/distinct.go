package report

// This file makes the paths of a function print differently: blocks that
// would show alike get their offsets, and paths through the same blocks
// their ids.

import (
	"fmt"

	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// placeBlocks places every block of pf's paths and cuts once, by offset.
// Blocks at one source position (or none) get their offsets in the
// function too, so that no two blocks of the function read alike.
func placeBlocks(loc *locator, code *wasm.Code, name string, pf profile.Function) (map[int]Block, error) {
	blocks := map[int]Block{}
	place := func(off int) error {
		if _, ok := blocks[off]; ok {
			return nil
		}
		b, err := loc.block(code, name, off)
		blocks[off] = b
		return err
	}
	for _, off := range pf.Cuts {
		if err := place(off); err != nil {
			return nil, fmt.Errorf("cut: %v", err)
		}
	}
	for _, pp := range pf.Paths {
		for _, off := range pp.Blocks {
			if err := place(off); err != nil {
				return nil, fmt.Errorf("path %d: %v", pp.ID, err)
			}
		}
	}
	if loc == nil {
		return blocks, nil // file offsets, all different
	}
	seen := map[string]int{}
	for _, b := range blocks {
		seen[b.At]++
	}
	for off, b := range blocks {
		if seen[b.At] > 1 && b.File != "" {
			b.At += fmt.Sprintf("(+0x%x)", b.FuncOffset)
			blocks[off] = b
		}
	}
	return blocks, nil
}

// label sets the Label of f's paths. Two paths through the same blocks
// could differ only in the edge taken between two of them, were there
// two; their ids tell them apart.
func label(f *Function) {
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
