package profile

// This file merges profiles of different runs of one module.

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"maps"
	"slices"
	"strings"
)

// Merger adds up profiles of runs of one module, one profile at a time,
// so that merging many profiles holds only their sum: counts add, and
// every run stays recorded as an input with its own counts (ByInput).
// The result does not depend on the order or grouping of the merges: a
// merged profile merges again, and any order and grouping of the same
// runs gives the same profile, byte for byte once written.
type Merger struct {
	n      int // profiles added
	module Module
	first  string // the first profile's name, for errors
	funcs  map[uint32]*mergeFunc
	inputs []mergeInput // in the order added
	done   bool         // Profile has taken the counts
	// region is the first profile's region, which every other must share:
	// counts of different regions do not add up.
	region *Region
	// uncovered is the first profile's uncovered_from, whose base every
	// other must share, with the union of their new paths.
	uncovered *Uncovered
	newPaths  map[[2]uint64]bool
}

type mergeInput struct {
	in   Input
	runs []Run // with Input zero
}

type mergeFunc struct {
	meta  Function // without paths
	paths map[uint64]*mergePath
}

type mergePath struct {
	kind   string
	blocks []int
	count  uint64
	by     []InputCount // by index in Merger.inputs, ascending
}

// NewMerger returns an empty Merger.
func NewMerger() *Merger { return &Merger{funcs: map[uint32]*mergeFunc{}} }

// Add adds the profile p, which its errors call name. A profile of
// version 1, or one without inputs, counts as one input labelled label
// (its arguments and input digest unknown). Profiles of different modules
// are refused, naming both digests; so are profiles whose functions were
// numbered differently. After an error the Merger must not be used.
func (m *Merger) Add(name, label string, p *Profile) error {
	if m.done {
		return fmt.Errorf("%s: added after the merged profile was taken", name)
	}
	if m.n == 0 {
		m.module, m.first = p.Module, name
	} else if err := m.sameModule(name, p.Module); err != nil {
		return err
	}
	if m.n == 0 {
		m.region = p.Region
	} else if !sameRegion(m.region, p.Region) {
		return fmt.Errorf("%s: %s, %s: %s: counts of different regions do not add up", name, regionLabel(p.Region), m.first, regionLabel(m.region))
	}
	if m.n == 0 {
		if u := p.UncoveredFrom; u != nil {
			m.uncovered = &Uncovered{Base: u.Base, BaseInputs: u.BaseInputs}
			m.newPaths = map[[2]uint64]bool{}
		}
	} else if !sameUncovered(m.uncovered, p.UncoveredFrom) {
		return fmt.Errorf("%s: %s, %s: %s: counts made against different bases do not add up",
			name, uncoveredLabel(p.UncoveredFrom), m.first, uncoveredLabel(m.uncovered))
	}
	if u := p.UncoveredFrom; u != nil {
		for _, np := range u.NewPaths {
			m.newPaths[np] = true
		}
	}
	if p.Module.Path != "" && (m.module.Path == "" || p.Module.Path < m.module.Path) {
		m.module.Path = p.Module.Path
	}
	m.n++
	base := len(m.inputs)
	if len(p.Inputs) == 0 {
		in := Input{Label: label, Args: []string{}, Strategy: p.Strategy, Copies: p.Copies, Complete: p.Complete,
			Incomplete: p.Incomplete, Interrupted: p.Interrupted, ExitCode: p.ExitCode, Stubs: p.Stubs, Region: p.Region}
		for _, r := range p.Runs {
			in.Seconds = max(in.Seconds, r.Seconds)
		}
		m.inputs = append(m.inputs, mergeInput{in: in})
	}
	for _, in := range p.Inputs {
		if in.Args == nil {
			in.Args = []string{}
		}
		m.inputs = append(m.inputs, mergeInput{in: in})
	}
	for _, r := range p.Runs {
		i := base + r.Input
		if i >= len(m.inputs) {
			return fmt.Errorf("%s: run of copy %d names input %d of %d", name, r.Copy, r.Input, len(m.inputs)-base)
		}
		r.Input = 0
		m.inputs[i].runs = append(m.inputs[i].runs, r)
	}
	for fi := range p.Functions {
		f := &p.Functions[fi]
		mf, err := m.function(name, f)
		if err != nil {
			return err
		}
		for qi := range f.Paths {
			q := &f.Paths[qi]
			mp := mf.paths[q.ID]
			if mp == nil {
				mp = &mergePath{kind: q.Kind, blocks: q.Blocks}
				mf.paths[q.ID] = mp
			} else if mp.kind != q.Kind || !slices.Equal(mp.blocks, q.Blocks) {
				return fmt.Errorf("%s: %s, path %d: kind %s, blocks %v; %s has kind %s, blocks %v: the paths were numbered differently",
					name, funcLabel(*f), q.ID, q.Kind, q.Blocks, m.first, mp.kind, mp.blocks)
			}
			if mp.count+q.Count < mp.count {
				return fmt.Errorf("%s: %s, path %d: the counts add up to more than 2^64", name, funcLabel(*f), q.ID)
			}
			mp.count += q.Count
			if len(q.ByInput) == 0 {
				mp.by = append(mp.by, InputCount{Input: base, Count: q.Count})
			}
			for _, c := range q.ByInput {
				mp.by = append(mp.by, InputCount{Input: base + c.Input, Count: c.Count})
			}
		}
	}
	return nil
}

func (m *Merger) sameModule(name string, mod Module) error {
	a, b := m.module, mod
	if a.SHA256 != b.SHA256 {
		digest := func(s string) string {
			if s == "" {
				return "no digest"
			}
			return "sha256 " + s
		}
		return fmt.Errorf("%s is a profile of another module than %s: %s (%s), not %s (%s)",
			name, m.first, b.Path, digest(b.SHA256), a.Path, digest(a.SHA256))
	}
	if a.Size != b.Size || a.CodeOffset != b.CodeOffset {
		return fmt.Errorf("%s: module size %d, code offset %d; %s: size %d, code offset %d", name, b.Size, b.CodeOffset, m.first, a.Size, a.CodeOffset)
	}
	return nil
}

// function returns the merged function of f, checking that f was
// numbered alike. A function one profile skipped and another profiled
// (different instrumenting options) takes the profiled one's facts.
func (m *Merger) function(name string, f *Function) (*mergeFunc, error) {
	meta := *f
	meta.Paths = nil
	mf := m.funcs[f.Index]
	if mf == nil {
		mf = &mergeFunc{meta: meta, paths: map[uint64]*mergePath{}}
		m.funcs[f.Index] = mf
		return mf, nil
	}
	old := &mf.meta
	if old.Name != meta.Name && meta.Name != "" && (old.Name == "" || meta.Name < old.Name) {
		old.Name = meta.Name
	}
	oldProf, newProf := old.Status == StatusProfiled, meta.Status == StatusProfiled
	switch {
	case oldProf && newProf:
		if old.PossiblePaths != meta.PossiblePaths || !slices.Equal(old.Cuts, meta.Cuts) {
			return nil, fmt.Errorf("%s: %s has %s possible paths, cuts %v; in %s %s, cuts %v: the paths were numbered differently",
				name, funcLabel(*f), meta.PossiblePaths, meta.Cuts, m.first, old.PossiblePaths, old.Cuts)
		}
	case newProf:
		old.Status, old.PossiblePaths, old.Cuts = meta.Status, meta.PossiblePaths, meta.Cuts
	case !oldProf && meta.Status < old.Status:
		old.Status, old.PossiblePaths, old.Cuts = meta.Status, meta.PossiblePaths, meta.Cuts
	}
	return mf, nil
}

// Profile returns the merged profile. Inputs are put in one canonical
// order (by their records, then by what they counted), so that the
// order in which profiles were added does not show.
//
// Profile hands the Merger's counts over to the profile: the Merger must
// not be used after.
func (m *Merger) Profile() (*Profile, error) {
	if m.n == 0 {
		return nil, fmt.Errorf("no profiles to merge")
	}
	if m.done {
		return nil, fmt.Errorf("the merged profile was already taken")
	}
	m.done = true
	n := len(m.inputs)
	idx := slices.Sorted(maps.Keys(m.funcs))
	// Each input's key: its record, its copies' runs and a digest of its
	// counts, which tells apart inputs whose records are the same.
	digests := make([]hashState, n)
	for i := range digests {
		digests[i].h = sha256.New()
	}
	for _, fi := range idx {
		mf := m.funcs[fi]
		for _, id := range slices.Sorted(maps.Keys(mf.paths)) {
			for _, c := range mf.paths[id].by {
				digests[c.Input].add(uint64(fi), id, c.Count)
			}
		}
	}
	keys := make([]string, n)
	for i, mi := range m.inputs {
		rec, err := json.Marshal(mi.in)
		if err != nil {
			return nil, err
		}
		runs, err := json.Marshal(mi.runs)
		if err != nil {
			return nil, err
		}
		keys[i] = string(rec) + "\x00" + string(runs) + "\x00" + string(digests[i].h.Sum(nil))
	}
	order := make([]int, n) // order[new] = old
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	newIndex := make([]int, n)
	for nw, old := range order {
		newIndex[old] = nw
	}

	p := &Profile{Format: Format, Version: Version, Module: m.module, Complete: true, Runs: []Run{}}
	var reasons []string
	for nw, old := range order {
		mi := &m.inputs[old]
		in := mi.in
		p.Inputs = append(p.Inputs, in)
		for _, r := range mi.runs {
			r.Input = nw
			p.Runs = append(p.Runs, r)
		}
		if nw == 0 {
			p.Strategy, p.Copies = in.Strategy, in.Copies
		} else if in.Strategy != p.Strategy || in.Copies != p.Copies {
			p.Strategy, p.Copies = Mixed, max(p.Copies, in.Copies)
		}
		if !in.Complete {
			p.Complete = false
			why := in.Incomplete
			if why == "" {
				why = "incomplete"
			}
			reasons = append(reasons, why)
			if n > 1 {
				reasons[len(reasons)-1] = fmt.Sprintf("input %q: %s", in.Label, why)
			}
		}
		if in.Interrupted != nil && p.Interrupted == nil {
			p.Interrupted = in.Interrupted
		}
		if in.ExitCode != 0 && p.ExitCode == 0 {
			p.ExitCode = in.ExitCode
		}
		p.Stubs = addStubs(p.Stubs, in.Stubs)
		p.Region = addRegion(p.Region, in.Region)
	}
	p.Incomplete = strings.Join(reasons, "; ")
	if m.uncovered != nil {
		u := *m.uncovered
		u.NewPaths = slices.SortedFunc(maps.Keys(m.newPaths), func(a, b [2]uint64) int {
			if lessPath(a, b) {
				return -1
			}
			if lessPath(b, a) {
				return 1
			}
			return 0
		})
		if u.NewPaths == nil {
			u.NewPaths = [][2]uint64{}
		}
		p.UncoveredFrom = &u
	}
	for _, fi := range idx {
		mf := m.funcs[fi]
		f := mf.meta
		f.Paths = make([]Path, 0, len(mf.paths))
		for _, id := range slices.Sorted(maps.Keys(mf.paths)) {
			mp := mf.paths[id]
			q := Path{ID: id, Count: mp.count, Kind: mp.kind, Blocks: mp.blocks}
			if n > 1 {
				// In place: the attributions are most of a large merge.
				q.ByInput = slices.Clip(mp.by)
				for i := range q.ByInput {
					q.ByInput[i].Input = newIndex[q.ByInput[i].Input]
				}
				slices.SortFunc(q.ByInput, func(a, b InputCount) int { return cmp.Compare(a.Input, b.Input) })
			}
			mp.by = nil
			f.Paths = append(f.Paths, q)
		}
		p.Functions = append(p.Functions, f)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// hashState digests an input's counts.
type hashState struct {
	h   hash.Hash
	buf [24]byte
}

func (s *hashState) add(f, id, count uint64) {
	binary.LittleEndian.PutUint64(s.buf[0:], f)
	binary.LittleEndian.PutUint64(s.buf[8:], id)
	binary.LittleEndian.PutUint64(s.buf[16:], count)
	s.h.Write(s.buf[:])
}

// OfInput returns the profile of input i of p alone: its record, its
// copies' runs and the paths it executed with its counts. For a profile
// of one input, OfInput(0) is p's own counts.
func (p *Profile) OfInput(i int) (*Profile, error) {
	n := max(len(p.Inputs), 1)
	if i < 0 || i >= n {
		return nil, fmt.Errorf("input %d of %d", i, n)
	}
	q := *p
	q.Inputs, q.Runs, q.Functions = nil, []Run{}, make([]Function, 0, len(p.Functions))
	if len(p.Inputs) > 0 {
		in := p.Inputs[i]
		q.Inputs = []Input{in}
		q.Strategy, q.Copies, q.Complete, q.Incomplete, q.Interrupted, q.ExitCode, q.Stubs, q.Region =
			in.Strategy, in.Copies, in.Complete, in.Incomplete, in.Interrupted, in.ExitCode, in.Stubs, in.Region
	}
	for _, r := range p.Runs {
		if r.Input == i {
			r.Input = 0
			q.Runs = append(q.Runs, r)
		}
	}
	for _, f := range p.Functions {
		f.Paths = slices.Clone(f.Paths)
		if len(p.Inputs) > 1 {
			kept := f.Paths[:0]
			for _, path := range f.Paths {
				j, ok := slices.BinarySearchFunc(path.ByInput, i, func(c InputCount, i int) int { return cmp.Compare(c.Input, i) })
				if ok {
					path.Count, path.ByInput = path.ByInput[j].Count, nil
					kept = append(kept, path)
				}
			}
			f.Paths = kept
		}
		q.Functions = append(q.Functions, f)
	}
	if u := p.UncoveredFrom; u != nil && len(p.Inputs) > 1 {
		ran := map[[2]uint64]bool{}
		for _, f := range q.Functions {
			for _, path := range f.Paths {
				ran[[2]uint64{uint64(f.Index), path.ID}] = true
			}
		}
		v := *u
		v.NewPaths = [][2]uint64{}
		for _, np := range u.NewPaths {
			if ran[np] {
				v.NewPaths = append(v.NewPaths, np)
			}
		}
		q.UncoveredFrom = &v
	}
	return &q, nil
}

// sameUncovered reports whether a and b count against the same base
// (nil for none), whatever paths they found new.
func sameUncovered(a, b *Uncovered) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Base == b.Base && a.BaseInputs == b.BaseInputs
}

func uncoveredLabel(u *Uncovered) string {
	if u == nil {
		return "counts of whole runs"
	}
	return fmt.Sprintf("counts uncovered by %s (%d runs)", u.Base, u.BaseInputs)
}

// sameRegion reports whether a and b are the same region of interest
// (nil for none), whatever they counted.
func sameRegion(a, b *Region) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Start == b.Start && a.End == b.End && a.Func == b.Func
}

func regionLabel(r *Region) string {
	switch {
	case r == nil:
		return "no region"
	case r.Func != "":
		return "region of " + r.Func
	}
	return "region " + r.Start + "," + r.End
}

// addStubs adds the calls of add to sum's stubs of the same import,
// appending the others.
func addStubs(sum, add []Stub) []Stub {
	for _, s := range add {
		i := slices.IndexFunc(sum, func(t Stub) bool { return t.Import == s.Import && t.Result == s.Result })
		if i < 0 {
			sum = append(sum, s)
			continue
		}
		sum[i].Calls += s.Calls
	}
	return sum
}

// addRegion adds what add's region saw to sum's, the same region.
func addRegion(sum, add *Region) *Region {
	if add == nil {
		return sum
	}
	if sum == nil {
		r := *add
		r.Cut = slices.Clone(add.Cut)
		return &r
	}
	sum.Opened += add.Opened
	sum.Closed += add.Closed
	sum.CutPartial = sum.CutPartial || add.CutPartial
	for _, c := range add.Cut {
		i := slices.IndexFunc(sum.Cut, func(d Cut) bool { return d.Index == c.Index })
		if i < 0 {
			sum.Cut = append(sum.Cut, c)
			continue
		}
		sum.Cut[i].AtOpen += c.AtOpen
		sum.Cut[i].AtClose += c.AtClose
	}
	slices.SortFunc(sum.Cut, func(a, b Cut) int { return cmp.Compare(a.Index, b.Index) })
	return sum
}
