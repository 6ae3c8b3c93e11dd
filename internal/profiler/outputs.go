package profiler

// This file checks the copies' outputs against each other as they come,
// by chunk digests, so that memory does not grow with the output.

import (
	"crypto/sha256"
	"fmt"
	"io"
	"sync"
)

// outputChunk is the size of the chunks whose digests are compared: a
// divergence is reported within one chunk.
const outputChunk = 4096

// outputCheck compares the k copies' output on one stream. Each copy
// writes through its own writer (writer); a chunk's digest is kept only
// until every copy has written that chunk, so memory grows with how far
// the copies are apart, 32 bytes a chunk, not with the output.
type outputCheck struct {
	name string // "stdout" or "stderr"
	k    int
	// diverged, if set, is called once, as soon as two copies are seen to
	// differ.
	diverged func(error)

	mu      sync.Mutex
	pending map[int64]*chunkDigest // by chunk index
	total   []int64                // bytes each copy wrote
	err     error                  // the first divergence
}

// chunkDigest is the first digest seen of a chunk, whose copy it came
// from, and how many copies have written the chunk.
type chunkDigest struct {
	sum  [sha256.Size]byte
	from int
	seen int
}

func newOutputCheck(name string, k int, diverged func(error)) *outputCheck {
	return &outputCheck{name: name, k: k, diverged: diverged, pending: map[int64]*chunkDigest{}, total: make([]int64, k)}
}

// writer is copy c's stream.
func (o *outputCheck) writer(c int) *chunkWriter {
	return &chunkWriter{o: o, c: c, buf: make([]byte, 0, outputChunk)}
}

// add records copy c's digest of chunk i.
func (o *outputCheck) add(c int, i int64, sum [sha256.Size]byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	d := o.pending[i]
	if d == nil {
		o.pending[i] = &chunkDigest{sum: sum, from: c, seen: 1}
		return
	}
	if d.sum != sum {
		o.fail(fmt.Errorf("copy %d's %s differs from copy %d's within bytes %d to %d: the run is not deterministic",
			max(c, d.from), o.name, min(c, d.from), i*outputChunk, (i+1)*outputChunk-1))
	}
	if d.seen++; d.seen == o.k {
		delete(o.pending, i)
	}
}

func (o *outputCheck) fail(err error) {
	if o.err != nil {
		return
	}
	o.err = err
	if o.diverged != nil {
		o.diverged(err)
	}
}

// finish checks, once every copy has ended, that they all wrote as many
// bytes; it returns the first divergence.
func (o *outputCheck) finish() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for c := 1; c < o.k; c++ {
		if o.total[c] != o.total[0] {
			o.fail(fmt.Errorf("copy %d wrote %d bytes to %s, copy 0 %d: the run is not deterministic", c, o.total[c], o.name, o.total[0]))
		}
	}
	return o.err
}

// chunkWriter is one copy's stream: it digests each full chunk, and the
// last, partial one on close.
type chunkWriter struct {
	o   *outputCheck
	c   int
	n   int64 // chunks digested
	buf []byte
}

func (w *chunkWriter) Write(b []byte) (int, error) {
	n := len(b)
	w.o.mu.Lock()
	w.o.total[w.c] += int64(n)
	w.o.mu.Unlock()
	for len(b) > 0 {
		m := min(len(b), outputChunk-len(w.buf))
		w.buf = append(w.buf, b[:m]...)
		b = b[m:]
		if len(w.buf) == outputChunk {
			w.flush()
		}
	}
	return n, nil
}

func (w *chunkWriter) flush() {
	w.o.add(w.c, w.n, sha256.Sum256(w.buf))
	w.n++
	w.buf = w.buf[:0]
}

// Close digests the last, partial chunk.
func (w *chunkWriter) Close() error {
	if len(w.buf) > 0 {
		w.flush()
	}
	return nil
}

var _ io.WriteCloser = (*chunkWriter)(nil)
