// Tests of the block model: its choices, any block sequence coded and
// decoded, and the compact code's size.

package osp

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
)

// TestBlockModel codes windows of real runs with the model of their
// program's blocks: every code decodes to its window, and the code is
// smaller than the ids' differences.
func TestBlockModel(t *testing.T) {
	ps := append(testprogs.CRuns(t), program{Name: "hello", Path: testprogs.GoHello(t)})
	for _, p := range ps {
		if p.Name == "records" || p.Name == "grid" {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			samples, ins := runSamples(t, p, 512, 64)
			m := ins.model
			var none *blockModel
			var modelled, plain, blocks int
			for _, s := range samples {
				for _, l := range []int{2, 8, 64} {
					w := s[:l]
					code, _ := m.encode(nil, w, nil, nil)
					if got := m.decode(nil, code, l); !slices.Equal(got, w) {
						t.Fatalf("%v came back as %v", w, got)
					}
					if len(code) > 6+(l-1)*m.stepBytes() {
						t.Fatalf("%d bytes for %d blocks, more than the bound", len(code), l)
					}
					if l == 64 {
						modelled += len(code)
						plain += len(first(none.encode(nil, w, nil, nil)))
						blocks += l
					}
				}
			}
			t.Logf("windows of 64 blocks: %.2f bytes a block, %.2f as differences", float64(modelled)/float64(blocks), float64(plain)/float64(blocks))
			if 2*modelled > plain {
				t.Errorf("the model's code took %d bytes, the differences %d: not half", modelled, plain)
			}
		})
	}
}

// TestBlockModelAnySequence codes sequences that no run makes: walks
// through the model's choices with random jumps, and random ids.
func TestBlockModelAnySequence(t *testing.T) {
	m := instrumented(t, testprogs.CRuns(t)[0]).model
	r := rand.New(rand.NewPCG(3, 4))
	n := uint32(len(m.at))
	for range 2000 {
		w := make([]uint32, 1+r.IntN(100))
		w[0] = r.Uint32N(n)
		var stack []int32
		for i := 1; i < len(w); i++ {
			next, ret := m.choices(w[i-1], stack)
			all := append(slices.Clone(next), ret...)
			switch k := r.IntN(10); {
			case k < 7 && len(all) > 0:
				w[i] = all[r.IntN(len(all))]
			case k < 9:
				w[i] = r.Uint32N(n)
			default:
				w[i] = r.Uint32()
			}
			stack = m.step(stack, w[i-1], w[i], slices.Contains(next, w[i]))
		}
		code, _ := m.encode(nil, w, nil, nil)
		if got := m.decode(nil, code, len(w)); !slices.Equal(got, w) {
			t.Fatalf("%v came back as %v", w, got)
		}
	}
}

func first[A, B any](a A, _ B) A { return a }

// TestCompact samples the same runs with the block model's code and
// with Options.Plain.
// With room for every subpath (τ stays 1) the two profiles hold the same
// subpaths with the same counts; under a bound that thins them, the
// compact hot list holds more subpaths in its bytes, and its longest
// length is thinned less.
func TestCompact(t *testing.T) {
	ctx := context.Background()
	for _, r := range testprogs.CRuns(t) {
		if r.Name != "calc" {
			continue
		}
		_, prog := compiled(t, r, ModeSample)
		sample := func(memory int, compact bool) *Profile {
			prof, _, err := prog.Sample(ctx, Options{Memory: memory, MeanSkip: 2000, Plain: !compact}, r.Config(t, &bytes.Buffer{}))
			if err != nil {
				t.Fatal(err)
			}
			if prof.Sampling.Compact != compact {
				t.Errorf("the profile says compact %v, sampled with %v", prof.Sampling.Compact, compact)
			}
			if prof.Memory.HotListBytes > memory {
				t.Errorf("compact %v: %d bytes, bound %d", compact, prof.Memory.HotListBytes, memory)
			}
			return prof
		}
		key := func(s Subpath) string { return fmt.Sprint(s.Length, s.Count, s.Squares, s.Blocks) }
		plain, compact := sample(2<<20, false), sample(2<<20, true)
		for _, l := range plain.Sampling.ByLength {
			if l.Tau != 1 {
				t.Fatalf("length %d thinned at 2 MiB: the comparison needs room", l.Length)
			}
		}
		if a, b := len(plain.Subpaths), len(compact.Subpaths); a != b {
			t.Fatalf("%d subpaths without the model, %d with", a, b)
		}
		for i := range plain.Subpaths {
			if a, b := key(plain.Subpaths[i]), key(compact.Subpaths[i]); a != b {
				t.Fatalf("subpath %d: %s without the model, %s with", i, a, b)
			}
		}
		plain, compact = sample(96<<10, false), sample(96<<10, true)
		last := len(plain.Sampling.ByLength) - 1
		tp, tc := plain.Sampling.ByLength[last].Tau, compact.Sampling.ByLength[last].Tau
		if tp == 1 {
			t.Fatal("96 KiB did not thin the plain hot list: the test tests nothing")
		}
		if tc >= tp || compact.Memory.Pairs <= plain.Memory.Pairs {
			t.Errorf("at 96 KiB: τ of the longest %v and %d pairs compact, %v and %d plain", tc, compact.Memory.Pairs, tp, plain.Memory.Pairs)
		}
		t.Logf("at 96 KiB: τ of the longest %.3g and %d pairs compact, %.3g and %d plain", tc, compact.Memory.Pairs, tp, plain.Memory.Pairs)
	}
}
