package partition

// This file chooses which heavy functions P3 slices, sharing out their calls
// or a loop's iterations among copies, and prices the slots.

import (
	"cmp"
	"math"
	"slices"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/wasm"
)

// chooseSlices shares out the calls of the heaviest functions among
// copies (whole or split: whole holds each function's whole cost), or the
// iterations of one of their three heaviest loops, or of one loop of each
// of their nests together where the loop headers are cuts (loopNests),
// where that lowers the largest copy load by LPT: a function in g
// slots costs each slot about a g-th of its cost, plus the test that every
// copy sharing its calls runs at each call, or, for a loop, the probes
// around the loop that every copy sharing it runs. So it pays for
// functions that run many paths per call, a loop or a long function,
// which no class split can divide: every class of a loop pays each
// iteration's back edge. Slots are priced by slotCosts and
// loopCost.slotCosts, and a loop's slots also by what their replicas
// cost to compile (compilePrice). Like splits, the slicings kept must
// lower the largest load by minSplitGain in all.
func chooseSlices(perFunc [][]task, whole []int64, k int, m *wasm.Module, graphs []*cfg.DAG, weights [][]float64, shareLoop func(int, int32) bool, shareLoops func(int, []int32) bool, loopBytes func(int, int32) int, hedged, recursive []bool) {
	type option struct {
		def  int
		cost int64
	}
	type slicing struct {
		g     int
		loop  int32
		loops []int32
		costs []int64
		// spread deals the iterations out by a test (FuncInfo.Spread).
		spread bool
		// hedged slots go to copies 0 .. g-1, one each, whatever
		// their estimated costs (see Options.Guessed).
		hedged bool
	}
	var tries []option
	costs := make([][]int64, len(perFunc))
	for i, ts := range perFunc {
		costs[i] = taskCosts(ts)
		if len(ts) > 0 && weights[i] != nil {
			tries = append(tries, option{i, whole[i]})
		}
	}
	slices.SortStableFunc(tries, func(a, b option) int { return cmp.Compare(b.cost, a.cost) })
	if len(tries) > maxSplitTries {
		tries = tries[:maxSplitTries]
	}
	// Unrolled loops grow the copies' code: at most a quarter more, or
	// unrolledBytes on small modules.
	budget := int64(unrolledBytes)
	for _, c := range m.Code {
		budget += int64(len(c.Body)) / 4
	}
	set := newLoadSet(costs, k)
	base := set.maxWith(nil, nil)
	best := base
	chosen := map[int]slicing{}
	for _, t := range tries {
		var alts []slicing
		// A slot costs at least the calls: slicing a function that
		// runs about one sequence per call cannot pay. And calls may
		// differ: a function called a few times is not sliced.
		if calls := Calls(graphs[t.def], weights[t.def]); calls >= minSliceCalls*2 && 2*calls < t.cost {
			for g := 2; g <= min(k, MaxSlices, int(calls/minSliceCalls)); g++ {
				alts = append(alts, slicing{g: g, costs: slotCosts(t.cost, calls, g)})
			}
		}
		long := int32(0) // a loop hedged whoever calls its function
		nest := int32(0) // the same for its nest's iterations, unless it recurses
		size := int64(len(m.Code[t.def].Body))
		// bodyBytes is what each extra replica of the loop at h repeats.
		bodyBytes := func(h int32) int64 {
			if loopBytes == nil {
				return size
			}
			return int64(loopBytes(t.def, h))
		}
		var loops []*loopCost // every loop, found once for both kinds of slicing
		if shareLoop != nil {
			loops = allLoops(graphs[t.def], weights[t.def])
			for _, l := range heavyLoops(loops, func(h int32) bool { return shareLoop(t.def, h) }) {
				body := bodyBytes(l.header)
				for g := 2; g <= min(k, MaxSlices, int(l.perEntry())); g++ {
					if int64(g-1)*size > budget || int64(g)*size > maxUnrolled {
						continue
					}
					price := compilePrice(size, l.probes, body, g)
					if hedged != nil && price > 0 {
						// An estimate's loads cannot pay for it.
						continue
					}
					spread := l.spreads(g, hedged != nil)
					costs := l.slotCosts(t.cost, g, spread)
					for j := range costs {
						costs[j] += price
					}
					alts = append(alts, slicing{g: g, loop: l.header, costs: costs, spread: spread})
					if hedged != nil && long == 0 && l.perEntry() >= hedgedTrips {
						long = l.header
					}
					if hedged != nil && nest == 0 && l.nested >= hedgedTrips*l.entries {
						nest = l.header
					}
				}
			}
		}
		several := -1 // the widest slicing of several loop nests, in alts
		if shareLoops != nil {
			hs, set, body := loopNests(loops, size, func(hs []int32) bool { return shareLoops(t.def, hs) }, bodyBytes, hedged != nil)
			for g := 2; len(hs) > 1 && g <= min(k, MaxSlices); g++ {
				if int64(g-1)*body > budget || size+int64(g-1)*body > maxUnrolled || slices.ContainsFunc(set, func(l *loopCost) bool { return l.perEntry() < float64(g) }) {
					continue
				}
				price := compilePrice(size, set[0].probes, body, g)
				if hedged != nil && price > 0 {
					continue
				}
				all := together(set)
				spread := all.spreads(g, hedged != nil)
				costs := all.slotCosts(t.cost, g, spread)
				for j := range costs {
					costs[j] += price
				}
				alts = append(alts, slicing{g: g, loop: hs[0], loops: hs[1:], costs: costs, spread: spread})
				several = len(alts) - 1
			}
		}
		before := costs[t.def]
		if hedged != nil && !hedged[t.def] && long == 0 && recursive != nil && !recursive[t.def] {
			long = nest
		}
		if hedged != nil && (hedged[t.def] || long != 0) {
			// The most slots of the heaviest loop that fits.
			var pick *slicing
			for i, a := range alts {
				if a.loop != 0 && (long == 0 || a.loop == long) && (pick == nil || a.loop == pick.loop && a.g > pick.g) {
					pick = &alts[i]
				}
			}
			if hedged[t.def] && long == 0 && several >= 0 {
				// Every loop nest of a function cut at its loop
				// headers, if they fit: the estimate's choice of one
				// is the guess the hedge is for.
				pick = &alts[several]
			}
			if pick != nil {
				pick.hedged = true
				chosen[t.def] = *pick
				set.replace(costs[t.def], pick.costs)
				costs[t.def] = pick.costs
				budget -= int64(pick.g-1) * int64(len(m.Code[t.def].Body))
			}
			continue
		}
		for _, a := range alts {
			if l := set.maxWith(before, a.costs); l < best {
				best, chosen[t.def] = l, a
			}
		}
		if a, ok := chosen[t.def]; ok {
			set.replace(before, a.costs)
			costs[t.def] = a.costs
			if a.loop != 0 {
				budget -= int64(a.g-1) * int64(len(m.Code[t.def].Body))
			}
		}
	}
	if hedged == nil && best > base-int64(float64(base)*minSplitGain) {
		return
	}
	for def, a := range chosen {
		ts := make([]task, a.g)
		for j, c := range a.costs {
			ts[j] = task{def: def, cost: c, slots: a.g, slot: j, loop: a.loop, loops: a.loops, spread: a.spread, pinned: a.hedged}
		}
		perFunc[def] = ts
	}
}

// loopNests chooses, of a function's loops ls (allLoops), those that may be
// shared out together (share, Options.ShareLoops), size being the
// function's bytes: the outermost shareable loop of each nest
// whose work by the weights is at least nestShare of the heaviest loop's,
// heaviest first. It returns their headers, costs and the bytes their
// bodies hold (a replica repeats them), or fewer than two headers when
// fewer qualify. Planned from an estimate (guessed), it leaves out a
// loop whose replicas would take the function past compileKnee at two
// slots.
func loopNests(ls []*loopCost, size int64, share func([]int32) bool, bodyBytes func(int32) int64, guessed bool) ([]int32, []*loopCost, int64) {
	if len(ls) < 2 {
		return nil, nil, 0
	}
	var hs []int32
	var set []*loopCost
	var body int64
	for _, l := range ls {
		if l.inside < ls[0].inside*nestShare {
			break
		}
		// Alone, the set checks what shareLoop does.
		if !share(append(slices.Clone(hs), l.header)) {
			continue
		}
		b := bodyBytes(l.header)
		if guessed && compilePrice(size, l.probes, body+b, 2) > 0 {
			continue
		}
		hs, set, body = append(hs, l.header), append(set, l), body+b
	}
	return hs, set, body
}

// nestShare is the least estimated work of a loop nest that the hedge
// shares out with the heaviest, as a share of the heaviest's: a nest two
// loops shallower than it, by the estimate's trips per loop.
const nestShare = 1.0 / 100

// hedgedTrips is the fewest iterations per entry, by the estimate, of a
// loop that is hedged whoever calls its function: an interpreter's
// dispatch loop, whose iterations outnumber its entries so far that
// what every copy pays around it at each entry is little. As many
// iterations per entry of a loop and the loops nested in it, a nest three
// loops deep (an FFT's butterflies, a matrix product), hedge it too
// unless its function recurses (Options.Recursive).
const hedgedTrips = 1000

// unrolledBytes is the code that unrolled loops may add to any module,
// however small.
const unrolledBytes = 256 << 10

// maxUnrolled bounds the body of a function whose loop is unrolled, in
// bytes, counted as the whole body once per replica. Unrolled large, a
// function runs slower than its probes explain, in every copy, probed in
// the loop or not: Lua's luaV_execute (20 KB) unrolled 4 times made
// spectralnorm 2.0 times slower, 3 times 1.3-1.7 and twice 1.05-1.27
// (its probes alone 1.1); vm-O0's run (14 KB) unrolled 8 times 1.28, and
// twice 1.11-1.15.
const maxUnrolled = 48 << 10

// compilePrice is what compiling the replicas of a loop shared out in g
// slots costs each copy that has them, in probe hits, beyond what the
// function costs whole: wazero's compiler takes time and memory about
// linear in a function's size up to compileKnee bytes and growing with
// its square beyond, so a function that the replicas take past it costs
// every copy that has it (priced at compileHits per byte squared above
// the knee). Below the knee the replicas are the code growth that the
// byte budget bounds. size and body are the function's and the loop
// body's bytes (each replica repeats the body), probes the function's
// probes, each taken at probeBytes.
func compilePrice(size int64, probes int, body int64, g int) int64 {
	whole := size + int64(probes)*probeBytes
	grown := max(whole+int64(g-1)*body, compileKnee)
	whole = max(whole, compileKnee)
	return int64(math.Ceil(compileHits * (float64(grown)*float64(grown) - float64(whole)*float64(whole))))
}

// compileKnee is the function size, in bytes, beyond which compiling it
// grows with its square (wazero, measured on the kernels' copies).
const compileKnee = 20 << 10

// compileHits is the probe hits that one byte squared of a function
// beyond compileKnee costs to compile.
const compileHits = 1.0 / 16

// probeBytes is what a probe adds to a function, on average.
const probeBytes = 18

// minSliceCalls is the fewest calls per slot of a sliced function: the
// profile tells only the calls' total cost, and the fewer calls a slot
// has, the more its share can differ from the average.
const minSliceCalls = 4

// slotCosts prices the g slots of a function that costs cost and is called
// calls times: slot j has a g-th of the calls (instrument.SliceOfCall
// spreads them evenly), each costing the average, and runs the test at
// every call. Calls differ, and the profile does not say how, so a
// slot's share is raised by 1/√(its calls), as a loop's slot's is by its
// iterations (loopCost.slotCosts): of a function's calls and its loop,
// the finer grain wins when they cost alike.
func slotCosts(cost, calls int64, g int) []int64 {
	c := make([]int64, g)
	for j := range c {
		n := calls / int64(g) // calls in slot j
		if r := calls % int64(g); j >= 1 && int64(j) <= r {
			n++
		}
		c[j] = int64(math.Ceil(float64(cost)*float64(n)/float64(calls)*(1+1/math.Sqrt(float64(max(n, 1)))))) + calls
	}
	return c
}

// Calls is how many times a function was called, by its DAG edge
// frequencies w: the runs of the edge from the virtual entry to the first
// block.
func Calls(d *cfg.DAG, w []float64) int64 {
	var n float64
	for _, e := range d.Out[cfg.Entry] {
		if d.Edges[e].Kind == cfg.EdgeEntry {
			n += w[e]
		}
	}
	return int64(math.Round(n))
}
