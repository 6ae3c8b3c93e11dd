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

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"pathprof/runner"
)

// Options configures sampling.
type Options struct {
	// Memory bounds the hot list's bytes (HotList.Bytes); default
	// DefaultMemory.
	Memory int
	// Lengths are the sample lengths, in blocks; default 2, 4, ..., 64.
	// Each sample takes one of them, uniformly at random.
	Lengths []int
	// MeanSkip is the mean number of block entries from the end of one
	// sample to the start of the next (geometrically distributed);
	// default DefaultMeanSkip.
	MeanSkip float64
	// Seed fixes the skips, the lengths and the hot list's coin flips.
	Seed uint64
}

// Defaults of Options.
const (
	DefaultMemory   = 1 << 20
	DefaultMeanSkip = 1000
)

// DefaultLengths are the default sample lengths.
var DefaultLengths = []int{2, 4, 8, 16, 32, 64}

// Check reports what is wrong with o, defaults filled in, if anything.
func (o Options) Check() error { return o.fill() }

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

var recorders = [2]func() ([]byte, error){
	sync.OnceValues(func() ([]byte, error) { return recorderModule(false) }),
	sync.OnceValues(func() ([]byte, error) { return recorderModule(true) }),
}

// Program is an instrumented module compiled with its recorder, ready to
// run any number of times (one run at a time).
type Program struct {
	Instrumented *Instrumented
	mode         Mode
	prog         *runner.Program
	// flush is the current run's handler of the recorder's calls.
	flush func(mod api.Module) error
}

// Compile compiles ins with the recorder of the given mode. rc's
// compile-time fields are used; HostModules and Modules must be unset.
func Compile(ctx context.Context, ins *Instrumented, mode Mode, rc runner.Config) (*Program, error) {
	if rc.HostModules != nil || len(rc.Modules) > 0 {
		return nil, errors.New("osp: Config.HostModules and Modules must be unset")
	}
	rec, err := recorders[mode]()
	if err != nil {
		return nil, fmt.Errorf("osp: recorder module: %w", err)
	}
	p := &Program{Instrumented: ins, mode: mode}
	rc.Modules = []runner.NamedModule{{Name: RecorderModule, Wasm: rec}}
	rc.HostModules = func(ctx context.Context, r wazero.Runtime) ([]wazero.CompiledModule, error) {
		c, err := r.NewHostModuleBuilder(flushModule).
			NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, mod api.Module, _ []uint64) {
				if p.flush == nil {
					panic(errors.New("osp: recorder called outside a run"))
				}
				if err := p.flush(mod); err != nil {
					panic(err) // stops the program: the samples are already wrong
				}
			}), nil, nil).
			Export("flush").
			Compile(ctx)
		if err != nil {
			return nil, err
		}
		return []wazero.CompiledModule{c}, nil
	}
	if p.prog, err = runner.Compile(ctx, ins.Wasm, rc); err != nil {
		return nil, err
	}
	return p, nil
}

// Close releases the compiled code.
func (p *Program) Close(ctx context.Context) error { return p.prog.Close(ctx) }

// recorder is the recorder instance's state as seen from Go.
type recorder struct {
	mem                    []byte
	left, pos, next, limit api.MutableGlobal
}

func openRecorder(mod api.Module) (*recorder, error) {
	r := &recorder{}
	m := mod.ExportedMemory("buf")
	if m == nil {
		return nil, errors.New("osp: the recorder exports no memory")
	}
	var ok bool
	if r.mem, ok = m.Read(0, pageSize); !ok {
		return nil, errors.New("osp: the recorder's memory is too small")
	}
	for _, g := range []struct {
		name string
		dst  *api.MutableGlobal
	}{{"left", &r.left}, {"pos", &r.pos}, {"next", &r.next}, {"limit", &r.limit}} {
		if *g.dst, ok = mod.ExportedGlobal(g.name).(api.MutableGlobal); !ok {
			return nil, fmt.Errorf("osp: the recorder exports no mutable global %q", g.name)
		}
	}
	return r, nil
}

func (r *recorder) ids(from, to uint32, dst []uint32) []uint32 {
	dst = dst[:0]
	for o := from; o < to; o += 4 {
		dst = append(dst, binary.LittleEndian.Uint32(r.mem[o:]))
	}
	return dst
}

// sampler is one sampling run's state.
type sampler struct {
	opt     Options
	rng     *rand.Rand
	logKeep float64 // log(1 - 1/MeanSkip)
	hot     *HotList
	maxLen  int

	samples []uint64 // complete samples, per length index
	windows []uint64 // prefixes offered to the hot list, per length index
	records uint64   // block entries recorded
	skipped uint64   // Σ (skip-1) over the skips that ended in a sample
	filled  bool     // the table has been filled
	warm    bool     // the recorder's first entry, a sample of the run's first block, is still to come
	rec     *recorder
	ids     []uint32
}

func newSampler(opt Options) (*sampler, error) {
	s := &sampler{
		opt:     opt,
		rng:     rand.New(rand.NewPCG(opt.Seed, 0x736b69706c656e73)),
		samples: make([]uint64, len(opt.Lengths)),
		windows: make([]uint64, len(opt.Lengths)),
		maxLen:  slices.Max(opt.Lengths),
		warm:    true,
	}
	if opt.MeanSkip > 1 {
		s.logKeep = math.Log1p(-1 / opt.MeanSkip)
	}
	var err error
	s.hot, err = NewHotList(opt.Memory, opt.Lengths, opt.Seed^0x686f746c697374)
	return s, err
}

// skip draws a skip: the recorder returns it to the program, whose
// countdown then reaches zero on the skip-th block entry from there, so
// skip-1 entries go unsampled. Skips are geometric, so every block entry
// outside a sample starts the next one with the same probability
// 1/MeanSkip, whatever came before: the sample starts cannot fall into
// step with a loop of the program.
func (s *sampler) skip() uint32 {
	if s.logKeep == 0 {
		return 1
	}
	u := 1 - s.rng.Float64() // (0, 1]
	return uint32(min(1+math.Floor(math.Log(u)/s.logKeep), 1<<30))
}

// flush takes the complete samples out of the recorder and refills its
// table; final is the call after the run, which also counts the blocks of
// a sample that the end of the run cut short and returns the skip the
// program is in (the table entry of the next sample).
func (s *sampler) flush(mod api.Module, final bool) (uint32, error) {
	if s.rec == nil {
		var err error
		if s.rec, err = openRecorder(mod); err != nil {
			return 0, err
		}
	}
	r := s.rec
	pos, next := uint32(r.pos.Get()), uint32(r.next.Get())
	if next < tableStart || next > pageSize || (next-tableStart)%entryBytes != 0 || pos > recordBytes || pos%4 != 0 {
		return 0, fmt.Errorf("osp: recorder state out of range (pos %d, next %d)", pos, next)
	}
	off := uint32(0)
	for e := uint32(tableStart); e < next; e += entryBytes {
		skip := binary.LittleEndian.Uint32(r.mem[e:])
		l := binary.LittleEndian.Uint32(r.mem[e+4:])
		end := off + 4*l
		if end > pos {
			return 0, fmt.Errorf("osp: %d records for a sample of %d blocks at %d", (pos-off)/4, l, off)
		}
		if s.warm {
			// The module's own first entry: the program's first
			// block entry, a sample that is not kept.
			s.warm = false
		} else {
			i := slices.Index(s.opt.Lengths, int(l))
			if i < 0 {
				return 0, fmt.Errorf("osp: a sample of length %d, which was not asked for", l)
			}
			s.samples[i]++
			s.ids = r.ids(off, end, s.ids)
			// Every prefix of a sample starts where the sample does,
			// at a block entry as random as any: a sample of 64
			// blocks is also one of 2, 4, ... blocks.
			for j, pl := range s.opt.Lengths {
				if pl <= len(s.ids) {
					s.windows[j]++
				}
			}
			s.hot.AddPrefixes(s.ids)
			s.skipped += uint64(skip) - 1
		}
		s.records += uint64(l)
		off = end
	}
	if final {
		s.records += uint64(pos-off) / 4
		if s.warm || next == pageSize {
			return 1, nil
		}
		return binary.LittleEndian.Uint32(r.mem[next:]), nil
	}
	if off != pos {
		return 0, fmt.Errorf("osp: %d records beyond the complete samples", (pos-off)/4)
	}
	// Only the consumed entries need new draws: the rest move to the
	// front. The first time, the table holds only the module's entry.
	e := uint32(tableStart)
	if s.filled {
		e += uint32(copy(r.mem[tableStart:], r.mem[next:pageSize]))
	}
	s.filled = true
	for ; e < pageSize; e += entryBytes {
		binary.LittleEndian.PutUint32(r.mem[e:], s.skip())
		binary.LittleEndian.PutUint32(r.mem[e+4:], uint32(s.opt.Lengths[s.rng.IntN(len(s.opt.Lengths))]))
	}
	r.pos.Set(0)
	r.next.Set(tableStart)
	r.limit.Set(uint64(recordBytes - 4*s.maxLen))
	return 0, nil
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
// marked incomplete, together with the error.
func (p *Program) Sample(ctx context.Context, opt Options, rc runner.Config) (*Profile, runner.Result, error) {
	if p.mode != ModeSample {
		return nil, runner.Result{}, errors.New("osp: Sample needs a program compiled for sampling")
	}
	if err := opt.fill(); err != nil {
		return nil, runner.Result{}, err
	}
	s, err := newSampler(opt)
	if err != nil {
		return nil, runner.Result{}, err
	}
	var blocks uint64
	p.flush = func(mod api.Module) error { _, err := s.flush(mod, false); return err }
	defer func() { p.flush = nil }()
	after := rc.AfterRun
	rc.AfterRun = func(ctx context.Context, mods map[string]api.Module) error {
		skip, err := s.flush(mods[RecorderModule], true)
		if err != nil {
			return err
		}
		c, err := countdown(mods)
		if err != nil {
			return err
		}
		if c == 0 || c > skip {
			return fmt.Errorf("osp: the program's countdown is %d in a skip of %d", c, skip)
		}
		// The skip the program is in: skip-c of its entries went by.
		blocks = s.records + s.skipped + uint64(skip-c)
		if after != nil {
			return after(ctx, mods)
		}
		return nil
	}
	res, runErr := p.prog.Run(ctx, rc)
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
	offsets := make([]int, len(p.Instrumented.Blocks))
	for i, b := range p.Instrumented.Blocks {
		offsets[i] = b.Offset
	}
	ex := NewExact(lengths, offsets)
	var rec *recorder
	var ids []uint32
	drain := func(mod api.Module) error {
		if rec == nil {
			var err error
			if rec, err = openRecorder(mod); err != nil {
				return err
			}
		}
		pos := uint32(rec.pos.Get())
		if pos > pageSize || pos%4 != 0 {
			return fmt.Errorf("osp: recorder position %d out of range", pos)
		}
		ids = rec.ids(0, pos, ids)
		for _, id := range ids {
			if int(id) >= len(offsets) {
				return fmt.Errorf("osp: block id %d out of range", id)
			}
		}
		ex.Push(ids)
		rec.pos.Set(0)
		return nil
	}
	p.flush = drain
	defer func() { p.flush = nil }()
	after := rc.AfterRun
	rc.AfterRun = func(ctx context.Context, mods map[string]api.Module) error {
		if rec == nil {
			return nil
		}
		if err := drain(mods[RecorderModule]); err != nil {
			return err
		}
		if after != nil {
			return after(ctx, mods)
		}
		return nil
	}
	res, err := p.prog.Run(ctx, rc)
	if err != nil && res.Trap == nil && !res.Exited {
		return nil, res, err
	}
	return ex, res, err
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
			Lengths:       slices.Clone(s.opt.Lengths),
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
	for i, l := range s.opt.Lengths {
		st := states[i]
		prof.Sampling.Samples += s.samples[i]
		f := LengthFacts{Length: l, Samples: s.samples[i], Windows: s.windows[i], Tau: st.Tau, Raises: st.Raises, Bytes: st.Bytes}
		if s.windows[i] > 0 {
			scale[i] = float64(blocks) / float64(s.windows[i])
			f.Scale = scale[i]
			f.Floor = 3 * st.Tau * scale[i]
		}
		prof.Sampling.ByLength = append(prof.Sampling.ByLength, f)
	}
	funcs := map[uint32]bool{}
	pairs := s.hot.Pairs()
	sortPairs(pairs)
	for _, pr := range pairs {
		i := slices.Index(s.opt.Lengths, len(pr.Blocks))
		prof.Sampling.ByLength[i].Pairs++
		sp := Subpath{
			Length:   len(pr.Blocks),
			Count:    pr.Count,
			Estimate: float64(pr.Count) * states[i].Tau * scale[i],
			Error:    1.96 * math.Sqrt(float64(pr.Count)) * states[i].Tau * scale[i],
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
