package partition

// This file holds Make, which plans a module's copies: each function's
// tasks, their distribution, and every copy's lists.

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// Options adjusts Make.
type Options struct {
	// Cost prices tasks that cover part of a function; nil means
	// BallLarusCost. A task covering the whole function is priced by
	// Ball-Larus, as in the P3 paper.
	Cost CostFunc
	// Weights optionally holds, per defined function, a frequency per DAG
	// edge (nil entries: none). A function with weights has all its tasks
	// priced by WeightedCost in place of Cost, so that costs, and the
	// copies' loads, estimate probe executions rather than static probes;
	// give weights for all functions or none, or the two units mix. A
	// custom Cost that wants frequencies can look them up by DAG.
	Weights [][]float64
	// Candidates, when set, says per defined function whether P3 may
	// partition it. Otherwise, with Weights every function may, and
	// without them FindCallers' rule decides: at most one call site and no
	// unknown callers. That rule guards against overlapping probes without
	// knowing where they run, and it is conservative: Go's wasm port, for
	// one, puts every function in its table (a goroutine resumes by
	// calling its frames through it), so no Go function passes it.
	// Splitting a function with many callers keeps the profile exact; it
	// only costs overlap, which weighted costs measure.
	Candidates []bool
	// Workers bounds the goroutines that plan functions; 0 means
	// GOMAXPROCS. The plan does not depend on it.
	Workers int
	// ShareLoop, when set, says whether the instrumenter can share out
	// the iterations of the loop whose header is DAG node header in
	// defined function def (instrument's Func.CanShareLoop). Without it
	// no loop is shared out.
	ShareLoop func(def int, header int32) bool
	// ShareLoops, when set, says whether the instrumenter can share out
	// the iterations of the loops with those headers in def together
	// (instrument's Func.CanShareLoops). A plan made from an estimate
	// then hedges with every loop nest of a function whose headers are
	// cuts, not one loop of it.
	ShareLoops func(def int, headers []int32) bool
	// LoopBytes, when set, gives the bytes of the body of that loop,
	// which each extra slot repeats (instrument's Func.LoopBytes).
	// Without it a slot is taken to repeat the whole function.
	LoopBytes func(def int, header int32) int
	// Static, without Weights, keeps a plan priced by static probe
	// counts, as in the P3 paper: profiler.Build otherwise weights a
	// PBL or P3 plan made without a profile by a static estimate of the
	// run (package estimate).
	Static bool
	// Guessed says that Weights are an estimate, not a profile: which of
	// the functions is hot may be wrong by orders of magnitude. P3 then
	// hedges: among the heaviest functions, it shares out the iterations
	// of the heaviest loop of each one that one call instruction at most
	// names (main, what was inlined into it, a table's functions),
	// whether or not the estimate says that pays, so that the copies
	// divide whichever turns out hot. A function called from many places
	// is not hedged, unless the estimate gives a loop of it as many
	// iterations per entry as a dispatch loop, or its nest (the loop and
	// those inside it) as many as three loops deep and the function does
	// not recurse (Recursive): it is likely called often, and every copy
	// would pay its probes around the loop at every call.
	Guessed bool
	// Repeated, with Guessed, says per defined function whether the
	// estimate has it called over and over (estimate's Repeated). Such a
	// function is not hedged unless no call instruction names it: every
	// copy would pay its probes around the loop at each of its calls.
	Repeated []bool
	// Recursive, with Guessed, says per defined function whether it
	// calls into its own cycle of the call graph (estimate's
	// Recursive). Each recursive call works on a part, so a loop nest's
	// iterations per entry are not what the estimate gives it, and the
	// nest is not hedged for them alone; nor is any without Recursive.
	Recursive []bool
	// WholeHits optionally holds, per defined function with Weights, the
	// probe hits the instrumenter's copy makes on those weights when it
	// profiles the function whole (instrument's FuncHitsOfFrequencies;
	// a negative entry: unknown). The planner's model of the probes
	// leaves out what the instrumenter adds around them, such as the
	// clearing and flushing of local loop counters at every entry into a
	// loop and exit from it, which in a short loop of a function called
	// often is as much again as its probes. A whole-function task is
	// priced by it, and the slots of a shared function start from it.
	WholeHits []float64
	// StaticOrders optionally holds, per defined function, its DAG's
	// edges sorted by numbering.StaticWeights (nil entries: none), as the
	// instrumenter that placed its probes has them (instrument's
	// Func.StaticOrder): a function priced without weights takes its
	// order from there instead of sorting again.
	StaticOrders []*numbering.TreeOrder
}

// task is one task during planning.
type task struct {
	def   int
	cost  int64
	edges []bool // nil: the whole function
	// classes counts the classes of a task that joins several (else 0).
	classes int
	// slots is, for a slot of a sliced function, the number of slots
	// (else 0), and slot its own; loop the header of the loop whose
	// iterations the slots share out (0: the calls).
	slots, slot int
	loop        int32
	loops       []int32 // more loops shared out alike (FuncInfo.Loops)
	spread      bool    // FuncInfo.Spread
	// pinned puts a slot in copy slot, before LPT distributes the rest.
	pinned bool
}

// Make plans the copies for a strategy: SBL (k must be 1), PBL or P3.
// graphs holds the DAG of every defined function, cut to fit 63 bits, or
// nil for a function that is not to be profiled.
//
// Each function becomes tasks: one for the whole function, or under P3 one
// per class (see Classes) when it is a candidate with more than one class.
// Tasks are then distributed longest processing time first: in decreasing
// cost (ties by function, then class), each goes to the copy with the least
// load so far (ties to the lowest copy). A copy profiles a function with
// Ball-Larus when its tasks there cover every edge on a path, selectively on
// their union when they cover less, and not at all without tasks. With
// weights, P3 also shares out the calls of heavy functions among copies
// (see chooseSlices and FuncInfo.Slices); a copy then profiles the calls
// of its slots.
func Make(m *wasm.Module, graphs []*cfg.DAG, strategy profile.Strategy, k int, opt Options) (*Plan, error) {
	switch {
	case strategy != profile.SBL && strategy != profile.PBL && strategy != profile.P3:
		return nil, fmt.Errorf("partition: unknown strategy %q", strategy)
	case k < 1:
		return nil, fmt.Errorf("partition: %d copies", k)
	case strategy == profile.SBL && k != 1:
		return nil, fmt.Errorf("partition: sbl runs one copy, not %d", k)
	case len(graphs) != len(m.Code):
		return nil, fmt.Errorf("partition: %d graphs for %d functions", len(graphs), len(m.Code))
	case opt.Weights != nil && len(opt.Weights) != len(m.Code):
		return nil, fmt.Errorf("partition: weights for %d of %d functions", len(opt.Weights), len(m.Code))
	case opt.WholeHits != nil && len(opt.WholeHits) != len(m.Code):
		return nil, fmt.Errorf("partition: whole hits of %d of %d functions", len(opt.WholeHits), len(m.Code))
	case opt.Candidates != nil && len(opt.Candidates) != len(m.Code):
		return nil, fmt.Errorf("partition: candidate flags for %d of %d functions", len(opt.Candidates), len(m.Code))
	case opt.StaticOrders != nil && len(opt.StaticOrders) != len(m.Code):
		return nil, fmt.Errorf("partition: edge orders for %d of %d functions", len(opt.StaticOrders), len(m.Code))
	}
	callers, err := FindCallers(m)
	if err != nil {
		return nil, err
	}
	p := &Plan{K: k, Strategy: strategy, Funcs: make([]FuncInfo, len(m.Code)), Copies: make([]CopyPlan, k)}
	for i := range p.Funcs {
		fn := m.NumImportedFuncs + uint32(i)
		p.Funcs[i] = FuncInfo{CallSites: callers.Sites[fn], Candidate: callers.Candidate(fn)}
		if opt.Candidates != nil {
			p.Funcs[i].Candidate = opt.Candidates[i]
		}
		if opt.Weights != nil && ran(opt.Weights[i]) {
			p.Funcs[i].Freq = slices.Clone(opt.Weights[i])
		}
		if opt.Candidates == nil && opt.Weights != nil && strategy == profile.P3 {
			// Weighted costs price the overlap of a split, so the
			// call-site rule, which guards against it blindly, is not
			// needed: chooseSplits keeps only the splits that pay.
			p.Funcs[i].Candidate = true
		}
	}

	perFunc := make([][]task, len(m.Code))
	lives := make([][]bool, len(m.Code))
	errs := make([]error, len(m.Code))
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	next := make(chan int, workers)
	for range workers {
		wg.Go(func() {
			var c coster
			for i := range next {
				perFunc[i], lives[i], errs[i] = planFunc(i, graphs[i], strategy == profile.P3 && p.Funcs[i].Candidate, k, &opt, &c)
			}
		})
	}
	for i := range m.Code {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, e := range errs {
		if e != nil {
			return nil, fmt.Errorf("partition: function %d: %w", m.NumImportedFuncs+uint32(i), e)
		}
	}

	if opt.Weights != nil {
		// Slicing is tried on split functions too, from their whole
		// cost: a loop that every class pays is divided only by slots.
		whole := make([]int64, len(perFunc))
		for i, ts := range perFunc {
			if len(ts) > 0 {
				whole[i] = ts[len(ts)-1].cost
			}
		}
		var splittable []bool
		if strategy == profile.P3 {
			splittable = make([]bool, len(perFunc))
			for i := range splittable {
				splittable[i] = p.Funcs[i].Candidate && len(perFunc[i]) == 1 && opt.Weights[i] != nil && ran(opt.Weights[i])
			}
		}
		if err := chooseSplits(perFunc, k, graphs, lives, opt.Weights, splittable, workers); err != nil {
			return nil, err
		}
		if strategy == profile.P3 {
			var hedged, recursive []bool
			if opt.Guessed {
				// Hedged: the functions called from one instruction at
				// most, such as main and what was inlined into it, or a
				// table's.
				hedged = make([]bool, len(m.Code))
				for i := range hedged {
					sites := callers.Sites[m.NumImportedFuncs+uint32(i)]
					hedged[i] = sites == 0 || sites == 1 && (opt.Repeated == nil || !opt.Repeated[i])
				}
				recursive = opt.Recursive
			}
			chooseSlices(perFunc, whole, k, m, graphs, opt.Weights, opt.ShareLoop, opt.ShareLoops, opt.LoopBytes, hedged, recursive)
		}
	}
	var all []*task
	for i := range perFunc {
		for j := range perFunc[i] {
			all = append(all, &perFunc[i][j])
		}
	}
	assign := make([]int, len(all))
	loads := make([]int64, k)
	var rest []int
	for i, t := range all {
		if t.pinned {
			assign[i] = t.slot % k
			loads[t.slot%k] += t.cost
		} else {
			rest = append(rest, i)
		}
	}
	restCosts := make([]int64, len(rest))
	for j, i := range rest {
		restCosts[j] = all[i].cost
	}
	for j, c := range lpt(restCosts, loads) {
		assign[rest[j]] = c
	}
	for i, t := range all {
		c := assign[i]
		p.Copies[c].Load += t.cost
		p.Funcs[t.def].Tasks = append(p.Funcs[t.def].Tasks, TaskInfo{Cost: t.cost, Copy: c, Classes: t.classes})
	}

	for def, ts := range perFunc {
		if len(ts) == 0 {
			continue
		}
		info := &p.Funcs[def]
		live := lives[def]
		if ts[0].slots > 0 {
			info.Slices, info.Loop, info.Loops, info.Spread = ts[0].slots, ts[0].loop, ts[0].loops, ts[0].spread
			for j := range ts {
				info.Tasks[j].Edges = countTrue(live)
				cp := &p.Copies[info.Tasks[j].Copy]
				if n := len(cp.Sliced); n > 0 && cp.Sliced[n-1].Func == def {
					cp.Sliced[n-1].Slots = append(cp.Sliced[n-1].Slots, j)
				} else {
					cp.Sliced = append(cp.Sliced, SlicedFunc{Func: def, Slots: []int{j}})
				}
			}
			continue
		}
		if len(ts) == 1 {
			info.Tasks[0].Edges = countTrue(live)
			c := info.Tasks[0].Copy
			p.Copies[c].BallLarus = append(p.Copies[c].BallLarus, def)
			continue
		}
		union := make([][]bool, k)
		for j, t := range ts {
			info.Tasks[j].Edges = countTrue(t.edges)
			c := info.Tasks[j].Copy
			if union[c] == nil {
				union[c] = make([]bool, len(live))
			}
			for e, in := range t.edges {
				union[c][e] = union[c][e] || in
			}
		}
		for c, u := range union {
			if u == nil {
				continue
			}
			var edges EdgeList
			whole := true
			for e, in := range u {
				if in {
					edges = append(edges, int32(e))
				} else if live[e] {
					whole = false
				}
			}
			if whole {
				p.Copies[c].BallLarus = append(p.Copies[c].BallLarus, def)
			} else {
				p.Copies[c].Selective = append(p.Copies[c].Selective, SelectiveFunc{Func: def, Edges: edges})
			}
		}
	}
	for c := range p.Copies {
		if p.Copies[c].BallLarus == nil {
			p.Copies[c].BallLarus = []int{}
		}
	}
	return p, nil
}

// planFunc returns the tasks of one function, in class order, and its
// live edges.
func planFunc(def int, d *cfg.DAG, partition bool, k int, opt *Options, c *coster) ([]task, []bool, error) {
	if d == nil {
		return nil, nil, nil
	}
	c.w, c.static = nil, nil
	if opt.StaticOrders != nil {
		c.static = opt.StaticOrders[def]
	}
	live := Live(d)
	if opt.Weights != nil {
		c.w = opt.Weights[def]
		if !ran(c.w) {
			// Never ran (no weights, or all zero): it costs no probe
			// executions, and splitting it cannot lower any load.
			return []task{{def: def}}, live, nil
		}
	}
	// With weights, only the heaviest functions are tried split
	// (chooseSplits), which finds and prices their classes then: pricing
	// every function's classes here would place probes for thousands of
	// classes that no plan uses.
	if partition && c.w == nil {
		if classes := Classes(d, Tau(d, k)); len(classes) > 1 {
			ts := make([]task, len(classes))
			for j, set := range classes {
				var cost int
				var err error
				if opt.Cost != nil {
					cost, err = opt.Cost(d, set)
				} else {
					cost, err = c.cost(d, live, set)
				}
				if err != nil {
					return nil, nil, err
				}
				ts[j] = task{def: def, cost: int64(cost), edges: set}
			}
			// The paper's plan splits every profitable candidate.
			return ts, live, nil
		}
	}
	cost, err := wholeCost(def, d, live, opt, c)
	if err != nil {
		return nil, nil, err
	}
	return []task{{def: def, cost: int64(cost)}}, live, nil
}

// wholeCost prices the task of a whole function: by Options.WholeHits
// when it holds the function's hits, else by the model.
func wholeCost(def int, d *cfg.DAG, live []bool, opt *Options, c *coster) (int, error) {
	if c.w != nil && opt.WholeHits != nil && opt.WholeHits[def] >= 0 {
		return int(min(math.Round(opt.WholeHits[def]), math.MaxInt32)), nil
	}
	return c.cost(d, live, nil)
}

// ran says whether a function's weights say it ran. Only then is it
// priced by them and are its copies' probes placed by them: the two must
// agree.
func ran(w []float64) bool {
	return slices.ContainsFunc(w, func(x float64) bool { return x > 0 })
}

func costsOf(ts []*task) []int64 {
	c := make([]int64, len(ts))
	for i, t := range ts {
		c[i] = t.cost
	}
	return c
}

func countTrue(s []bool) int {
	n := 0
	for _, b := range s {
		if b {
			n++
		}
	}
	return n
}
