package counters

import (
	"context"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/wasm"
)

// instantiate instantiates mod in a runtime of its own, closed when the
// test ends.
func instantiate(t *testing.T, ctx context.Context, mod []byte) api.Module {
	t.Helper()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	inst, err := rt.Instantiate(ctx, mod)
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// testLayout is the layout of the tests that drive the counter module:
// functions with no, a few, many and more paths than fit a dense array,
// hashed from the start with hashSlots slots; and its counter module.
func testLayout(t *testing.T, hashSlots uint32) ([]uint64, *Layout, []byte) {
	t.Helper()
	paths := []uint64{0, 10, 1 << 40, 3, 5000, 1 << 62}
	l, err := NewLayout(paths, Options{DenseMax: 100, HashSlots: hashSlots})
	if err != nil {
		t.Fatal(err)
	}
	mod, err := l.Module()
	if err != nil {
		t.Fatal(err)
	}
	return paths, l, mod
}

// TestCounts drives the generated module with random counts, enough to
// grow the hash table several times, and compares what Read gets back with
// counts kept in Go.
func TestCounts(t *testing.T) {
	paths, l, mod := testLayout(t, 1024)
	if _, err := wasm.Decode(mod); err != nil {
		t.Fatalf("generated module does not decode: %v", err)
	}
	ctx := context.Background()
	inst := instantiate(t, ctx, mod)
	dense, hashed := inst.ExportedFunction(CountName), inst.ExportedFunction(CountHashName)
	denseN := inst.ExportedFunction(CountNName)
	want := Counts{}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20000; i++ {
		f := uint32(1 + r.IntN(len(paths)-1))
		p := r.Uint64N(min(paths[f], 3000)) // repeats, and many distinct keys
		var err error
		n := uint64(1)
		if l.Funcs[f].Kind == KindDense && r.IntN(3) == 0 {
			n = r.Uint64N(5) // zero too: a flush of a counter that did not move
			_, err = denseN.Call(ctx, uint64(l.Slot(f))+p, n)
		} else if l.Funcs[f].Kind == KindDense {
			_, err = dense.Call(ctx, uint64(l.Slot(f))+p)
		} else {
			n = 1 + r.Uint64N(3) // a flush of a loop's counter adds more than one
			_, err = hashed.Call(ctx, uint64(f), p, n)
		}
		if err != nil {
			t.Fatal(err)
		}
		if want[f] == nil {
			want[f] = map[uint64]uint64{}
		}
		if n > 0 {
			want[f][p] += n
		}
	}
	mem, ok := inst.Memory().Read(0, inst.Memory().Size())
	if !ok {
		t.Fatal("cannot read memory")
	}
	got, err := Read(mem)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d functions, want %d", len(got), len(want))
	}
	distinct := 0
	for f, ps := range want {
		for p, c := range ps {
			if got[f][p] != c {
				t.Fatalf("f%d path %d: got %d, want %d", f, p, got[f][p], c)
			}
			distinct++
		}
		if len(got[f]) != len(ps) {
			t.Fatalf("f%d: got %d paths, want %d", f, len(got[f]), len(ps))
		}
	}
	if l.Funcs[2].Kind != KindHash || l.Funcs[1].Kind != KindDense {
		t.Fatalf("unexpected layout %+v", l.Funcs)
	}
	t.Logf("%d distinct counters, memory %d bytes", distinct, len(mem))
}

// TestTraps checks that counts no instrumentation should produce trap.
func TestTraps(t *testing.T) {
	l, _ := NewLayout([]uint64{0, 10}, Options{})
	mod, _ := l.Module()
	ctx := context.Background()
	inst := instantiate(t, ctx, mod)
	// Function 0 has no counters, 1 is dense, 2 does not exist.
	hashed := inst.ExportedFunction(CountHashName)
	for _, c := range [][2]uint64{{0, 0}, {1, 3}, {2, 0}} {
		if _, err := hashed.Call(ctx, c[0], c[1], 1); err == nil {
			t.Errorf("count_hash(%d, %d) did not trap", c[0], c[1])
		}
	}
	dense := inst.ExportedFunction(CountName)
	if _, err := dense.Call(ctx, uint64(l.Slot(1))+10); err == nil {
		t.Errorf("count past the dense arrays did not trap")
	}
	if _, err := dense.Call(ctx, uint64(l.Slot(1))+9); err != nil {
		t.Errorf("count of the last dense slot: %v", err)
	}
	denseN := inst.ExportedFunction(CountNName)
	if _, err := denseN.Call(ctx, uint64(l.Slot(1))+10, 1); err == nil {
		t.Errorf("count_n past the dense arrays did not trap")
	}
}

// TestLayoutSmallFirst is the property that the dense budget goes to the
// functions with the fewest paths: on random path counts and budgets, no
// hashed function within DenseMax has fewer paths than a dense one, the
// arrays lie in order of their paths without overlapping, where Read
// finds them from the descriptors, and they fit the budget.
func TestLayoutSmallFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 500; trial++ {
		paths := make([]uint64, 1+r.IntN(60))
		for f := range paths {
			switch r.IntN(4) {
			case 0: // not profiled
			case 1:
				paths[f] = 1 + r.Uint64N(4)
			default:
				paths[f] = 1 + r.Uint64N(1<<uint(1+r.IntN(14)))
			}
		}
		opt := Options{DenseMax: 1 + r.Uint64N(1<<12), DenseBudget: uint64(16+4*len(paths)) + r.Uint64N(1<<16)}
		l, err := NewLayout(paths, opt)
		if err != nil {
			t.Fatal(err)
		}
		var maxDense uint64
		minHashed := uint64(1<<64 - 1)
		var dense []int
		for f, fl := range l.Funcs {
			switch {
			case paths[f] == 0:
				if fl.Kind == KindDense || fl.Kind == KindHash {
					t.Fatalf("trial %d: function %d is not profiled, yet has kind %d", trial, f, fl.Kind)
				}
			case fl.Kind == KindDense:
				if fl.Paths != paths[f] {
					t.Fatalf("trial %d: function %d's array of %d paths, want %d", trial, f, fl.Paths, paths[f])
				}
				dense = append(dense, f)
				maxDense = max(maxDense, paths[f])
			case fl.Kind == KindHash:
				if paths[f] <= opt.DenseMax {
					minHashed = min(minHashed, paths[f])
				}
			default:
				t.Fatalf("trial %d: function %d of %d paths has kind %d", trial, f, paths[f], fl.Kind)
			}
		}
		// The arrays follow the descriptors, fewest paths first, then
		// by function index, as Read lays them out again.
		sort.SliceStable(dense, func(i, j int) bool { return paths[dense[i]] < paths[dense[j]] })
		end := (16 + 4*uint64(len(paths)) + 7) &^ 7
		for _, f := range dense {
			if uint64(l.Funcs[f].Base) != end {
				t.Fatalf("trial %d: function %d's array at %d, want at %d", trial, f, l.Funcs[f].Base, end)
			}
			end += 8 * paths[f]
		}
		mem := make([]byte, l.Size)
		copy(mem, l.header())
		ds, err := denseArrays(mem, uint64(len(paths)))
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != len(dense) {
			t.Fatalf("trial %d: the descriptors give %d dense arrays, the layout %d", trial, len(ds), len(dense))
		}
		for _, d := range ds {
			if fl := l.Funcs[d.f]; fl.Kind != KindDense || uint64(fl.Base) != d.base || fl.Paths != d.paths {
				t.Fatalf("trial %d: the descriptors put function %d's %d paths at %d, the layout %d at %d", trial, d.f, d.paths, d.base, fl.Paths, fl.Base)
			}
		}
		if end > opt.DenseBudget || uint64(l.DenseEnd) != end {
			t.Fatalf("trial %d: arrays end at %d (layout says %d), budget %d", trial, end, l.DenseEnd, opt.DenseBudget)
		}
		if maxDense > minHashed {
			t.Fatalf("trial %d: a function of %d paths is hashed while one of %d is dense", trial, minHashed, maxDense)
		}
	}
}
