// What a counting copy adds to the code section, by what the added code
// does: the measure that makes the copy's size something one can work on.

package instrument

import "github.com/pathprof/pathprof/internal/wasm"

// SizeKind is one kind of code a counting copy adds.
type SizeKind uint8

const (
	SizeInit        SizeKind = iota // r = c
	SizeAdd                         // r += c on an edge of its own
	SizeSelect                      // r += select(…) before a br_if, with its saved condition
	SizeDense                       // a count of a dense function
	SizeHashed                      // a count of a hashed function
	SizeBrIf                        // a br_if's block nest (its probes apart), less the br_if it replaces
	SizeBackIf                      // a back edge's if (its probes apart), less the br_if it replaces
	SizeTakenIf                     // the if of a br_if whose taken edge alone has probes, less the br_if
	SizeValuedBrIf                  // the if/else before a br_if that carries values
	SizeElse                        // an else arm added to an if
	SizeBrTable                     // a br_table's trampolines (their probes apart), less the br_table
	SizeLoopCount                   // counts in local loop counters
	SizeLoopFlush                   // loop counters flushed on leaving a loop, cleared on entering it
	SizeCountedLoop                 // a counted loop's start kept at its entry, its back edges counted at its exit
	SizeLocals                      // the scratch locals' declarations
	SizeHits                        // the copy's own hit count (Options.CountHits)
	SizeSliced                      // the test of a function whose calls are shared out, and its unprobed body
	SizeLoopSlices                  // a shared loop's replicas, flags and guarded counts
	SizeFrame                       // the bodies' size fields and the section's function count
	SizeFuncs                       // the counters' functions (hashed counts, growing memory)
	SizeMemory                      // memory.size and memory.grow turned into the program's view
	SizeShortest                    // padded immediates written shortest (negative: bytes saved)
	SizeOther                       // bytes no kind above accounts for: an accounting bug
	NumSizeKinds
)

var sizeNames = [NumSizeKinds]string{
	"init", "add", "select", "dense count", "hashed count", "br_if nest", "back-edge if", "taken if",
	"valued br_if", "added else", "br_table", "loop count", "loop flush", "counted loop", "locals", "hits",
	"sliced calls", "loop slices", "body sizes", "counter functions", "memory ops", "shortest", "other",
}

func (k SizeKind) String() string { return sizeNames[k] }

// Sizes is what a copy adds to the code section, per kind: bytes (less
// the original bytes that added code replaces) and how many sequences.
type Sizes struct {
	Bytes, Count [NumSizeKinds]int64
}

// Total is the growth of the code section's payload.
func (s *Sizes) Total() int64 {
	var t int64
	for _, b := range s.Bytes {
		t += b
	}
	return t
}

func (s *Sizes) addAll(o *Sizes) {
	for k := range s.Bytes {
		s.Bytes[k] += o.Bytes[k]
		s.Count[k] += o.Count[k]
	}
}

// sizer attributes a function's added bytes to kinds as they are
// appended. Regions nest: an outer region gets only what its inner ones
// did not take. A nil sizer accounts nothing (sampling copies).
type sizer struct {
	s    Sizes
	done int64 // bytes attributed so far
}

// sizeMark is where a region began.
type sizeMark struct {
	at   int
	done int64
}

func (z *sizer) mark(a *wasm.Asm) sizeMark {
	if z == nil {
		return sizeMark{}
	}
	return sizeMark{len(a.B), z.done}
}

// end attributes what a region appended to a, less what its inner
// regions took, to kind k.
func (z *sizer) end(k SizeKind, a *wasm.Asm, m sizeMark) {
	if z == nil || len(a.B) == m.at {
		return
	}
	z.rest(k, int64(len(a.B)-m.at), m.done)
}

// attributed is how many bytes regions have taken so far.
func (z *sizer) attributed() int64 {
	if z == nil {
		return 0
	}
	return z.done
}

// rest attributes n bytes, less what the regions ended since done took,
// to kind k, as one sequence.
func (z *sizer) rest(k SizeKind, n, done int64) {
	if z == nil {
		return
	}
	n -= z.done - done
	z.s.Bytes[k] += n
	z.s.Count[k]++
	z.done += n
}

// lebLen is the length of v's unsigned LEB128 encoding.
func lebLen(v uint64) int64 {
	n := int64(1)
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
