package osp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/pathprof/pathprof/internal/runner"
)

// Options configures sampling.
type Options struct {
	// Memory bounds the hot list's bytes (HotList.Bytes); default
	// DefaultMemory.
	Memory int
	// Lengths are the subpath lengths, in blocks; default 2, 4, ..., 64.
	// Every sample records the longest, and offers the hot list
	// Windows(longest, L) subpaths of each length L from it.
	Lengths []int
	// MeanSkip is the mean number of block entries from the end of one
	// sample to the start of the next (geometrically distributed);
	// default DefaultMeanSkip.
	MeanSkip float64
	// Seed fixes the skips and the hot list's coin flips.
	Seed uint64
	// Plain makes the hot list code each subpath as differences of
	// block ids, instead of as the choices it makes among the blocks
	// that may follow each of its blocks (a model of the module's
	// blocks, the default). The model's code takes about a third of the
	// bytes, so that where the bound makes the hot list thin its
	// samples, τ stays lower and the long subpaths' estimates are
	// closer; only a subpath that gets a pair is coded, so the worker's
	// time per sample barely changes (see docs/osp.md).
	Plain bool
	// Concise makes the hot list keep concise samples instead of
	// counting samples (HotList, Kind): a subpath's elements are then
	// counted one in τ even once it holds a pair, so that where the
	// bound thins a length the hottest subpaths' counts are far less
	// exact, for a worker that looks up only the elements that enter.
	Concise bool
	// Observe, if set, is handed each sample's blocks, in order, one call
	// at a time, as the hot list is (the slice is reused after the
	// call): for yardsticks such as Unbounded. It runs in the sampling
	// worker, so it slows the run.
	Observe func(blocks []uint32)
}

// Defaults of Options.
const (
	DefaultMemory   = 1 << 20
	DefaultMeanSkip = 6000
)

// DefaultLengths are the default subpath lengths.
var DefaultLengths = []int{2, 4, 8, 16, 32, 64}

// Check reports what is wrong with o, defaults filled in, if anything.
func (o Options) Check() error { return o.fill() }

// Filled returns o with its defaults filled in, or what is wrong with it.
func (o Options) Filled() (Options, error) {
	err := o.fill()
	return o, err
}

func (o *Options) fill() error {
	if o.Memory == 0 {
		o.Memory = DefaultMemory
	}
	if len(o.Lengths) == 0 {
		o.Lengths = DefaultLengths
	}
	if o.MeanSkip == 0 {
		o.MeanSkip = DefaultMeanSkip
	}
	if !(o.MeanSkip >= 1) || o.MeanSkip > 1<<30 {
		return fmt.Errorf("mean skip %v out of range [1, 2^30]", o.MeanSkip)
	}
	if err := checkLengths(o.Lengths); err != nil {
		return err
	}
	return nil
}

func checkLengths(ls []int) error {
	if len(ls) == 0 {
		return errors.New("no sample lengths")
	}
	for i, l := range ls {
		if l < 1 || l > MaxLength {
			return fmt.Errorf("sample length %d out of range [1, %d]", l, MaxLength)
		}
		if slices.Contains(ls[:i], l) {
			return fmt.Errorf("sample length %d given twice", l)
		}
	}
	return nil
}

// Mode says what the recorder does.
type Mode int

const (
	// ModeSample records the samples the skips and lengths ask for.
	ModeSample Mode = iota
	// ModeTrace records every block entry, for exact counts.
	ModeTrace
)

// Program is an instrumented module compiled, ready to run any number of
// times (one run at a time).
type Program struct {
	Instrumented *Instrumented
	mode         Mode
	prog         *runner.Program
	// flush is the current run's handler of the recorder's calls.
	flush func(mod api.Module) error
}

// Compile compiles ins to run in the given mode. rc's compile-time fields
// are used; HostModules must be unset.
func Compile(ctx context.Context, ins *Instrumented, mode Mode, rc runner.Config) (*Program, error) {
	if rc.HostModules != nil {
		return nil, errors.New("osp: Config.HostModules must be unset")
	}
	p := &Program{Instrumented: ins, mode: mode}
	rc.HostModules = func(ctx context.Context, r wazero.Runtime) ([]wazero.CompiledModule, error) {
		c, err := r.NewHostModuleBuilder(FlushModule).
			NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, mod api.Module, _ []uint64) {
				if p.flush == nil {
					panic(errors.New("osp: recorder called outside a run"))
				}
				if err := p.flush(mod); err != nil {
					panic(err) // stops the program: the samples are already wrong
				}
			}), nil, nil).
			Export(FlushName).
			Compile(ctx)
		if err != nil {
			return nil, err
		}
		return []wazero.CompiledModule{c}, nil
	}
	var err error
	if p.prog, err = runner.Compile(ctx, ins.Wasm, rc); err != nil {
		return nil, err
	}
	return p, nil
}

// Close releases the compiled code.
func (p *Program) Close(ctx context.Context) error { return p.prog.Close(ctx) }

// records calls f with each record in b, in order.
func records(b []byte, f func(fn, start uint32, p uint64) error) error {
	for o := 0; o+recordSize <= len(b); o += recordSize {
		r := b[o : o+recordSize]
		if err := f(binary.LittleEndian.Uint32(r), binary.LittleEndian.Uint32(r[4:]), binary.LittleEndian.Uint64(r[8:])); err != nil {
			return err
		}
	}
	return nil
}

// entry is a table entry: a sample's length and the skip before it.
type entry struct{ skip, length uint32 }

// sampler is one sampling run's state.
//
// Turning records into samples and offering them to the hot list takes
// a microsecond or two per sample, several times what the sample costs
// the program, so it runs in a goroutine of its own (run, the worker)
// while the program goes on. The recorder calls flush, in the program's
// thread, when its records are full; flush copies them into the next of
// a ring of Go buffers and counts it as handed over. The worker wakes
// every pollInterval and takes the records of the buffers handed over.
// Nothing wakes it: on the machines this was measured on, waking a
// goroutine from the program's thread cost that thread tens of
// microseconds at every handover (a futex call and an interrupt to the
// idle CPU) and the worker started a few hundred microseconds later, so
// the program waited for it at the end of a run and whenever the ring was
// full. Now, when the ring is full, or the run is over, the program's
// thread takes the records itself. Records are taken in order, by one
// thread at a time (proc).
//
// The skips and lengths (tables) are drawn in the program's thread when
// the recorder asks for them, a few nanoseconds an entry; the first
// table is short, so that a short run does not draw thousands of skips it
// never uses.
type sampler struct {
	opt    Options
	ins    *Instrumented
	rng    *rand.Rand
	lambda float64 // -log(1 - 1/MeanSkip): skips are 1 + ⌊E/λ⌋, E exponential
	hot    *HotList
	rec    *recorder

	// handed counts the buffers of the ring handed over, done those
	// whose records were taken: buffers done, ..., handed-1 (mod
	// ringAreas) wait for the worker. Each is filled before it is handed
	// over.
	handed, done atomic.Uint64
	ring         [ringAreas][]byte
	// proc is held while records are taken; stopped (under proc) ends it.
	proc    sync.Mutex
	stopped bool
	failed  atomic.Pointer[error]

	// The program's thread's state: the number of entries of the next
	// table.
	tableSize int
	// drawn holds the entries drawn that the records taker has not
	// moved to queue yet, in the order the recorder takes them.
	qmu   sync.Mutex
	drawn []entry

	// The records taker's state (under proc).
	samples uint64 // complete samples
	records uint64 // block entries recorded
	skipped uint64 // Σ (skip-1) over the skips that ended in a sample
	// beyond is the number of blocks of the last path taken that lie
	// beyond the sample it completed (0 when it completed none): the next
	// skip's first.
	beyond uint64
	warm   bool // the recorder's first entry, a sample of the run's first block, is still to come
	// queue holds the entries drawn that no sample has taken yet, in the
	// order the recorder takes them.
	queue []entry
	// cur is the sample being assembled, of length curLen; inSample says
	// whether one is.
	cur      []uint32
	curLen   int
	inSample bool
}

const (
	// pollInterval is how often the worker looks for records. What it
	// has not taken when the run ends, the program's thread takes then.
	pollInterval = 500 * time.Microsecond
	// ringAreas is the number of buffers of records the worker may be
	// behind by before the program's thread takes them itself.
	ringAreas = 16
	// firstTable is the number of entries of the first table; each next
	// table has twice as many, up to a table area's.
	firstTable = 128
)

func newSampler(opt Options, ins *Instrumented) (*sampler, error) {
	s := &sampler{
		opt:       opt,
		ins:       ins,
		rng:       rand.New(rand.NewPCG(opt.Seed, 0x736b69706c656e73)),
		warm:      true,
		queue:     []entry{{1, 1}}, // the area's own first entry
		tableSize: firstTable,
	}
	if opt.MeanSkip > 1 {
		s.lambda = -math.Log1p(-1 / opt.MeanSkip)
	}
	var model *blockModel
	if ins != nil && !opt.Plain {
		model = ins.model
	}
	var err error
	kind := Counting
	if opt.Concise {
		kind = Concise
	}
	s.hot, err = newHotList(opt.Memory, opt.Lengths, opt.Seed^0x686f746c697374, model, kind)
	return s, err
}

// start starts the worker.
func (s *sampler) start() {
	go s.run()
}

// run is the worker.
func (s *sampler) run() {
	for {
		time.Sleep(pollInterval)
		if !s.take() {
			return
		}
	}
}

// take takes the records of the areas handed over, in order; it reports
// false once the sampler is stopped. After an error it only counts the
// areas as done, so that the program's thread never waits for them;
// flush reports the error.
func (s *sampler) take() bool {
	s.proc.Lock()
	defer s.proc.Unlock()
	if s.stopped {
		return false
	}
	// Every entry a record of these areas takes was drawn before the
	// area was handed over.
	handed := s.handed.Load()
	s.qmu.Lock()
	s.queue = append(s.queue, s.drawn...)
	s.drawn = s.drawn[:0]
	s.qmu.Unlock()
	for d := s.done.Load(); d < handed; d++ {
		if s.failed.Load() == nil {
			if err := records(s.ring[d%ringAreas], s.path); err != nil {
				s.failed.Store(&err)
			}
		}
		s.done.Store(d + 1)
	}
	return true
}

// stop stops the worker, which takes no records once stop returns, and
// returns its error.
func (s *sampler) stop() error {
	s.proc.Lock()
	s.stopped = true
	s.proc.Unlock()
	if e := s.failed.Load(); e != nil {
		return *e
	}
	return nil
}

// draw draws n table entries.
func (s *sampler) draw(n int) []entry {
	entries := make([]entry, n)
	length := uint32(SampleBlocks(s.opt.Lengths))
	for i := range entries {
		entries[i] = entry{s.skip(), length}
	}
	return entries
}

// skip draws a skip: the recorder returns it to the program, whose
// countdown then reaches zero on the skip-th block entry from there, so
// skip-1 entries go unsampled. Skips are geometric, so every block entry
// outside a sample starts the next one with the same probability
// 1/MeanSkip, whatever came before: the sample starts cannot fall into
// step with a loop of the program. (1 + ⌊E/λ⌋ with E exponential is
// geometric: it is at least k+1 with probability e^{-λk} = (1-1/MeanSkip)^k.)
func (s *sampler) skip() uint32 {
	if s.lambda == 0 {
		return 1
	}
	return uint32(min(1+math.Floor(s.rng.ExpFloat64()/s.lambda), 1<<30))
}

// path takes one record: the blocks of a path, from block start on when
// a sample starts there.
func (s *sampler) path(fn, start uint32, p uint64) error {
	bs, err := s.ins.pathBlocks(fn, p)
	if err != nil {
		return err
	}
	if start != noStart {
		if s.inSample {
			return fmt.Errorf("osp: a sample starts before the one of %d blocks has %d", s.curLen, len(s.cur))
		}
		if len(s.queue) == 0 {
			return errors.New("osp: a sample starts with no table entry left")
		}
		if int64(start) >= int64(len(bs)) {
			return fmt.Errorf("osp: a sample starts at block %d of a path of %d", start, len(bs))
		}
		e := s.queue[0]
		s.queue = s.queue[1:]
		s.cur, s.curLen, s.inSample = s.cur[:0], int(e.length), true
		if !s.warm {
			s.skipped += uint64(e.skip) - 1
		}
		bs = bs[start:]
	} else if !s.inSample {
		return errors.New("osp: a path recorded outside a sample")
	}
	take := min(len(bs), s.curLen-len(s.cur))
	s.cur = append(s.cur, bs[:take]...)
	s.records += uint64(take)
	s.beyond = 0
	if len(s.cur) == s.curLen {
		s.inSample = false
		s.beyond = uint64(len(bs) - take)
		s.complete()
	}
	return nil
}

// complete hands a finished sample to the hot list.
func (s *sampler) complete() {
	if s.warm {
		// The module's own first entry: the program's first block
		// entry, a sample that is not kept.
		s.warm = false
		return
	}
	s.samples++
	// A sample starts at a block entry as random as any, so its
	// subpaths at fixed offsets do too: the sample of 64 blocks offers
	// 16 subpaths of 2 blocks (every fourth block), ..., 13 of 16, 9 of
	// 32 and one of 64, each one of the run's windows that is offered
	// with the same probability as any other. The hot list counts them
	// as offered.
	s.hot.AddSample(s.cur)
	if s.opt.Observe != nil {
		s.opt.Observe(s.cur)
	}
}

// flush, in the program's thread, hands the recorder's records over when
// they are full (or the run is over), taking the records of the ring
// itself when its next buffer is not free yet; when the recorder's table
// has run out, it draws the next. final is the call after the run: it
// takes all the records and stops the worker.
func (s *sampler) flush(mod api.Module, final bool) error {
	area, recs, err := flushed(&s.rec, mod)
	if err != nil {
		return err
	}
	r := s.rec
	if final || len(recs) == recordBytes {
		k := s.handed.Load()
		if k-s.done.Load() >= ringAreas {
			s.take()
		}
		s.ring[k%ringAreas] = append(s.ring[k%ringAreas][:0], recs...)
		s.handed.Store(k + 1)
		r.pos.Set(0)
		if final {
			s.take()
			return s.stop()
		}
	}
	if e := s.failed.Load(); e != nil {
		return *e
	}
	if out, err := r.tableOut(area); err != nil || !out {
		return err // nil: only the records were full
	}
	// The recorder has taken every entry of its table: draw the next
	// into the other table.
	entries := s.draw(s.tableSize)
	s.tableSize = min(2*s.tableSize, tableBytes/entryBytes)
	r.putTable(area, entries)
	s.qmu.Lock()
	s.drawn = append(s.drawn, entries...)
	s.qmu.Unlock()
	return nil
}

// countdown reads the program's countdown at the end of a run.
func countdown(mods map[string]api.Module) (uint32, error) {
	m := mods[runner.ProgramKey]
	if m == nil {
		return 0, errors.New("osp: the program's instance is gone")
	}
	g := m.ExportedGlobal(CountdownExport)
	if g == nil {
		return 0, fmt.Errorf("osp: the program exports no %s", CountdownExport)
	}
	return uint32(g.Get()), nil
}

// Sample runs the program once, sampling with opt, and returns the
// profile. A run that traps or is interrupted still gives a profile,
// marked incomplete, together with the error; one in which the sampling
// itself failed gives none.
func (p *Program) Sample(ctx context.Context, opt Options, rc runner.Config) (*Profile, runner.Result, error) {
	if p.mode != ModeSample {
		return nil, runner.Result{}, errors.New("osp: Sample needs a program compiled for sampling")
	}
	if err := opt.fill(); err != nil {
		return nil, runner.Result{}, err
	}
	s, err := newSampler(opt, p.Instrumented)
	if err != nil {
		return nil, runner.Result{}, err
	}
	var blocks uint64
	s.start()
	defer s.stop() // also on the way out of a panic
	// failed is the sampler's own failure, if it had one: the program
	// traps when a flush fails, but that run's samples are not to be
	// trusted, so it gives no profile.
	var failed error
	p.flush = func(mod api.Module) error {
		err := s.flush(mod, false)
		if err != nil && failed == nil {
			failed = err
		}
		return err
	}
	defer func() { p.flush = nil }()
	after := rc.AfterRun
	rc.AfterRun = func(ctx context.Context, mods map[string]api.Module) error {
		// The worker reads the recorder's memory, which goes away when
		// the instances close after AfterRun: it stops here however
		// AfterRun ends.
		defer s.stop()
		if err := s.flush(mods[runner.ProgramKey], true); err != nil {
			if failed == nil {
				failed = err
			}
			return err
		}
		c, err := countdown(mods)
		if err != nil {
			return err
		}
		blocks = s.records + s.skipped
		switch left := int64(int32(c)); {
		case s.inSample:
		case left <= 0:
			// Outside a sample the program leaves the countdown out
			// only inside $tick, which records the path first: the
			// run stopped there (at the loop, interrupted, or in a
			// flush that failed) after the path that completed the
			// last sample. Its blocks beyond that sample are the next
			// skip's. (The countdown may still hold the sample's
			// encoding, below -2^29.)
			blocks += s.beyond
		default:
			// The skip the program is in: skip-c of its entries went by.
			if len(s.queue) == 0 {
				return errors.New("osp: the run ended with no skip to count")
			}
			skip := int64(s.queue[0].skip)
			if left > skip {
				return fmt.Errorf("osp: the program's countdown is %d in a skip of %d", left, skip)
			}
			blocks += uint64(skip - left)
		}
		if after != nil {
			return after(ctx, mods)
		}
		return nil
	}
	res, runErr := p.prog.Run(ctx, rc)
	// AfterRun stopped the worker already, unless instantiation failed.
	if err := s.stop(); err != nil && failed == nil {
		failed = err
	}
	if failed != nil {
		return nil, res, fmt.Errorf("osp: sampling failed: %w", failed)
	}
	if runErr != nil && res.Trap == nil && !res.Exited && ctx.Err() == nil {
		return nil, res, runErr
	}
	prof := p.profile(s, blocks, rc, res, runErr)
	return prof, res, runErr
}

// Trace runs the program once, counting every subpath of the given
// lengths exactly.
func (p *Program) Trace(ctx context.Context, lengths []int, rc runner.Config) (*Exact, runner.Result, error) {
	if p.mode != ModeTrace {
		return nil, runner.Result{}, errors.New("osp: Trace needs a program compiled for tracing")
	}
	if err := checkLengths(lengths); err != nil {
		return nil, runner.Result{}, err
	}
	ex := NewExact(lengths, p.Instrumented.offsets())
	res, err := p.trace(ctx, rc, ex.Push)
	if err != nil && res.Trap == nil && !res.Exited {
		return nil, res, err
	}
	return ex, res, err
}

// trace runs a program compiled for tracing and hands every block entry,
// in order and in batches, to push. The program samples as it does when
// sampling, but every sample is traceLength blocks long and starts on the
// block after the last: it records every path.
func (p *Program) trace(ctx context.Context, rc runner.Config, push func(ids []uint32)) (runner.Result, error) {
	var rec *recorder
	var ids []uint32
	// The program's first sample is one block long (the area's own
	// table), every next one traceLength; a path that holds the end of
	// one and the start of the next is recorded twice, with the next
	// one's start.
	left, first := 0, true
	drain := func(mod api.Module) error {
		area, recs, err := flushed(&rec, mod)
		if err != nil {
			return err
		}
		err = records(recs, func(fn, start uint32, v uint64) error {
			bs, err := p.Instrumented.pathBlocks(fn, v)
			if err != nil {
				return err
			}
			if start != noStart {
				if int64(start) >= int64(len(bs)) {
					return fmt.Errorf("osp: a sample starts at block %d of a path of %d", start, len(bs))
				}
				bs = bs[start:]
				left = traceLength
				if first {
					left, first = 1, false
				}
			}
			take := min(len(bs), left)
			ids = append(ids, bs[:take]...)
			left -= take
			return nil
		})
		if err != nil {
			return err
		}
		// push takes its time per call too: batches of many flushes.
		if len(ids) >= traceBatch {
			push(ids)
			ids = ids[:0]
		}
		rec.pos.Set(0)
		if out, err := rec.tableOut(area); err != nil || !out {
			return err
		}
		rec.putTable(area, []entry{{1, traceLength}})
		return nil
	}
	p.flush = drain
	defer func() { p.flush = nil }()
	after := rc.AfterRun
	rc.AfterRun = func(ctx context.Context, mods map[string]api.Module) error {
		if err := drain(mods[runner.ProgramKey]); err != nil {
			return err
		}
		push(ids)
		if after != nil {
			return after(ctx, mods)
		}
		return nil
	}
	return p.prog.Run(ctx, rc)
}

// profile assembles the Profile of a sampling run.
func (p *Program) profile(s *sampler, blocks uint64, rc runner.Config, res runner.Result, runErr error) *Profile {
	ins := p.Instrumented
	prof := &Profile{
		Format:  Format,
		Version: Version,
		Module:  Module{Size: ins.Size, SHA256: ins.SHA256, Blocks: len(ins.Blocks)},
		Run: RunFacts{
			Args:         append([]string{}, rc.Args...),
			ExitCode:     res.ExitCode,
			Complete:     runErr == nil,
			Seconds:      res.RunTime.Seconds(),
			BlockEntries: blocks,
		},
		Sampling: Sampling{
			Seed:          s.opt.Seed,
			MeanSkip:      s.opt.MeanSkip,
			Compact:       !s.opt.Plain,
			Concise:       s.opt.Concise,
			Lengths:       slices.Clone(s.opt.Lengths),
			SampleBlocks:  SampleBlocks(s.opt.Lengths),
			SampledBlocks: s.records,
		},
		Memory: Memory{
			Bound:        s.opt.Memory,
			HotListBytes: s.hot.Bytes(),
			BufferBytes:  BufferBytes,
			Pairs:        s.hot.Len(),
		},
		Functions: []Function{},
		Subpaths:  []Subpath{},
	}
	if runErr != nil {
		prof.Run.Error = runErr.Error()
	}
	states := s.hot.Lengths()
	scale := make([]float64, len(s.opt.Lengths))
	prof.Sampling.Samples = s.samples
	for i, l := range s.opt.Lengths {
		st := states[i]
		f := LengthFacts{Length: l, Windows: st.Offered, Tau: st.Tau, Counting: st.Counting, Raises: st.Raises, Bytes: st.Bytes}
		if st.Offered > 0 {
			scale[i] = float64(blocks) / float64(st.Offered)
			f.Scale = scale[i]
			// A subpath occurrence is in a sample with
			// probability Samples/T or more (its first block is
			// the sample's first at least); one there at least is
			// admitted with probability 1/τ or more, so a subpath
			// of N occurrences is missed by every sample with
			// probability below about exp(−N·Samples/(τ·T)).
			f.Floor = 3 * st.Tau * float64(blocks) / float64(s.samples)
		}
		prof.Sampling.ByLength = append(prof.Sampling.ByLength, f)
	}
	funcs := map[uint32]bool{}
	pairs := s.hot.Pairs()
	sortPairs(pairs)
	for _, pr := range pairs {
		i := slices.Index(s.opt.Lengths, len(pr.Blocks))
		prof.Sampling.ByLength[i].Pairs++
		est, variance := Estimate(pr, states[i])
		sp := Subpath{
			Length:   len(pr.Blocks),
			Count:    pr.Count,
			Estimate: est * scale[i],
			Squares:  pr.Squares,
			Error:    1.96 * math.Sqrt(variance) * scale[i],
			Blocks:   make([]BlockRef, len(pr.Blocks)),
		}
		for j, id := range pr.Blocks {
			b := ins.Blocks[id]
			sp.Blocks[j] = BlockRef{Func: b.Func, Offset: b.Offset}
			funcs[b.Func] = true
		}
		prof.Subpaths = append(prof.Subpaths, sp)
	}
	slices.SortStableFunc(prof.Subpaths, func(a, b Subpath) int {
		if a.Estimate != b.Estimate {
			if a.Estimate > b.Estimate {
				return -1
			}
			return 1
		}
		return a.Length - b.Length
	})
	for f := range funcs {
		prof.Functions = append(prof.Functions, Function{Index: f, Name: ins.FuncNames[f]})
	}
	slices.SortFunc(prof.Functions, func(a, b Function) int { return int(a.Index) - int(b.Index) })
	return prof
}

// Run instruments orig, runs it once sampling with opt, and returns the
// profile; see Program.Sample.
func Run(ctx context.Context, orig []byte, opt Options, rc runner.Config) (*Profile, runner.Result, error) {
	ins, err := Instrument(orig)
	if err != nil {
		return nil, runner.Result{}, err
	}
	p, err := Compile(ctx, ins, ModeSample, rc)
	if err != nil {
		return nil, runner.Result{}, err
	}
	defer p.Close(context.WithoutCancel(ctx))
	return p.Sample(ctx, opt, rc)
}

// Count instruments orig and runs it once, counting every subpath of the
// given lengths; see Program.Trace.
func Count(ctx context.Context, orig []byte, lengths []int, rc runner.Config) (*Exact, *Instrumented, runner.Result, error) {
	ins, err := Instrument(orig)
	if err != nil {
		return nil, nil, runner.Result{}, err
	}
	p, err := Compile(ctx, ins, ModeTrace, rc)
	if err != nil {
		return nil, nil, runner.Result{}, err
	}
	defer p.Close(context.WithoutCancel(ctx))
	ex, res, err := p.Trace(ctx, lengths, rc)
	return ex, ins, res, err
}
