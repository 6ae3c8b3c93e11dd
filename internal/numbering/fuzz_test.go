package numbering

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
)

// decodeDAG turns bytes into a DAG of at most 12 nodes: the first byte picks
// the size, the second the weights and the cut limit, and each following
// pair an edge between two ranks (high bit of the second: dummy).
func decodeDAG(data []byte) (*cfg.DAG, []float64, int64) {
	if len(data) < 2 {
		return nil, nil, 0
	}
	nn := 2 + int(data[0])%11
	mode := data[1]
	var seed uint64
	for _, b := range data {
		seed = seed*131 + uint64(b)
	}
	var specs []spec
	for k := 2; k+1 < len(data) && len(specs) < 40; k += 2 {
		i := int(data[k]) % (nn - 1)
		j := i + 1 + int(data[k+1]&0x3f)%(nn-1-i)
		specs = append(specs, spec{i, j, data[k+1]&0x80 != 0})
	}
	r := rand.New(rand.NewPCG(seed, 1))
	d := ranked(nn, r.Perm(nn-2), specs, seed)
	var w []float64
	if mode&1 != 0 {
		w = make([]float64, len(d.Edges), len(d.Edges)+1)
		for i := range w {
			w[i] = float64(data[(i+2)%len(data)] % 5)
		}
		if mode&2 != 0 {
			w = append(w, float64(mode>>5))
		}
	}
	return d, w, 1 + int64(mode>>2)
}

func FuzzNumbering(f *testing.F) {
	f.Add([]byte{5, 0, 0, 1, 1, 2, 1, 3, 2, 4, 3, 4})
	f.Add([]byte{11, 3, 0, 1, 0, 0x85, 1, 2, 1, 3, 2, 0x84, 3, 0x8a, 5, 6, 7, 8, 9, 10})
	f.Add([]byte{7, 0xff, 0, 0x81, 0, 2, 1, 0x82, 2, 3, 3, 0x83, 0, 4, 4, 5})
	f.Add([]byte{12, 0x10, 0, 1, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		d, w, limit := decodeDAG(data)
		if d == nil {
			return
		}
		if checkDAG(t, d, w, uint64(len(data))) < 0 {
			return
		}
		full, err := number(d, math.MaxInt64, MostPathsFirst)
		if err != nil {
			t.Fatal(err)
		}
		if full.Paths() <= limit {
			return
		}
		cr, err := cut(d, limit)
		if err != nil {
			return // cutting may not get this low; TestCutRandom covers when it must
		}
		checkCut(t, d, cr, limit, 10, rand.New(rand.NewPCG(uint64(limit), 3)))
	})
}
