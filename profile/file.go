package profile

// This file reads, writes and validates profile files.

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pathprof/pathprof/internal/atomicfile"
)

// Write writes p as indented JSON, functions in index order and paths in id
// order, one path per line: path lists are by far the bulk of a profile, and
// one line each keeps the file small enough to read and to diff. An empty
// Format or zero Version is filled in; p itself is not modified. Write
// refuses a profile that Validate rejects, so that every file written can
// be read back.
func Write(w io.Writer, p *Profile) error {
	q := *p
	if q.Format == "" {
		q.Format = Format
	}
	if q.Version == 0 {
		q.Version = Version
	}
	if q.Runs == nil {
		q.Runs = []Run{}
	}
	q.Functions = slices.Clone(q.Functions)
	slices.SortStableFunc(q.Functions, func(a, b Function) int { return cmp.Compare(a.Index, b.Index) })
	for i := range q.Functions {
		f := &q.Functions[i]
		f.Paths = slices.Clone(f.Paths)
		slices.SortStableFunc(f.Paths, func(a, b Path) int { return cmp.Compare(a.ID, b.ID) })
	}
	if err := q.Validate(); err != nil {
		return err
	}

	// The header and each function's fields are indented by encoding/json;
	// the shadowing fields (shallower than the embedded ones, so they win)
	// leave out the lists written here by hand.
	type head struct {
		Profile
		Functions []Function `json:"functions,omitempty"`
	}
	type funcHead struct {
		Function
		Paths []Path `json:"paths,omitempty"`
	}
	var b bytes.Buffer
	h, err := json.MarshalIndent(head{Profile: q}, "", "  ")
	if err != nil {
		return err
	}
	b.Write(bytes.TrimSuffix(h, []byte("\n}")))
	b.WriteString(",\n  \"functions\": [")
	for i := range q.Functions {
		f := &q.Functions[i]
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    ")
		fh, err := json.MarshalIndent(funcHead{Function: *f}, "    ", "  ")
		if err != nil {
			return err
		}
		b.Write(bytes.TrimSuffix(fh, []byte("\n    }")))
		b.WriteString(",\n      \"paths\": [")
		for j := range f.Paths {
			if j > 0 {
				b.WriteByte(',')
			}
			pj, err := json.Marshal(&f.Paths[j])
			if err != nil {
				return err
			}
			b.WriteString("\n        ")
			b.Write(pj)
		}
		if len(f.Paths) > 0 {
			b.WriteString("\n      ")
		}
		b.WriteString("]\n    }")
	}
	if len(q.Functions) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("]\n}\n")
	_, err = w.Write(b.Bytes())
	return err
}

// WriteFile writes p to the file at path (see Write) through a temporary
// file renamed into place, so that a failure leaves any earlier file whole.
func WriteFile(path string, p *Profile) error {
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b.Bytes(), 0o644)
}

// Read reads and validates a profile. Profiles come from files a user
// names, so every malformation is an error that says what is wrong, never
// a panic: a truncated file, a file that is not a profile, a profile of a
// newer format version, or contents that Validate rejects.
func Read(r io.Reader) (*Profile, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return parse(data)
}

// ReadFile reads and validates the profile at path; errors name the file.
func ReadFile(path string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

func parse(data []byte) (*Profile, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("not a pathprof profile: the file is empty")
	}
	// A profile this pathprof reads decodes at once; only a file that
	// does not is looked at field by field below, to say why.
	var p Profile
	if json.Unmarshal(data, &p) == nil && p.Format == Format && p.Version >= 1 && p.Version <= Version {
		if err := p.Validate(); err != nil {
			return nil, err
		}
		return &p, nil
	}
	// The format and version are looked at before the rest, so that a file
	// of another kind or a newer version is named as such rather than
	// reported by whichever of its fields first fails to decode.
	var hdr struct {
		Format  *string          `json:"format"`
		Version *json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(data, &hdr); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			if se.Offset >= int64(len(bytes.TrimRight(data, " \t\r\n"))) {
				return nil, fmt.Errorf("truncated profile: the JSON ends early, after %d bytes", len(data))
			}
			return nil, fmt.Errorf("not a pathprof profile: invalid JSON at byte %d: %v", se.Offset, se)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			return nil, fmt.Errorf("not a pathprof profile: the file holds a JSON %s, not an object", te.Value)
		}
		if hdr.Format == nil || *hdr.Format != Format {
			return nil, errors.New("not a pathprof profile: no \"format\": \"pathprof-profile\" field")
		}
		return nil, fmt.Errorf("invalid profile: %v", err)
	}
	if hdr.Format == nil {
		return nil, errors.New("not a pathprof profile: no \"format\" field")
	}
	if *hdr.Format != Format {
		return nil, fmt.Errorf("not a pathprof profile: format is %q, not %q", *hdr.Format, Format)
	}
	if hdr.Version == nil {
		return nil, errors.New("invalid profile: no \"version\" field")
	}
	var v int
	if err := json.Unmarshal(*hdr.Version, &v); err != nil {
		return nil, fmt.Errorf("invalid profile: version %s is not a whole number", *hdr.Version)
	}
	if v > Version {
		return nil, fmt.Errorf("profile format version %d is newer than this pathprof reads (version %d): use a newer pathprof", v, Version)
	}
	if v < 1 {
		return nil, fmt.Errorf("invalid profile: version %d", v)
	}

	p = Profile{}
	if err := json.Unmarshal(data, &p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("invalid profile: %s: a JSON %s where %s belongs", te.Field, te.Value, jsonKind(te.Type.Kind().String()))
		}
		return nil, fmt.Errorf("invalid profile: %v", err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// jsonKind names a Go kind the way a JSON reader thinks of it.
func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "uint"):
		return "a non-negative whole number"
	case strings.HasPrefix(k, "int"):
		return "a whole number"
	case strings.HasPrefix(k, "float"):
		return "a number"
	case k == "slice":
		return "a list"
	case k == "struct":
		return "an object"
	case k == "bool":
		return "true or false"
	}
	return "a " + k
}

// Validate checks what a reader of the profile relies on. Its errors name
// the function and path at fault.
func (p *Profile) Validate() error {
	if err := p.validate(); err != nil {
		return fmt.Errorf("invalid profile: %w", err)
	}
	return nil
}

func (p *Profile) validate() error {
	if p.Format != Format {
		return fmt.Errorf("format is %q, not %q", p.Format, Format)
	}
	if p.Version < 1 || p.Version > Version {
		return fmt.Errorf("version %d (this pathprof reads version %d)", p.Version, Version)
	}
	m := p.Module
	if m.SHA256 != "" {
		if b, err := hex.DecodeString(m.SHA256); err != nil || len(b) != 32 {
			return fmt.Errorf("module sha256 %q is not 64 hex digits", m.SHA256)
		}
	}
	if m.Size < 0 || m.CodeOffset < 0 || (m.Size > 0 && m.CodeOffset >= m.Size) {
		return fmt.Errorf("module size %d and code offset %d do not fit together", m.Size, m.CodeOffset)
	}
	if p.Strategy != Mixed || len(p.Inputs) <= 1 {
		if err := checkStrategy(p.Strategy, p.Copies); err != nil {
			return err
		}
	} else if p.Copies < 1 {
		return fmt.Errorf("%d copies", p.Copies)
	}
	if w := p.Weights; w != nil {
		switch w.Source {
		case WeightsStatic, WeightsEstimate, WeightsProfile, WeightsPrevious:
		default:
			return fmt.Errorf("weights source %q", w.Source)
		}
		if w.Matched < 0 || w.Ran < w.Matched {
			return fmt.Errorf("weights matched %d of %d functions", w.Matched, w.Ran)
		}
	}
	if err := checkEnd(p.Complete, p.Incomplete, p.Interrupted); err != nil {
		return err
	}
	if err := p.validateInputs(); err != nil {
		return err
	}
	if err := checkRegion(p.Region); err != nil {
		return err
	}
	for _, in := range p.Inputs {
		if err := checkRegion(in.Region); err != nil {
			return fmt.Errorf("input %q: %w", in.Label, err)
		}
	}
	if err := p.checkUncovered(); err != nil {
		return err
	}
	for i, r := range p.Runs {
		if r.Copy < 0 {
			return fmt.Errorf("run %d: copy %d", i, r.Copy)
		}
		if !(r.Seconds >= 0) {
			return fmt.Errorf("run %d: %v seconds", i, r.Seconds)
		}
	}
	inModule := func(off int) bool {
		return off >= m.CodeOffset && (m.Size == 0 || off < m.Size)
	}
	seen := make(map[uint32]bool, len(p.Functions))
	for fi := range p.Functions {
		f := &p.Functions[fi]
		if seen[f.Index] {
			return fmt.Errorf("function %d listed twice", f.Index)
		}
		seen[f.Index] = true
		profiled := f.Status == StatusProfiled
		if !profiled && f.Status != "skipped" && !strings.HasPrefix(string(f.Status), skippedPrefix) {
			return fmt.Errorf("function %d: status %q (want \"profiled\" or \"skipped: REASON\")", f.Index, f.Status)
		}
		if !profiled && len(f.Paths) > 0 {
			return fmt.Errorf("function %d: skipped, yet %d paths counted", f.Index, len(f.Paths))
		}
		if profiled || f.PossiblePaths != "" {
			if !isDecimal(f.PossiblePaths) {
				return fmt.Errorf("function %d: possible paths %q is not a decimal number", f.Index, f.PossiblePaths)
			}
			// A profiled function may have no possible paths: one whose
			// every path ends in a trap (abort) never reaches its exit.
		}
		for _, c := range f.Cuts {
			if !inModule(c) {
				return fmt.Errorf("function %d: cut at offset %d, outside the code section", f.Index, c)
			}
		}
		if len(f.Paths) > 0 {
			// Ball-Larus ids lie in [0, possible paths), so there cannot be
			// more executed paths than possible ones either.
			n, err := strconv.ParseUint(f.PossiblePaths, 10, 64)
			bounded := err == nil // else more possible paths than any id can reach
			if bounded && uint64(len(f.Paths)) > n {
				return fmt.Errorf("function %d: %d executed paths but only %s possible", f.Index, len(f.Paths), f.PossiblePaths)
			}
			for _, q := range f.Paths {
				if bounded && q.ID >= n {
					return fmt.Errorf("function %d: path id %d not below the %s possible paths", f.Index, q.ID, f.PossiblePaths)
				}
			}
		}
		ids := make(map[uint64]bool, len(f.Paths))
		for _, q := range f.Paths {
			if ids[q.ID] {
				return fmt.Errorf("function %d: path %d listed twice", f.Index, q.ID)
			}
			ids[q.ID] = true
			switch q.Kind {
			case KindEntryExit, KindEntryBack, KindBackBack, KindBackExit:
			default:
				return fmt.Errorf("function %d, path %d: kind %q (want %s, %s, %s or %s)", f.Index, q.ID, q.Kind,
					KindEntryExit, KindEntryBack, KindBackBack, KindBackExit)
			}
			if q.Count == 0 {
				return fmt.Errorf("function %d, path %d: count 0 (a profile lists only paths that ran)", f.Index, q.ID)
			}
			if len(q.Blocks) == 0 {
				return fmt.Errorf("function %d, path %d: no blocks", f.Index, q.ID)
			}
			for _, b := range q.Blocks {
				if !inModule(b) {
					return fmt.Errorf("function %d, path %d: block offset %d outside the code section", f.Index, q.ID, b)
				}
			}
		}
	}
	return nil
}

// checkUncovered checks an uncovered_from record: a named base of at
// least one run, and new paths in order, each one a path the profile
// lists, since a path that did not run cannot be newly covered.
func (p *Profile) checkUncovered() error {
	u := p.UncoveredFrom
	if u == nil {
		return nil
	}
	if u.Base == "" || u.BaseInputs < 1 {
		return fmt.Errorf("uncovered_from: base %q of %d runs", u.Base, u.BaseInputs)
	}
	listed := map[[2]uint64]bool{}
	for _, f := range p.Functions {
		for _, q := range f.Paths {
			listed[[2]uint64{uint64(f.Index), q.ID}] = true
		}
	}
	for i, np := range u.NewPaths {
		if i > 0 && !lessPath(u.NewPaths[i-1], np) {
			return fmt.Errorf("uncovered_from: new path %v out of order or repeated", np)
		}
		if !listed[np] {
			return fmt.Errorf("uncovered_from: new path %d of function %d is not among the profile's paths", np[1], np[0])
		}
	}
	return nil
}

// lessPath orders [function index, path id] pairs by function, then id.
func lessPath(a, b [2]uint64) bool {
	return a[0] < b[0] || a[0] == b[0] && a[1] < b[1]
}

// checkStrategy checks a strategy and its number of copies.
func checkStrategy(s Strategy, copies int) error {
	if !slices.Contains(Strategies, s) {
		return fmt.Errorf("strategy %q (want sbl, pbl or p3)", s)
	}
	if copies < 1 || (s == SBL && copies != 1) {
		return fmt.Errorf("%d copies for strategy %s", copies, s)
	}
	return nil
}

// checkEnd checks that what says how a run ended agrees with itself.
func checkEnd(complete bool, incomplete string, in *Interruption) error {
	if complete && incomplete != "" {
		return fmt.Errorf("marked complete but also incomplete (%q)", incomplete)
	}
	if in == nil {
		return nil
	}
	if complete {
		return errors.New("marked complete but also interrupted")
	}
	if in.Reason == "" {
		return errors.New("interrupted, with no reason")
	}
	if !(in.Seconds >= 0) {
		return fmt.Errorf("interrupted after %v seconds", in.Seconds)
	}
	if _, err := time.Parse(time.RFC3339, in.Time); err != nil {
		return fmt.Errorf("interrupted at %q: not an RFC 3339 time", in.Time)
	}
	return nil
}

// isDecimal reports whether s is a non-negative decimal integer without
// leading zeros.
func isDecimal(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// checkRegion checks a region's record: markers or a function, not both,
// and each function's cuts once, in index order.
func checkRegion(r *Region) error {
	if r == nil {
		return nil
	}
	if (r.Func != "") == (r.Start != "" || r.End != "") || r.Func == "" && (r.Start == "" || r.End == "") {
		return fmt.Errorf("region: want start and end, or func (start %q, end %q, func %q)", r.Start, r.End, r.Func)
	}
	for i, c := range r.Cut {
		if i > 0 && c.Index <= r.Cut[i-1].Index {
			return fmt.Errorf("region: cuts of function %d out of order or repeated", c.Index)
		}
	}
	return nil
}
