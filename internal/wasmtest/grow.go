// Package wasmtest builds small modules in code for the tests of the
// instrumenting packages.
package wasmtest

import "github.com/pathprof/pathprof/internal/wasm"

// GrowModule is a command that grows its memory step by step (0, 1 or 2
// pages at a time, up to steps times) and records, at address 16·i, what
// memory.grow answered, what memory.size says then, and whether the first
// new page was all zero (sampled every 4 KiB) before it writes a marker
// into it. Two br_tables of 40 arms in the loop give it some 1,600
// distinct paths, enough to grow a hash table of counters several times.
// maxPages, if not 0, is its declared maximum.
func GrowModule(steps int32, maxPages uint64) []byte {
	const i, r, s, j, z = 0, 1, 2, 3, 4
	var a wasm.Asm
	a.Block(wasm.OpBlock).Block(wasm.OpLoop)
	a.Idx(wasm.OpLocalGet, i).I32(steps).Op(wasm.OpI32GeU).Idx(wasm.OpBrIf, 1)
	for _, mul := range []int32{7, 13} {
		a.Block(wasm.OpBlock)
		for range 40 {
			a.Block(wasm.OpBlock)
		}
		a.Idx(wasm.OpLocalGet, i)
		if mul == 13 {
			a.I32(40).Op(wasm.OpI32DivU) // the pair of arms runs through 40×40
		}
		a.I32(mul).Op(wasm.OpI32Mul).I32(40).Op(wasm.OpI32RemU)
		labels := make([]uint32, 41)
		for k := range labels {
			labels[k] = uint32(min(k, 39))
		}
		a.BrTable(labels)
		for k := range 40 {
			a.Op(wasm.OpEnd)
			a.Idx(wasm.OpLocalGet, s).I32(int32(k)*mul).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, s)
			a.Idx(wasm.OpBr, uint32(39-k))
		}
		a.Op(wasm.OpEnd)
	}
	// Every 50 iterations, grow by (i/50) % 3 pages.
	a.Idx(wasm.OpLocalGet, i).I32(50).Op(wasm.OpI32RemU).Op(wasm.OpI32Eqz).Block(wasm.OpIf)
	{
		a.Idx(wasm.OpLocalGet, i).I32(50).Op(wasm.OpI32DivU).I32(3).Op(wasm.OpI32RemU).Idx(wasm.OpMemGrow, 0).Idx(wasm.OpLocalSet, r)
		rec := func() { a.Idx(wasm.OpLocalGet, i).I32(50).Op(wasm.OpI32DivU).I32(16).Op(wasm.OpI32Mul) }
		rec()
		a.Idx(wasm.OpLocalGet, r).Mem(wasm.OpI32Store, 2, 0)
		rec()
		a.Idx(wasm.OpMemSize, 0).Mem(wasm.OpI32Store, 2, 4)
		// A page came: check it is zero, then mark it.
		a.Idx(wasm.OpLocalGet, r).I32(-1).Op(wasm.OpI32Ne).Idx(wasm.OpMemSize, 0).Idx(wasm.OpLocalGet, r).Op(wasm.OpI32GtU).Op(wasm.OpI32And).Block(wasm.OpIf)
		{
			a.I32(0).Idx(wasm.OpLocalSet, z).I32(0).Idx(wasm.OpLocalSet, j)
			a.Block(wasm.OpLoop)
			a.Idx(wasm.OpLocalGet, z).Idx(wasm.OpLocalGet, r).I32(16).Op(wasm.OpI32Shl).Idx(wasm.OpLocalGet, j).Op(wasm.OpI32Add).Mem(wasm.OpI32Load, 2, 0).Op(wasm.OpI32Or).Idx(wasm.OpLocalSet, z)
			a.Idx(wasm.OpLocalGet, j).I32(4096).Op(wasm.OpI32Add).Idx(0x22, j).I32(65536).Op(wasm.OpI32LtU).Idx(wasm.OpBrIf, 0)
			a.Op(wasm.OpEnd)
			rec()
			a.Idx(wasm.OpLocalGet, z).Mem(wasm.OpI32Store, 2, 8)
			a.Idx(wasm.OpLocalGet, r).I32(16).Op(wasm.OpI32Shl).Idx(wasm.OpLocalGet, i).I32(1).Op(wasm.OpI32Add).Mem(wasm.OpI32Store, 2, 100)
		}
		a.Op(wasm.OpEnd)
	}
	a.Op(wasm.OpEnd)
	a.Idx(wasm.OpLocalGet, i).I32(1).Op(wasm.OpI32Add).Idx(wasm.OpLocalSet, i)
	a.Idx(wasm.OpBr, 0)
	a.Op(wasm.OpEnd).Op(wasm.OpEnd)
	// The checksum of the arms taken, for the record.
	a.I32(8192).Idx(wasm.OpLocalGet, s).Mem(wasm.OpI32Store, 2, 0)
	a.Op(wasm.OpEnd)
	lim := wasm.Limits{Min: 1}
	if maxPages > 0 {
		lim = wasm.Limits{Flags: 1, Min: 1, Max: maxPages}
	}
	m := &wasm.Module{
		Version:  1,
		Types:    []wasm.FuncType{{}},
		Funcs:    []uint32{0},
		Memories: []wasm.Limits{lim},
		Exports:  []wasm.Export{{Name: "_start", Kind: wasm.KindFunc}, {Name: "memory", Kind: wasm.KindMemory}},
		Code:     []wasm.Code{{Body: append([]byte{1, 5, wasm.I32}, a.B...), ExprOff: 3}},
	}
	for _, id := range []byte{wasm.SecType, wasm.SecFunction, wasm.SecMemory, wasm.SecExport, wasm.SecCode} {
		m.Touch(id)
	}
	b, err := m.Encode()
	if err != nil {
		panic(err)
	}
	return b
}
