package report

// This file makes the paths of a function print differently: blocks that
// would show alike get their offsets, and paths through the same blocks
// their ids.

import (
	"fmt"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// placeBlocks places every block of pf's paths and cuts once, by offset.
// Blocks at a source position that another block of the function starts
// at too get their offsets in the function, so that no two blocks read
// alike; which blocks those are depends on the module alone, so that a
// path reads the same in every profile of the module.
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
	for off, b := range blocks {
		if b.File != "" && loc.twins(code, pf.Index)[b.At] {
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

// twins returns the source positions (file:line:column) at which more
// than one block of the function whose body is code starts.
func (l *locator) twins(code *wasm.Code, idx uint32) map[string]bool {
	if t, ok := l.twinsOf[idx]; ok {
		return t
	}
	t := map[string]bool{}
	g, err := cfg.Build(l.m, int(idx-l.m.NumImportedFuncs), l.cfgOpt)
	if err == nil {
		seen := map[string]bool{}
		for _, b := range g.Blocks[cfg.Exit+1:] {
			at, ok := l.position(code.OrigOff + int(b.Start))
			if !ok {
				continue
			}
			t[at] = seen[at]
			seen[at] = true
		}
	}
	l.twinsOf[idx] = t
	return t
}
