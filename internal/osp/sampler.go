// The sampler: one sampling run's state, the worker that turns the
// recorder's records into samples for the hot list, and the skips it draws.

package osp

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero/api"
)

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
