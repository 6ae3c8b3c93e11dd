package numbering

// This file numbers one function of a module as the instrumenter does,
// for readers of a profile that turn its path ids back into edges.

import (
	"fmt"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/wasm"
)

// Function is one defined function of a module numbered as the
// instrumenter numbers it, so that a profile's path ids can be turned back
// into edges.
type Function struct {
	Graph *cfg.Graph
	DAG   *cfg.DAG
	Num   *Numbering
	// Cuts are the nodes the DAG was cut at to fit MaxPaths.
	Cuts []int32
	// Off is the file offset of the function's body: Graph offsets count
	// from it.
	Off int
}

// NumberFunction builds and numbers the graph of the module's defined
// function def, cut to MaxPaths.
func NumberFunction(m *wasm.Module, def int, opt cfg.Options) (*Function, error) {
	g, err := cfg.Build(m, def, opt)
	if err != nil {
		return nil, err
	}
	d, n, cuts, err := NumberCut(g, MaxPaths)
	if err != nil {
		return nil, err
	}
	return &Function{Graph: g, DAG: d, Num: n, Cuts: cuts, Off: m.Code[def].OrigOff}, nil
}

// Path returns the DAG edges of the path with the given id, checking that
// they enter the blocks (file offsets) a profile lists for it.
func (f *Function) Path(id uint64, blocks []int) ([]int32, error) {
	edges, err := regenerate(f.Num, f.DAG, id)
	if err != nil {
		return nil, err
	}
	i := 0
	for _, e := range edges {
		to := f.DAG.Edges[e].To
		if to == cfg.Exit {
			continue
		}
		if i >= len(blocks) || blocks[i] != f.Off+int(f.Graph.Blocks[to].Start) {
			return nil, fmt.Errorf("path %d: its blocks are not those its id gives in the module", id)
		}
		i++
	}
	if i != len(blocks) {
		return nil, fmt.Errorf("path %d: its blocks are not those its id gives in the module", id)
	}
	return edges, nil
}
