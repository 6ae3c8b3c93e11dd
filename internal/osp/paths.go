// Paths back into blocks: the blocks of the path a function reported, from
// its packed register value, with a cache of the paths seen last.

package osp

import (
	"fmt"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/instrument"
	"github.com/pathprof/pathprof/internal/numbering"
)

// recentPath is an entry of Instrumented.recent: the blocks of function
// fn's path with packed value p, where ok.
type recentPath struct {
	fn     uint32
	ok     bool
	p      uint64
	blocks []uint32
}

// recentBits is the log2 of Instrumented.recent's entries.
const recentBits = 14

// pathFunc is one function as the program reports its paths.
type pathFunc struct {
	index     uint32
	blockwise bool // every block is a path whose id is its node
	dag       *cfg.DAG
	num       *numbering.Numbering
	block     []int32 // per node: the block id, or -1 (entry, exit, a call's continuation)
	// paths caches the blocks of the paths seen so far.
	paths map[uint64][]uint32
}

// blocks returns the block ids of path id, which the program says makes
// n block entries.
func (pf *pathFunc) blocks(id uint64, n uint32) ([]uint32, error) {
	bs, ok := pf.paths[id]
	if !ok {
		var err error
		if bs, err = pf.regenerate(id); err != nil {
			return nil, err
		}
		if pf.paths == nil {
			pf.paths = map[uint64][]uint32{}
		}
		pf.paths[id] = bs
	}
	if uint32(len(bs)) != n {
		return nil, fmt.Errorf("osp: function %d, path %d: %d blocks reported, %d regenerated", pf.index, id, n, len(bs))
	}
	return bs, nil
}

// regenerate returns the block ids of path id.
func (pf *pathFunc) regenerate(id uint64) ([]uint32, error) {
	if pf.blockwise {
		if id >= uint64(len(pf.block)) || pf.block[id] < 0 {
			return nil, fmt.Errorf("osp: function %d has no block %d", pf.index, id)
		}
		return []uint32{uint32(pf.block[id])}, nil
	}
	edges, _, err := numbering.Regenerate(pf.num, pf.dag, id)
	if err != nil {
		return nil, fmt.Errorf("osp: function %d: %w", pf.index, err)
	}
	var bs []uint32
	for _, e := range edges {
		if to := pf.dag.Edges[e].To; pf.block[to] >= 0 {
			bs = append(bs, uint32(pf.block[to]))
		}
	}
	return bs, nil
}

// countMask keeps the block entries of a packed register value.
const countMask = 1<<instrument.CountBits - 1

// pathBlocks returns the blocks of the path that function fn reported
// with packed register value p.
func (ins *Instrumented) pathBlocks(fn uint32, p uint64) ([]uint32, error) {
	if ins.recent == nil {
		ins.recent = make([]recentPath, 1<<recentBits)
	}
	r := &ins.recent[((p^uint64(fn)<<32)*0x9e3779b97f4a7c15)>>(64-recentBits)]
	if r.ok && r.p == p && r.fn == fn {
		return r.blocks, nil
	}
	if int(fn) >= len(ins.funcs) || ins.funcs[fn] == nil {
		return nil, fmt.Errorf("osp: a path of function %d, which has no blocks", fn)
	}
	bs, err := ins.funcs[fn].blocks(p>>instrument.CountBits, uint32(p&countMask))
	if err == nil {
		*r = recentPath{fn: fn, ok: true, p: p, blocks: bs}
	}
	return bs, err
}
