package profile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// randomRun is a valid profile of one run of a made-up module: a few
// functions, each path's kind and blocks fixed by its id as a numbering
// would fix them, random counts, strategy and outcome. With v1 it is a
// version 1 profile, without inputs.
func randomRun(r *rand.Rand, label string, v1 bool) *Profile {
	st := Strategies[r.IntN(len(Strategies))]
	k := 1
	if st != SBL {
		k = 1 + r.IntN(4)
	}
	p := &Profile{Format: Format, Version: Version, Strategy: st, Copies: k, Complete: true,
		Module: Module{Path: "m.wasm", SHA256: strings.Repeat("cd", 32), Size: 9000, CodeOffset: 100}}
	if r.IntN(4) == 0 {
		p.Complete, p.Incomplete, p.ExitCode = false, "trapped: unreachable", 1
	}
	for c := range k {
		p.Runs = append(p.Runs, Run{Copy: c, ProbeHits: r.Uint64N(1000), Seconds: float64(r.IntN(100)) / 8, ExitCode: p.ExitCode})
	}
	for fi := uint32(3); fi < 8; fi++ {
		f := Function{Index: fi, Name: fmt.Sprintf("f%d", fi), Status: StatusProfiled, PossiblePaths: "40"}
		if fi == 5 {
			f = Function{Index: fi, Status: Skipped("too big"), PossiblePaths: "0"}
		}
		for id := uint64(0); id < 40 && f.Status == StatusProfiled; id++ {
			if r.IntN(3) == 0 {
				kinds := []string{KindEntryExit, KindEntryBack, KindBackBack, KindBackExit}
				f.Paths = append(f.Paths, Path{ID: id, Count: 1 + r.Uint64N(1<<20), Kind: kinds[id%4],
					Blocks: []int{200 + int(fi)*100, 201 + int(id)}})
			}
		}
		p.Functions = append(p.Functions, f)
	}
	if v1 {
		p.Version = 1
		return p
	}
	in := Input{Label: label, Args: []string{label}, InputSHA256: InputDigest([]string{label}, nil, nil, []byte(label)),
		Strategy: st, Copies: k, Complete: p.Complete, Incomplete: p.Incomplete, ExitCode: p.ExitCode}
	for _, run := range p.Runs {
		in.Seconds = max(in.Seconds, run.Seconds)
	}
	p.Inputs = []Input{in}
	return p
}

// roundTrip writes p and reads it back, as merging files does.
func roundTrip(t *testing.T, p *Profile) *Profile {
	t.Helper()
	q, err := Read(bytes.NewReader(write(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func mergeAll(t *testing.T, names []string, ps []*Profile) *Profile {
	t.Helper()
	m := NewMerger()
	for i, p := range ps {
		if err := m.Add(names[i], names[i], p); err != nil {
			t.Fatal(err)
		}
	}
	out, err := m.Profile()
	if err != nil {
		t.Fatal(err)
	}
	return roundTrip(t, out)
}

// mergeTree merges ps in a random grouping: a random split, each side
// merged so (through the file format), then the two sides.
func mergeTree(t *testing.T, r *rand.Rand, names []string, ps []*Profile) (string, *Profile) {
	if len(ps) == 1 {
		return names[0], ps[0]
	}
	cut := 1 + r.IntN(len(ps)-1)
	ln, l := mergeTree(t, r, names[:cut], ps[:cut])
	rn, rp := mergeTree(t, r, names[cut:], ps[cut:])
	return "(" + ln + "+" + rn + ")", mergeAll(t, []string{ln, rn}, []*Profile{l, rp})
}

// TestMergeOrderAndGrouping is the property that merging is associative
// and commutative to the byte: any order and grouping of the same runs'
// profiles writes the same file; its counts are the sums of theirs, and
// each input's counts are its own profile's.
func TestMergeOrderAndGrouping(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 34))
		n := 2 + r.IntN(6)
		names := make([]string, n)
		ps := make([]*Profile, n)
		for i := range ps {
			names[i] = fmt.Sprintf("run%d", r.IntN(4)) // labels may repeat
			ps[i] = randomRun(r, names[i], r.IntN(5) == 0)
		}
		// The same run twice is two inputs too.
		if r.IntN(3) == 0 {
			names = append(names, names[0])
			ps = append(ps, ps[0])
		}
		want := write(t, mergeAll(t, names, ps))
		for trial := range 6 {
			perm := r.Perm(len(ps))
			pn, pp := make([]string, len(ps)), make([]*Profile, len(ps))
			for i, j := range perm {
				pn[i], pp[i] = names[j], ps[j]
			}
			_, got := mergeTree(t, r, pn, pp)
			if b := write(t, got); !bytes.Equal(b, want) {
				t.Fatalf("seed %d trial %d: order %v gives other bytes:\n%s\nwant:\n%s", seed, trial, perm, b, want)
			}
		}
		checkSums(t, fmt.Sprintf("seed %d", seed), ps, mustRead(t, want))
	}
}

func mustRead(t *testing.T, b []byte) *Profile {
	t.Helper()
	p, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkSums checks that merged counts each path as often as ps do
// together, and that each of its inputs is one of ps, counts included.
func checkSums(t *testing.T, what string, ps []*Profile, merged *Profile) {
	t.Helper()
	sum := map[[2]uint64]uint64{}
	for _, p := range ps {
		for _, f := range p.Functions {
			for _, q := range f.Paths {
				sum[[2]uint64{uint64(f.Index), q.ID}] += q.Count
			}
		}
	}
	got := map[[2]uint64]uint64{}
	for _, f := range merged.Functions {
		for _, q := range f.Paths {
			got[[2]uint64{uint64(f.Index), q.ID}] = q.Count
		}
	}
	if len(got) != len(sum) {
		t.Fatalf("%s: %d paths merged, %d in the profiles", what, len(got), len(sum))
	}
	for k, n := range sum {
		if got[k] != n {
			t.Fatalf("%s: function %d path %d: merged %d, sum %d", what, k[0], k[1], got[k], n)
		}
	}
	if len(merged.Inputs) != len(ps) {
		t.Fatalf("%s: %d inputs, %d profiles", what, len(merged.Inputs), len(ps))
	}
	used := make([]bool, len(ps))
	for i := range merged.Inputs {
		alone, err := merged.OfInput(i)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for j, p := range ps {
			if ok, _ := alone.Equal(p); ok && !used[j] && alone.ExitCode == p.ExitCode && alone.Strategy == p.Strategy {
				used[j], found = true, true
				break
			}
		}
		if !found {
			t.Fatalf("%s: input %d (%q) is none of the profiles merged", what, i, merged.Inputs[i].Label)
		}
	}
}

func TestMergeRefusesOtherModule(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	a, b := randomRun(r, "a", false), randomRun(r, "b", false)
	b.Module.SHA256, b.Module.Path = strings.Repeat("ef", 32), "other.wasm"
	m := NewMerger()
	if err := m.Add("a.json", "a", a); err != nil {
		t.Fatal(err)
	}
	err := m.Add("b.json", "b", b)
	if err == nil || !strings.Contains(err.Error(), a.Module.SHA256) || !strings.Contains(err.Error(), b.Module.SHA256) || !strings.Contains(err.Error(), "b.json") {
		t.Fatalf("got %v, want both digests and the file named", err)
	}
}

func TestMergeRefusesOtherNumbering(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name   string
		change func(p *Profile)
		want   string
	}{
		{"possible paths", func(p *Profile) { p.Functions[0].PossiblePaths = "41" }, "41 possible paths"},
		{"blocks", func(p *Profile) { p.Functions[0].Paths[0].Blocks = []int{999} }, "numbered differently"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := randomRun(r, "a", false), randomRun(r, "b", false)
			b.Functions[0].Paths = slices.Clone(a.Functions[0].Paths[:1])
			tc.change(b)
			m := NewMerger()
			m.Add("a.json", "a", a)
			if err := m.Add("b.json", "b", b); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestInputDigestAsDocumented computes the digest as
// docs/profile-format.md describes it.
func TestInputDigestAsDocumented(t *testing.T) {
	stdin := []byte("1 + 2\n")
	s := sha256.Sum256(stdin)
	doc := `{"args":["-n","3"],"env":["A=b"],"mounts":["/h:/g:ro"],"stdin_sha256":"` + hex.EncodeToString(s[:]) + `"}`
	want := sha256.Sum256([]byte(doc))
	if got := InputDigest([]string{"-n", "3"}, []string{"A=b"}, []string{"/h:/g:ro"}, stdin); got != hex.EncodeToString(want[:]) {
		t.Fatalf("got %s, want %x", got, want)
	}
	empty := sha256.Sum256(nil)
	want = sha256.Sum256([]byte(`{"args":[],"env":[],"mounts":[],"stdin_sha256":"` + hex.EncodeToString(empty[:]) + `"}`))
	if got := InputDigest(nil, nil, nil, nil); got != hex.EncodeToString(want[:]) {
		t.Fatalf("empty input: got %s, want %x", got, want)
	}
}

// FuzzMerge merges two profiles Read accepts: no panic, and when they
// merge, either order gives the same bytes.
func FuzzMerge(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	var one, two bytes.Buffer
	Write(&one, randomRun(r, "a", false))
	m := NewMerger()
	m.Add("b", "b", randomRun(r, "b", false))
	m.Add("c", "c", randomRun(r, "c", true))
	bc, _ := m.Profile()
	Write(&two, bc)
	f.Add(one.Bytes(), two.Bytes())
	f.Add(two.Bytes(), two.Bytes())
	f.Fuzz(func(t *testing.T, a, b []byte) {
		pa, err1 := Read(bytes.NewReader(a))
		pb, err2 := Read(bytes.NewReader(b))
		if err1 != nil || err2 != nil {
			return
		}
		merge := func(x, y *Profile) []byte {
			m := NewMerger()
			if err := m.Add("x", "x", x); err != nil {
				return nil
			}
			if err := m.Add("y", "x", y); err != nil {
				return nil
			}
			p, err := m.Profile()
			if err != nil {
				return nil
			}
			var out bytes.Buffer
			if err := Write(&out, p); err != nil {
				t.Fatalf("Write of a merged profile: %v", err)
			}
			return out.Bytes()
		}
		ab, ba := merge(pa, pb), merge(pb, pa)
		if !bytes.Equal(ab, ba) {
			t.Fatalf("the order of a merge shows:\n%s\n%s", ab, ba)
		}
	})
}

// TestMergeStubsAndRegions checks that merged runs of one region add up
// their stubs' calls, openings and cuts, that OfInput gives back each
// run's, and that runs of different regions are refused.
func TestMergeStubsAndRegions(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	withRegion := func(label string, calls, opened uint64, region Region) *Profile {
		p := randomRun(r, label, false)
		p.Stubs = []Stub{{Import: "bench.start", Calls: calls}}
		region.Opened, region.Closed = opened, opened
		region.Cut = []Cut{{Index: 3, AtOpen: opened, AtClose: opened}}
		p.Region = &region
		p.Inputs[0].Stubs, p.Inputs[0].Region = p.Stubs, p.Region
		return p
	}
	markers := Region{Start: "bench.start", End: "bench.stop"}
	m := NewMerger()
	a, b := withRegion("a", 2, 2, markers), withRegion("b", 5, 4, markers)
	for _, p := range []*Profile{a, b} {
		if err := m.Add(p.Inputs[0].Label, "", roundTrip(t, p)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := m.Profile()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Stubs) != 1 || got.Stubs[0].Calls != 7 || got.Region.Opened != 6 || got.Region.Cut[0].AtClose != 6 {
		t.Errorf("merged stubs %+v, region %+v", got.Stubs, got.Region)
	}
	for i := range got.Inputs {
		in, err := got.OfInput(i)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]uint64{"a": 2, "b": 4}[in.Inputs[0].Label]; in.Region.Opened != want {
			t.Errorf("input %s: region opened %d, want %d", in.Inputs[0].Label, in.Region.Opened, want)
		}
	}
	m = NewMerger()
	if err := m.Add("a", "", a); err != nil {
		t.Fatal(err)
	}
	if err := m.Add("c", "", withRegion("c", 1, 1, Region{Func: "measured"})); err == nil || !strings.Contains(err.Error(), "different regions") {
		t.Errorf("a run of another region: %v", err)
	}
}

// TestInputDigestHost checks that what the host gives beyond WASI tells
// inputs apart, and that without it the digest is the one of before.
func TestInputDigestHost(t *testing.T) {
	plain := InputDigest([]string{"a"}, nil, nil, []byte("x"))
	if InputDigest([]string{"a"}, nil, nil, []byte("x"), []string{}...) != plain {
		t.Error("an empty host list changed the digest")
	}
	one, two := InputDigest([]string{"a"}, nil, nil, []byte("x"), "invoke f(1)"), InputDigest([]string{"a"}, nil, nil, []byte("x"), "invoke f(2)")
	if one == plain || one == two {
		t.Error("calls of exports do not tell inputs apart")
	}
}

// TestRegionValidated checks that a profile whose region is neither
// markers nor a function, or lists a function's cuts twice, is refused.
func TestRegionValidated(t *testing.T) {
	for _, r := range []Region{{Start: "a.b"}, {Start: "a.b", End: "a.c", Func: "f"}, {},
		{Func: "f", Cut: []Cut{{Index: 4}, {Index: 4}}}} {
		p := randomRun(rand.New(rand.NewPCG(1, 1)), "x", false)
		p.Region = &r
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "region") {
			t.Errorf("region %+v: %v", r, err)
		}
	}
}

// withUncovered marks p as counted against base, whose runs covered the
// paths of odd function index plus id: p's new paths are the others.
func withUncovered(p *Profile, base string) *Profile {
	u := &Uncovered{Base: base, BaseInputs: 2, NewPaths: [][2]uint64{}}
	for _, f := range p.Functions {
		for _, q := range f.Paths {
			if (uint64(f.Index)+q.ID)%2 == 0 {
				u.NewPaths = append(u.NewPaths, [2]uint64{uint64(f.Index), q.ID})
			}
		}
	}
	p.UncoveredFrom = u
	return p
}

// TestMergeUncovered checks that runs counted against one base merge into
// the union of their new paths, that OfInput gives back each run's, and
// that runs against another base, or against none, are refused.
func TestMergeUncovered(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	a, b := withUncovered(randomRun(r, "a", false), "base.json"), withUncovered(randomRun(r, "b", false), "base.json")
	got := mergeAll(t, []string{"a", "b"}, []*Profile{roundTrip(t, a), roundTrip(t, b)})
	want := map[[2]uint64]bool{}
	for _, p := range []*Profile{a, b} {
		for _, np := range p.UncoveredFrom.NewPaths {
			want[np] = true
		}
	}
	if got.UncoveredFrom == nil || len(got.UncoveredFrom.NewPaths) != len(want) || got.UncoveredFrom.Base != "base.json" {
		t.Fatalf("merged uncovered_from %+v, want %d new paths of base.json", got.UncoveredFrom, len(want))
	}
	for _, np := range got.UncoveredFrom.NewPaths {
		if !want[np] {
			t.Errorf("merged new path %v is no run's", np)
		}
	}
	for i := range got.Inputs {
		in, err := got.OfInput(i)
		if err != nil {
			t.Fatal(err)
		}
		own := map[string]*Profile{"a": a, "b": b}[in.Inputs[0].Label]
		if !slices.Equal(in.UncoveredFrom.NewPaths, own.UncoveredFrom.NewPaths) {
			t.Errorf("input %s: new paths %v, want %v", in.Inputs[0].Label, in.UncoveredFrom.NewPaths, own.UncoveredFrom.NewPaths)
		}
		if err := in.Validate(); err != nil {
			t.Errorf("input %s: %v", in.Inputs[0].Label, err)
		}
	}
	for _, other := range []*Profile{withUncovered(randomRun(r, "c", false), "other.json"), randomRun(r, "d", false)} {
		m := NewMerger()
		if err := m.Add("a", "", a); err != nil {
			t.Fatal(err)
		}
		if err := m.Add("c", "", other); err == nil || !strings.Contains(err.Error(), "different bases") {
			t.Errorf("a run against %s: %v", uncoveredLabel(other.UncoveredFrom), err)
		}
	}
}

// TestUncoveredValidated checks that an uncovered_from record without a
// base, with new paths out of order, or naming a path the profile does
// not list, is refused.
func TestUncoveredValidated(t *testing.T) {
	for i, edit := range []func(u *Uncovered){
		func(u *Uncovered) { u.Base = "" },
		func(u *Uncovered) { u.BaseInputs = 0 },
		func(u *Uncovered) { u.NewPaths[0], u.NewPaths[1] = u.NewPaths[1], u.NewPaths[0] },
		func(u *Uncovered) { u.NewPaths = append(u.NewPaths, u.NewPaths[len(u.NewPaths)-1]) },
		func(u *Uncovered) { u.NewPaths = append(u.NewPaths, [2]uint64{7, 40}) },
	} {
		p := withUncovered(randomRun(rand.New(rand.NewPCG(1, 1)), "x", false), "base.json")
		if err := p.Validate(); err != nil {
			t.Fatalf("unedited: %v", err)
		}
		edit(p.UncoveredFrom)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "uncovered_from") {
			t.Errorf("edit %d: %v", i, err)
		}
	}
}
