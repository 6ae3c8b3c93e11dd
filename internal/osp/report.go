// The text report of an OSP profile: the run's facts and each length's
// hottest subpaths, located by source line and column where the module
// has DWARF.

package osp

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pathprof/pathprof/internal/numfmt"
	"github.com/pathprof/pathprof/internal/srcmap"
	"github.com/pathprof/pathprof/internal/wasm"
)

// Locator names blocks by source line where the module has DWARF, else
// by function and offset in the function's body, as `pathprof report`
// does.
type Locator struct {
	m   *wasm.Module
	src *srcmap.Map
	// Warning says why there are no source lines, if there is a reason
	// beyond the module having no DWARF.
	Warning string
	// twins holds the blocks that would read like another block of a
	// report: they get their offset in their function too.
	twins map[int]bool
}

// NewLocator checks that module is the one prof was made from and reads
// its line tables.
func NewLocator(prof *Profile, module []byte) (*Locator, error) {
	sum := sha256.Sum256(module)
	if got := hex.EncodeToString(sum[:]); prof.Module.SHA256 != "" && got != prof.Module.SHA256 {
		return nil, fmt.Errorf("the module is not the one profiled: its sha256 is %s, the profile's %s", got, prof.Module.SHA256)
	}
	m, err := wasm.Decode(module)
	if err != nil {
		return nil, err
	}
	l := &Locator{m: m}
	if l.src, err = srcmap.FromModule(m); err != nil {
		l.Warning = fmt.Sprintf("no source lines: %v", err)
	}
	return l, nil
}

// At names one block: file:line:column (or file:line), or
// function+0xOFFSET (the offset in the function's body), or the file
// offset in hex. A block that would read like another block of the
// report gets its offset in its function too: file:line:column(+0xOFFSET).
func (l *Locator) At(b BlockRef) string {
	prefix, rest := l.at(b)
	return prefix + rest
}

// at is At split into the part consecutive blocks can share (the file and
// colon, or the function and plus) and the rest.
func (l *Locator) at(b BlockRef) (prefix, rest string) {
	if l == nil {
		return "", fmt.Sprintf("0x%x", b.Offset)
	}
	name, off := "", -1
	if b.Func >= l.m.NumImportedFuncs && b.Func < l.m.NumFuncs() {
		name = cmp.Or(l.m.FuncName(b.Func), fmt.Sprintf("func[%d]", b.Func))
		off = b.Offset - l.m.Code[b.Func-l.m.NumImportedFuncs].OrigOff
	}
	if file, line, col, ok := l.src.LookupColumn(b.Offset); ok {
		rest = strconv.Itoa(line)
		if col > 0 {
			rest += ":" + strconv.Itoa(col)
		}
		if l.twins[b.Offset] && off >= 0 {
			rest += fmt.Sprintf("(+0x%x)", off)
		}
		return file + ":", rest
	}
	if off >= 0 {
		return name + "+", fmt.Sprintf("0x%x", off)
	}
	return "", fmt.Sprintf("0x%x", b.Offset)
}

// tellApart marks the blocks of subs that would read like another of
// them, so that At gives them their offsets.
func (l *Locator) tellApart(subs []Subpath) {
	if l == nil {
		return
	}
	l.twins = nil
	offs := map[string]map[int]bool{}
	for _, sp := range subs {
		for _, b := range sp.Blocks {
			at := l.At(b)
			if offs[at] == nil {
				offs[at] = map[int]bool{}
			}
			offs[at][b.Offset] = true
		}
	}
	l.twins = map[int]bool{}
	for _, set := range offs {
		if len(set) > 1 {
			for off := range set {
				l.twins[off] = true
			}
		}
	}
}

// FewSamples is the number of samples below which the report warns that
// the estimates are rough: the evaluation's programs with fewer (grid,
// 169; records, 6) find their top 10 at one length of six or none.
const FewSamples = 1000

// fewSamples returns the warning for a profile of few samples, with the
// mean skip that would have taken about 2·FewSamples in the same run, or
// "".
func fewSamples(prof *Profile) string {
	s, r := &prof.Sampling, &prof.Run
	if s.Samples >= FewSamples || r.BlockEntries == 0 {
		return ""
	}
	msg := fmt.Sprintf("only %d samples: the estimates are rough, and subpaths below a length's floor are mostly missing", s.Samples)
	if len(s.Lengths) > 0 {
		m := SampleBlocks(s.Lengths)
		skip := math.Floor(float64(r.BlockEntries)/(2*FewSamples) - float64(m))
		switch {
		case skip >= 1 && skip < s.MeanSkip:
			msg += fmt.Sprintf("; --skip %d would take about %d in this run", int64(skip), 2*FewSamples)
		case skip < 1 && s.MeanSkip > 1:
			msg += fmt.Sprintf("; --skip 1 would take about %d in this run", r.BlockEntries/uint64(1+m))
		}
	}
	return msg
}

// WriteReport writes the run's facts and, per sample length, the top
// subpaths of prof by estimate, each with its blocks named by l (which
// may be nil: then by file offset).
func WriteReport(w io.Writer, prof *Profile, l *Locator, top int) error {
	var b strings.Builder
	r, s, m := &prof.Run, &prof.Sampling, &prof.Memory
	fmt.Fprintf(&b, "module %s (%d bytes, %d blocks instrumented)\n", prof.Module.Path, prof.Module.Size, prof.Module.Blocks)
	status := "complete"
	if !r.Complete {
		status = "INCOMPLETE: " + r.Error
	}
	fmt.Fprintf(&b, "run: exit code %d, %s, %.3fs, %s block entries\n", r.ExitCode, status, r.Seconds, numfmt.Thousands(r.BlockEntries))
	fmt.Fprintf(&b, "sampling: seed %d, mean skip %g, %s samples of lengths %s (%s blocks recorded)\n",
		s.Seed, s.MeanSkip, numfmt.Thousands(s.Samples), numfmt.Ints(s.Lengths), numfmt.Thousands(s.SampledBlocks))
	// A version 2 profile says nothing: its samples were concise.
	kind := "concise"
	if slices.ContainsFunc(s.ByLength, func(l LengthFacts) bool { return l.Counting }) {
		kind = "counting"
	}
	fmt.Fprintf(&b, "hot list: %s samples, %d subpaths in %d bytes (bound %d); recorder buffer %d bytes\n",
		kind, m.Pairs, m.HotListBytes, m.Bound, m.BufferBytes)
	if l != nil && l.Warning != "" {
		fmt.Fprintf(&b, "warning: %s\n", l.Warning)
	}
	if w := fewSamples(prof); w != "" {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	l.tellApart(prof.Subpaths)
	for _, lf := range s.ByLength {
		var subs []Subpath
		for _, sp := range prof.Subpaths {
			if sp.Length == lf.Length {
				subs = append(subs, sp)
			}
		}
		fmt.Fprintf(&b, "\nlength %d: %s subpaths sampled (one per %.4g block entries), τ = %.4g, %d kept in %d bytes, floor %.3g\n",
			lf.Length, numfmt.Thousands(lf.Windows), lf.Scale, lf.Tau, lf.Pairs, lf.Bytes, lf.Floor)
		for i, sp := range subs[:min(top, len(subs))] {
			share := 0.0
			if r.BlockEntries > 0 {
				share = 100 * sp.Estimate / float64(r.BlockEntries)
			}
			fmt.Fprintf(&b, "  #%d  %.4g ± %.2g (%.2f%% of block entries; %d in the sample)\n", i+1, sp.Estimate, sp.Error, share, sp.Count)
			b.WriteString(blockLine(sp.Blocks, l, "      ", 100))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// blockLine lists blocks compactly: consecutive blocks of one file (or
// function) share its name ("calc.c:12,14"), and a run of blocks that
// repeats is written once with a count ("calc.c:14×3",
// "(calc.c:12,14)×5").
func blockLine(blocks []BlockRef, l *Locator, indent string, width int) string {
	toks := make([]tok, len(blocks))
	for i, bl := range blocks {
		toks[i].prefix, toks[i].rest = l.at(bl)
	}
	var b strings.Builder
	b.WriteString(indent)
	col := len(indent)
	prev := "" // the file or function the last item named
	for i := 0; i < len(toks); {
		// The repeating run that covers the most blocks from here.
		p, n := 1, 1
		for q := 1; q <= 16 && i+2*q <= len(toks); q++ {
			m := 1
			for i+(m+1)*q <= len(toks) && slices.Equal(toks[i+m*q:i+(m+1)*q], toks[i:i+q]) {
				m++
			}
			if m > 1 && q*m > p*n {
				p, n = q, m
			}
		}
		var short, full string // short leans on prev's name
		if p == 1 {
			t := toks[i]
			s := t.rest
			if n > 1 {
				s += "×" + strconv.Itoa(n)
			}
			full, short = " "+t.prefix+s, " "+t.prefix+s
			if t.prefix != "" && t.prefix == prev {
				short = "," + s
			}
			prev = t.prefix
		} else {
			full = " (" + joinToks(toks[i:i+p]) + ")×" + strconv.Itoa(n)
			short = full
			prev = ""
		}
		piece := short
		if col == len(indent) {
			piece = full[1:]
		} else if col+len(short) > width {
			b.WriteString("\n")
			b.WriteString(indent)
			col = len(indent)
			piece = full[1:]
		}
		b.WriteString(piece)
		col += len(piece)
		i += p * n
	}
	b.WriteString("\n")
	return b.String()
}

// tok is a block's name split into the part consecutive blocks can share
// (the file and colon, or the function and plus) and the rest.
type tok struct{ prefix, rest string }

func joinToks(ts []tok) string {
	var b strings.Builder
	prev := ""
	for i := 0; i < len(ts); {
		t := ts[i]
		n := 1
		for i+n < len(ts) && ts[i+n] == t {
			n++
		}
		s := t.rest
		if n > 1 {
			s += "×" + strconv.Itoa(n)
		}
		switch {
		case i > 0 && t.prefix != "" && t.prefix == prev:
			b.WriteString("," + s)
		case i > 0:
			b.WriteString(" " + t.prefix + s)
		default:
			b.WriteString(t.prefix + s)
		}
		prev = t.prefix
		i += n
	}
	return b.String()
}
