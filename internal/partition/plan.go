package partition

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/numbering"
	"github.com/pathprof/pathprof/internal/wasm"
)

// Strategies.
const (
	SBL = "sbl" // one copy, every function profiled whole
	PBL = "pbl" // k copies, every function profiled whole in one of them
	P3  = "p3"  // k copies, profitable functions split over several
)

// Mode is how one copy profiles one function.
type Mode uint8

const (
	None      Mode = iota // no probes
	BallLarus             // every path, with Ball-Larus numbering
	Selective             // the paths on the interesting edges only (PSPP)
	Sliced                // every path, in the calls of some slots only
)

func (m Mode) String() string {
	switch m {
	case None:
		return "none"
	case BallLarus:
		return "ball-larus"
	case Selective:
		return "selective"
	case Sliced:
		return "sliced"
	}
	return "mode?"
}

// Plan says what every copy profiles. It is plain data and round-trips
// through encoding/json, so a manifest can carry it.
//
// Functions are named by their defined-function index (index into
// wasm.Module.Code) and edges by their index in the DAG given to Make: the
// DAG of the function's body, cut to fit a 63-bit path register. The
// instrumenter must rebuild the same DAGs.
type Plan struct {
	K        int    `json:"k"`
	Strategy string `json:"strategy"`
	// Funcs describes every defined function, for reports.
	Funcs  []FuncInfo `json:"funcs"`
	Copies []CopyPlan `json:"copies"`
}

// FuncInfo is what planning found out about one function.
type FuncInfo struct {
	CallSites int `json:"call_sites"`
	// Candidate: P3 may partition the function. Planned with weights
	// for P3, every function is one; else only a function with at most one
	// call site and no unknown callers (the P3 paper's rule).
	Candidate bool `json:"candidate,omitempty"`
	// Tasks are the function's tasks, in the order of their classes (or
	// its slots, see Slices); none when the function had no DAG (it is not
	// profiled).
	Tasks []TaskInfo `json:"tasks,omitempty"`
	// Freq is, for a plan made with weights, the function's measured
	// frequency per DAG edge (absent if it never ran). Every copy that
	// profiles the function, whole or in part, puts its increments on the
	// edges that ran least.
	Freq FreqList `json:"freq,omitempty"`
	// Slices is, for a function whose calls are shared out among copies,
	// the number of slots (2 to MaxSlices): the n-th call of the function
	// (from 1, counted by every copy alike) is in slot n mod Slices, and
	// a copy profiles, with Ball-Larus, the calls of its slots only. Its
	// tasks are then its slots, in order. The copies' counts of its paths
	// add up to the profile's.
	Slices int `json:"slices,omitempty"`
	// Loop, when not 0, makes the slots those of the iterations of one
	// loop instead of the calls: the loop whose header is DAG node Loop.
	// Its n-th iteration (from 0 at each entry into the loop) is in slot
	// n mod Slices, and the paths that never enter the loop are slot 0's.
	Loop int32 `json:"loop,omitempty"`
}

// MaxSlices bounds FuncInfo.Slices: a copy tests its slots with one i32
// mask.
const MaxSlices = 32

// Profitable reports whether the function was split into several tasks:
// classes, or slots of its calls.
func (f *FuncInfo) Profitable() bool { return len(f.Tasks) > 1 }

// TaskInfo is one task: a class of a function's paths, a run of
// consecutive classes, or a slot of its calls.
type TaskInfo struct {
	Cost  int64 `json:"cost"`
	Copy  int   `json:"copy"`
	Edges int   `json:"edges"` // DAG edges in the task's classes
	// Classes is how many classes the task holds when more than one:
	// the tasks of a function hold its classes in order.
	Classes int `json:"classes,omitempty"`
}

// CopyPlan is one copy. A function listed in none of the lists gets no
// probes.
type CopyPlan struct {
	// Load is the sum of the costs of the copy's tasks.
	Load int64 `json:"load"`
	// BallLarus lists the functions profiled whole, ascending.
	BallLarus []int `json:"ball_larus"`
	// Selective lists the functions profiled on part of their paths,
	// ascending by function.
	Selective []SelectiveFunc `json:"selective,omitempty"`
	// Sliced lists the functions of which the copy profiles the calls of
	// some slots (FuncInfo.Slices), ascending by function.
	Sliced []SlicedFunc `json:"sliced,omitempty"`
}

// SlicedFunc is a function whose calls in the listed slots a copy profiles.
type SlicedFunc struct {
	Func  int   `json:"func"`
	Slots []int `json:"slots"` // ascending
}

// SelectiveFunc is a function profiled on the paths that use only its
// interesting edges: the union of the classes of its tasks in this copy.
type SelectiveFunc struct {
	Func  int      `json:"func"`
	Edges EdgeList `json:"edges"` // DAG edge indices, ascending
}

// EdgeList is an ascending list of edge indices. In JSON it is a string of
// comma-separated indices and ranges ("0-5,7,9-12"): classes hold long runs
// of consecutive edges, and a plan for tens of thousands of functions would
// otherwise take tens of megabytes.
type EdgeList []int32

func (l EdgeList) MarshalJSON() ([]byte, error) {
	b := []byte{'"'}
	for i := 0; i < len(l); {
		j := i
		for j+1 < len(l) && l[j+1] == l[j]+1 {
			j++
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(l[i]), 10)
		if j > i {
			b = append(b, '-')
			b = strconv.AppendInt(b, int64(l[j]), 10)
		}
		i = j + 1
	}
	return append(b, '"'), nil
}

func (l *EdgeList) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	var out EdgeList
	for part := range strings.SplitSeq(s, ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseInt(lo, 10, 32)
		if err != nil {
			return fmt.Errorf("partition: edge list %q: %v", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(hi, 10, 32); err != nil {
				return fmt.Errorf("partition: edge list %q: %v", s, err)
			}
		}
		if a < 0 || b < a || len(out) > 0 && int64(out[len(out)-1]) >= a {
			return fmt.Errorf("partition: edge list %q is not ascending", s)
		}
		for e := a; e <= b; e++ {
			out = append(out, int32(e))
		}
	}
	*l = out
	return nil
}

// FreqList is a function's edge frequencies. In JSON, when they are all
// whole numbers, as counts are, it is a string of comma-separated numbers
// in which a run of n zeros is "0*n" ("12,0*40,7"): most edges of a
// function never run, and a plan holds every executed function's list.
// Otherwise it is an array of numbers.
type FreqList []float64

func (l FreqList) MarshalJSON() ([]byte, error) {
	for _, x := range l {
		if x != math.Trunc(x) || math.Abs(x) >= 1<<53 {
			return json.Marshal([]float64(l))
		}
	}
	b := []byte{'"'}
	for i := 0; i < len(l); {
		if i > 0 {
			b = append(b, ',')
		}
		j := i + 1
		if l[i] == 0 {
			for j < len(l) && l[j] == 0 {
				j++
			}
		}
		b = strconv.AppendInt(b, int64(l[i]), 10)
		if j-i > 1 {
			b = append(b, '*')
			b = strconv.AppendInt(b, int64(j-i), 10)
		}
		i = j
	}
	return append(b, '"'), nil
}

func (l *FreqList) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		var a []float64
		if err := json.Unmarshal(data, &a); err != nil {
			return fmt.Errorf("partition: frequencies: %v", err)
		}
		*l = a
		return nil
	}
	var out FreqList
	if s == "" {
		*l = nil
		return nil
	}
	for part := range strings.SplitSeq(s, ",") {
		v, run, isRun := strings.Cut(part, "*")
		if v == "" || v[0] == '+' || isRun && (run == "" || run[0] == '+') {
			return fmt.Errorf("partition: frequencies %q: bad entry %q", s, part)
		}
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("partition: frequencies %q: %v", s, err)
		}
		n := int64(1)
		if isRun {
			if n, err = strconv.ParseInt(run, 10, 32); err != nil || n < 1 || x != 0 {
				return fmt.Errorf("partition: frequencies %q: bad run %q", s, part)
			}
		}
		if int64(len(out))+n > 1<<26 {
			return fmt.Errorf("partition: frequencies %q: too many", s)
		}
		for range n {
			out = append(out, float64(x))
		}
	}
	*l = out
	return nil
}

// Mode returns how the copy profiles defined function def, and for
// Selective its interesting DAG edges.
func (c *CopyPlan) Mode(def int) (Mode, EdgeList) {
	if _, ok := slices.BinarySearch(c.BallLarus, def); ok {
		return BallLarus, nil
	}
	i, ok := slices.BinarySearchFunc(c.Selective, def, func(s SelectiveFunc, f int) int { return cmp.Compare(s.Func, f) })
	if ok {
		return Selective, c.Selective[i].Edges
	}
	if c.Slots(def) != nil {
		return Sliced, nil
	}
	return None, nil
}

// Slots returns the slots of defined function def whose calls the copy
// profiles, or nil.
func (c *CopyPlan) Slots(def int) []int {
	i, ok := slices.BinarySearchFunc(c.Sliced, def, func(s SlicedFunc, f int) int { return cmp.Compare(s.Func, f) })
	if !ok {
		return nil
	}
	return c.Sliced[i].Slots
}

// EdgeSet turns a list of edge indices into one flag per edge.
func EdgeSet(edges []int32, numEdges int) []bool {
	s := make([]bool, numEdges)
	for _, e := range edges {
		s[e] = true
	}
	return s
}

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
}

// task is one task during planning.
type task struct {
	def   int
	cost  int64
	edges []bool // nil: the whole function
	// whole marks the whole-function alternative planFunc appends after
	// a split function's classes.
	whole bool
	// classes counts the classes of a task that joins several (else 0).
	classes int
	// slots is, for a slot of a sliced function, the number of slots
	// (else 0), and slot its own; loop the header of the loop whose
	// iterations the slots share out (0: the calls).
	slots, slot int
	loop        int32
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
func Make(m *wasm.Module, graphs []*cfg.DAG, strategy string, k int, opt Options) (*Plan, error) {
	switch {
	case strategy != SBL && strategy != PBL && strategy != P3:
		return nil, fmt.Errorf("partition: unknown strategy %q", strategy)
	case k < 1:
		return nil, fmt.Errorf("partition: %d copies", k)
	case strategy == SBL && k != 1:
		return nil, fmt.Errorf("partition: sbl runs one copy, not %d", k)
	case len(graphs) != len(m.Code):
		return nil, fmt.Errorf("partition: %d graphs for %d functions", len(graphs), len(m.Code))
	case opt.Weights != nil && len(opt.Weights) != len(m.Code):
		return nil, fmt.Errorf("partition: weights for %d of %d functions", len(opt.Weights), len(m.Code))
	case opt.Candidates != nil && len(opt.Candidates) != len(m.Code):
		return nil, fmt.Errorf("partition: candidate flags for %d of %d functions", len(opt.Candidates), len(m.Code))
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
		if opt.Candidates == nil && opt.Weights != nil && strategy == P3 {
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
				perFunc[i], lives[i], errs[i] = planFunc(i, graphs[i], strategy == P3 && p.Funcs[i].Candidate, k, &opt, &c)
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
		if err := chooseSplits(perFunc, k, graphs, lives, opt.Weights); err != nil {
			return nil, err
		}
		if strategy == P3 {
			chooseSlices(perFunc, k, m, graphs, opt.Weights, opt.ShareLoop)
		}
	} else {
		for i, ts := range perFunc {
			if len(ts) > 1 {
				perFunc[i] = ts[:len(ts)-1] // as the paper: every profitable candidate split
			}
		}
	}
	var all []*task
	for i := range perFunc {
		for j := range perFunc[i] {
			all = append(all, &perFunc[i][j])
		}
	}
	assign := LPT(costsOf(all), k)
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
			info.Slices, info.Loop = ts[0].slots, ts[0].loop
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
	c.w = nil
	live := Live(d)
	if opt.Weights != nil {
		c.w = opt.Weights[def]
		if !ran(c.w) {
			// Never ran (no weights, or all zero): it costs no probe
			// executions, and splitting it cannot lower any load.
			return []task{{def: def}}, live, nil
		}
	}
	if partition {
		var classes [][]bool
		if c.w != nil {
			classes = Reduce(d).WeightedClasses(Tau(d, k), c.w)
		} else {
			classes = Classes(d, Tau(d, k))
		}
		if len(classes) > 1 {
			ts := make([]task, len(classes))
			for j, set := range classes {
				var cost int
				var err error
				if opt.Cost != nil && c.w == nil {
					cost, err = opt.Cost(d, set)
				} else {
					cost, err = c.cost(d, live, set)
				}
				if err != nil {
					return nil, nil, err
				}
				ts[j] = task{def: def, cost: int64(cost), edges: set}
			}
			whole, err := c.cost(d, live, nil)
			if err != nil {
				return nil, nil, err
			}
			// The whole-function task follows the classes: the planner
			// falls back to it when splitting does not pay.
			return append(ts, task{def: def, cost: int64(whole), whole: true}), live, nil
		}
	}
	cost, err := c.cost(d, live, nil)
	if err != nil {
		return nil, nil, err
	}
	return []task{{def: def, cost: int64(cost)}}, live, nil
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

// LPT distributes jobs over k machines longest processing time first: in
// decreasing cost, ties in index order, each job goes to the machine with
// the least load so far, ties to the lowest machine. It returns the machine
// of each job. The greedy schedule's largest load is within 4/3 of the
// optimum (Graham 1969); the optimum is NP-hard.
func LPT(costs []int64, k int) []int {
	order := make([]int, len(costs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return costs[order[a]] > costs[order[b]] })
	assign := make([]int, len(costs))
	load := make([]int64, k)
	for _, j := range order {
		best := 0
		for c := 1; c < k; c++ {
			if load[c] < load[best] {
				best = c
			}
		}
		assign[j] = best
		load[best] += costs[j]
	}
	return assign
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

// Check verifies a plan against the DAGs it was made for: the copy count,
// sorted and valid function and edge lists, no function profiled twice in
// one copy, and every path-carrying edge of every profiled function covered
// by some copy. It does not re-derive the classes; a plan read from a
// manifest passes it before the copies are built.
func (p *Plan) Check(graphs []*cfg.DAG) error {
	if p.K < 1 || len(p.Copies) != p.K {
		return fmt.Errorf("partition: plan for %d copies has %d", p.K, len(p.Copies))
	}
	if len(p.Funcs) != len(graphs) {
		return fmt.Errorf("partition: plan for %d functions, %d graphs", len(p.Funcs), len(graphs))
	}
	covered := make([][]bool, len(graphs))
	slotsOf := make([][]int, len(graphs)) // per function: copies per slot
	for c, cp := range p.Copies {
		seen := map[int]bool{}
		// list checks the next function of one of the copy's lists: it
		// has a DAG, the list ascends, and no list of the copy has it
		// already.
		last := map[string]int{}
		list := func(name string, def int) error {
			prev, ok := last[name]
			switch {
			case def < 0 || def >= len(graphs) || graphs[def] == nil:
				return fmt.Errorf("partition: copy %d profiles function %d, which has no DAG", c, def)
			case ok && prev >= def:
				return fmt.Errorf("partition: copy %d: %s list not ascending", c, name)
			case seen[def]:
				return fmt.Errorf("partition: copy %d profiles function %d twice", c, def)
			}
			seen[def], last[name] = true, def
			return nil
		}
		for _, def := range cp.BallLarus {
			if err := list("Ball-Larus", def); err != nil {
				return err
			}
			covered[def] = Live(graphs[def])
		}
		for _, s := range cp.Selective {
			def := s.Func
			if err := list("selective", def); err != nil {
				return err
			}
			ne := len(graphs[def].Edges)
			if covered[def] == nil {
				covered[def] = make([]bool, ne)
			}
			for j, e := range s.Edges {
				if e < 0 || int(e) >= ne || j > 0 && s.Edges[j-1] >= e {
					return fmt.Errorf("partition: copy %d, function %d: bad edge list", c, def)
				}
				covered[def][e] = true
			}
		}
		for _, s := range cp.Sliced {
			def := s.Func
			if err := list("sliced", def); err != nil {
				return err
			}
			g := p.Funcs[def].Slices
			if g < 2 || g > MaxSlices {
				return fmt.Errorf("partition: copy %d profiles slots of function %d, which has %d slots", c, def, g)
			}
			if len(s.Slots) == 0 {
				return fmt.Errorf("partition: copy %d, function %d: no slots", c, def)
			}
			if slotsOf[def] == nil {
				slotsOf[def] = make([]int, g)
			}
			for j, x := range s.Slots {
				if x < 0 || x >= g || j > 0 && s.Slots[j-1] >= x {
					return fmt.Errorf("partition: copy %d, function %d: bad slot list", c, def)
				}
				if slotsOf[def][x]++; slotsOf[def][x] > 1 {
					return fmt.Errorf("partition: slot %d of function %d is in two copies", x, def)
				}
			}
		}
	}
	for def, n := range slotsOf {
		if n == nil {
			continue
		}
		if covered[def] != nil {
			return fmt.Errorf("partition: function %d is sliced and also profiled whole or in part", def)
		}
		if i := slices.Index(n, 0); i >= 0 {
			return fmt.Errorf("partition: slot %d of function %d is in no copy", i, def)
		}
		covered[def] = Live(graphs[def])
	}
	for def := range graphs {
		fi := p.Funcs[def]
		if g := fi.Slices; g != 0 && slotsOf[def] == nil {
			return fmt.Errorf("partition: function %d has %d slots in no copy", def, g)
		}
		if fi.Loop != 0 && (fi.Slices == 0 || !isHeader(graphs[def], fi.Loop)) {
			return fmt.Errorf("partition: function %d shares out the iterations of node %d, not a sliced loop's header", def, fi.Loop)
		}
	}
	for def, d := range graphs {
		if f := p.Funcs[def].Freq; f != nil {
			if d == nil {
				return fmt.Errorf("partition: function %d has frequencies but no DAG", def)
			}
			// The copies place their probes by them: what the
			// instrumenter would refuse, Check refuses.
			if _, err := numbering.ProfileWeights(d, f); err != nil {
				return fmt.Errorf("partition: function %d: %w", def, err)
			}
		}
		if d == nil {
			continue
		}
		live := Live(d)
		for e, l := range live {
			if l && (covered[def] == nil || !covered[def][e]) {
				return fmt.Errorf("partition: edge %d of function %d is in no copy", e, def)
			}
		}
	}
	return nil
}

// chooseSplits decides which split functions stay split, and into how
// many tasks. Splitting a function costs probes (its classes share most of
// them, and a copy given two classes of a function pays their shared
// probes once, not twice), so the classes are offered in g contiguous
// groups for g = 2 .. min(k, classes), each group priced as one task on
// the union of its classes' edges, and a split is kept only where it
// lowers the largest copy load of the LPT assignment. Starting from every
// function whole (PBL's plan), the functions that can split are tried one
// by one, heaviest whole cost first, each kept with the grouping that
// lowers the largest load most below the best so far; if the splits kept
// lower PBL's largest load by less than minSplitGain in all, none is kept.
// P3 is never planned worse than PBL by its own estimate, and does not
// double its copies' total work for a negligible gain. Make uses it only with profile
// weights, whose costs estimate probe executions; static probe counts say
// too little about load.
func chooseSplits(perFunc [][]task, k int, graphs []*cfg.DAG, lives [][]bool, weights [][]float64) error {
	type option struct {
		def   int
		whole int64
	}
	var tries []option
	costs := make([][]int64, len(perFunc))
	for i, ts := range perFunc {
		if len(ts) == 0 {
			continue
		}
		costs[i] = []int64{ts[len(ts)-1].cost} // the whole task, or the only one
		if len(ts) > 1 {
			tries = append(tries, option{i, ts[len(ts)-1].cost})
		}
	}
	slices.SortStableFunc(tries, func(a, b option) int { return cmp.Compare(b.whole, a.whole) })
	if len(tries) > maxSplitTries {
		tries = tries[:maxSplitTries]
	}
	best := maxLoad(slices.Concat(costs...), k)
	// A split adds the probes its groups share to every copy that gets
	// one, often doubling the total work; the splits must lower the
	// largest load by at least minSplitGain of PBL's to be worth that.
	cutoff := best - int64(float64(best)*minSplitGain)
	chosen := make([][]task, len(perFunc))
	var c coster
	for _, t := range tries {
		ts := perFunc[t.def]
		classes := ts[:len(ts)-1]
		whole := costs[t.def]
		c.w = weights[t.def]
		for g := 2; g <= min(k, len(classes)); g++ {
			groups, err := groupClasses(classes, g, graphs[t.def], lives[t.def], &c)
			if err != nil {
				return err
			}
			costs[t.def] = taskCosts(groups)
			if l := maxLoad(slices.Concat(costs...), k); l < best {
				best, chosen[t.def] = l, groups
			}
		}
		costs[t.def] = whole
		if chosen[t.def] != nil {
			costs[t.def] = taskCosts(chosen[t.def])
		}
	}
	if best > cutoff {
		clear(chosen) // together the splits save too little
	}
	for i, ts := range perFunc {
		switch {
		case len(ts) <= 1:
		case chosen[i] != nil:
			perFunc[i] = chosen[i]
		default:
			w := ts[len(ts)-1]
			w.whole, w.edges = false, nil
			perFunc[i] = []task{w}
		}
	}
	return nil
}

// chooseSlices shares out the calls of the heaviest functions that stay
// whole among copies, or the iterations of one of their three heaviest
// loops, where that lowers the largest copy load by LPT: a function in g
// slots costs each slot about a g-th of its cost, plus the test that every
// copy sharing its calls runs at each call, or, for a loop, the probes
// around the loop that every copy sharing it runs. So it pays for
// functions that run many paths per call, a loop or a long function,
// which no class split can divide: every class of a loop pays each
// iteration's back edge. Slots are priced by slotCosts and
// loopCost.slotCosts. Like splits, the slicings kept must lower the
// largest load by minSplitGain in all.
func chooseSlices(perFunc [][]task, k int, m *wasm.Module, graphs []*cfg.DAG, weights [][]float64, shareLoop func(int, int32) bool) {
	type option struct {
		def  int
		cost int64
	}
	type slicing struct {
		g     int
		loop  int32
		costs []int64
	}
	var tries []option
	costs := make([][]int64, len(perFunc))
	for i, ts := range perFunc {
		costs[i] = taskCosts(ts)
		if len(ts) == 1 && ts[0].edges == nil && weights[i] != nil {
			tries = append(tries, option{i, ts[0].cost})
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
	base := maxLoad(slices.Concat(costs...), k)
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
		if shareLoop != nil {
			size := int64(len(m.Code[t.def].Body))
			for _, l := range heavyLoops(graphs[t.def], weights[t.def], func(h int32) bool { return shareLoop(t.def, h) }) {
				for g := 2; g <= min(k, MaxSlices, int(l.perEntry())); g++ {
					if int64(g-1)*size <= budget && int64(g)*size <= maxUnrolled {
						alts = append(alts, slicing{g: g, loop: l.header, costs: l.slotCosts(t.cost, g)})
					}
				}
			}
		}
		whole := costs[t.def]
		for _, a := range alts {
			costs[t.def] = a.costs
			if l := maxLoad(slices.Concat(costs...), k); l < best {
				best, chosen[t.def] = l, a
			}
		}
		costs[t.def] = whole
		if a, ok := chosen[t.def]; ok {
			costs[t.def] = a.costs
			if a.loop != 0 {
				budget -= int64(a.g-1) * int64(len(m.Code[t.def].Body))
			}
		}
	}
	if best > base-int64(float64(base)*minSplitGain) {
		return
	}
	for def, a := range chosen {
		ts := make([]task, a.g)
		for j, c := range a.costs {
			ts[j] = task{def: def, cost: c, slots: a.g, slot: j, loop: a.loop}
		}
		perFunc[def] = ts
	}
}

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

// minSliceCalls is the fewest calls per slot of a sliced function: the
// profile tells only the calls' total cost, and the fewer calls a slot
// has, the more its share can differ from the average.
const minSliceCalls = 4

// slotCosts prices the g slots of a function that costs cost and is called
// calls times: slot j has the calls n = 1 .. calls with n mod g = j, each
// costing the average, and runs the test at every call. Calls differ, and
// the profile does not say how, so a slot's share is raised by 1/√(its
// calls), as a loop's slot's is by its iterations (loopCost.slotCosts):
// of a function's calls and its loop, the finer grain wins when they
// cost alike.
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

// groupClasses joins a function's classes, in class order (neighbours
// share the longest prefixes, so the most probes), into g runs of about
// equal summed cost, and prices each run as one task on the union of its
// classes' edges.
func groupClasses(classes []task, g int, d *cfg.DAG, live []bool, c *coster) ([]task, error) {
	var total int64
	for _, t := range classes {
		total += t.cost
	}
	groups := make([]task, 0, g)
	var sum int64
	for i := 0; i < len(classes); {
		// Take classes until the run reaches its share of the total,
		// leaving at least one class for each later run.
		target := total * int64(len(groups)+1) / int64(g)
		first := i
		union := make([]bool, len(d.Edges))
		for j := i; ; {
			for e, in := range classes[j].edges {
				union[e] = union[e] || in
			}
			sum += classes[j].cost
			j++
			i = j
			left := len(classes) - j
			if left == 0 || left == g-len(groups)-1 || (sum >= target && len(groups) < g-1) {
				break
			}
		}
		cost, err := c.cost(d, live, union)
		if err != nil {
			return nil, err
		}
		n := 0
		if j := i - first; j > 1 {
			n = j
		}
		groups = append(groups, task{def: classes[0].def, cost: int64(cost), edges: union, classes: n})
	}
	return groups, nil
}

// minSplitGain is the least share of the largest copy load (PBL's plan)
// that the splits chooseSplits keeps must save, together.
const minSplitGain = 0.01

// maxSplitTries bounds the functions chooseSplits tries to split: a
// function far lighter than the largest copy load barely moves it, and
// each try plans the whole program once more.
const maxSplitTries = 64

// taskCosts is costsOf for a function's own tasks.
func taskCosts(ts []task) []int64 {
	c := make([]int64, len(ts))
	for i, t := range ts {
		c[i] = t.cost
	}
	return c
}

// maxLoad is the largest copy load of the LPT assignment of costs.
func maxLoad(costs []int64, k int) int64 {
	loads := make([]int64, k)
	for i, c := range LPT(costs, k) {
		loads[c] += costs[i]
	}
	return slices.Max(loads)
}
