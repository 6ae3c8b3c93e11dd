package tracer_test

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/tracer"
	"github.com/pathprof/pathprof/internal/wasm"
	"github.com/pathprof/pathprof/profile"
)

// checkPaths checks every counted path against graphs built here from the
// original module, and the path counts against the call counts. Tail calls
// and throws out of a function end paths at the exit without a return, so
// callers that use them pass their number per function in extraExits.
func checkPaths(t *testing.T, orig []byte, r *tracer.Result, extraExits map[uint32]uint64) {
	t.Helper()
	for _, p := range pathProblems(t, orig, r, extraExits) {
		t.Error(p)
	}
}

// pathProblems returns what checkPaths reports.
func pathProblems(t *testing.T, orig []byte, r *tracer.Result, extraExits map[uint32]uint64) []string {
	t.Helper()
	var problems []string
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	m, err := wasm.Decode(orig)
	if err != nil {
		t.Fatal(err)
	}
	opts := cfg.Options{NoReturn: cfg.NoReturnImports(m, [2]string{"wasi_snapshot_preview1", "proc_exit"})}
	type info struct {
		g    *cfg.Graph
		node map[int]int32 // file offset -> block
		cuts map[int32]bool
	}
	infos := map[uint32]*info{}
	get := func(fi uint32) *info {
		if in := infos[fi]; in != nil {
			return in
		}
		def := int(fi - m.NumImportedFuncs)
		if fi < m.NumImportedFuncs || def >= len(r.Traced.Funcs) || r.Traced.Funcs[def].Skipped != "" {
			return nil
		}
		tf := r.Traced.Funcs[def]
		g, err := cfg.Build(m, def, opts)
		if err != nil {
			t.Fatal(err)
		}
		in := &info{g: g, node: map[int]int32{}, cuts: map[int32]bool{}}
		for n := 2; n < len(g.Blocks); n++ {
			in.node[m.Code[def].OrigOff+int(g.Blocks[n].Start)] = int32(n)
		}
		for _, v := range tf.Cuts {
			in.cuts[v] = true
		}
		infos[fi] = in
		return in
	}
	// restart says whether edge e ends a path: a back edge, or an edge
	// into a cut vertex from a block (numbering.Cut's rule).
	restart := func(in *info, e cfg.Edge) bool {
		return e.Back || e.From != cfg.Entry && in.cuts[e.To]
	}
	entries := map[uint32]uint64{}
	exits := map[uint32]uint64{}
	for k, n := range r.Paths {
		in := get(k.Func)
		if in == nil {
			errorf("%+v: paths of a function that is not traced", k)
			continue
		}
		var path []int32
		for s := range strings.SplitSeq(k.Blocks, ",") {
			b, ok := int32(-1), false
			if off, err := strconv.Atoi(s); err == nil {
				b, ok = in.node[off]
			}
			if !ok {
				errorf("%+v: no block starts at offset %s", k, s)
				break
			}
			path = append(path, b)
		}
		if len(path) == 0 || len(path) != strings.Count(k.Blocks, ",")+1 {
			continue
		}
		switch k.Kind {
		case profile.KindEntryExit, profile.KindEntryBack, profile.KindBackBack, profile.KindBackExit:
		default:
			errorf("%+v: unknown kind", k)
			continue
		}
		g := in.g
		first, last := path[0], path[len(path)-1]
		fromEntry, toExit := strings.HasPrefix(k.Kind, "entry-"), strings.HasSuffix(k.Kind, "-exit")
		if fromEntry {
			entries[k.Func] += n
			if first != g.Edges[g.Blocks[cfg.Entry].Out[0]].To {
				errorf("%+v: an entry path starting at block %d", k, first)
			}
		} else {
			ok := false
			for _, e := range g.Blocks[first].In {
				ok = ok || restart(in, g.Edges[e])
			}
			if !ok {
				errorf("%+v: starts at block %d, which no back or cut edge enters", k, first)
			}
		}
		for i := 1; i < len(path); i++ {
			ok := false
			for _, e := range g.Blocks[path[i-1]].Out {
				ok = ok || g.Edges[e].To == path[i] && !restart(in, g.Edges[e])
			}
			if !ok {
				errorf("%+v: no path edge joins blocks %d and %d", k, path[i-1], path[i])
			}
		}
		ok := false
		for _, e := range g.Blocks[last].Out {
			ge := g.Edges[e]
			ok = ok || toExit && ge.To == cfg.Exit || !toExit && restart(in, ge)
		}
		if !ok {
			errorf("%+v: block %d has no edge that ends a %s path", k, last, k.Kind)
		}
		if toExit {
			exits[k.Func] += n
		}
	}
	for fi, s := range r.Calls {
		if s.Calls != s.Returns+s.Unwound {
			errorf("function %d: %d calls, %d returns, %d unwound", fi, s.Calls, s.Returns, s.Unwound)
		}
		if want := s.Returns + s.Exits + extraExits[fi]; exits[fi] != want {
			errorf("function %d: %d paths end at the exit, want %d returns + %d proc_exit calls + %d others", fi, exits[fi], s.Returns, s.Exits, extraExits[fi])
		}
		if e := entries[fi]; e < s.Returns || e > s.Calls || s.Unwound == 0 && e != s.Calls {
			errorf("function %d: %d paths from the entry, %d calls, %d returns, %d unwound", fi, e, s.Calls, s.Returns, s.Unwound)
		}
	}
	for fi := range entries {
		if r.Calls[fi] == nil {
			errorf("function %d has paths but no calls", fi)
		}
	}

	p := r.Profile()
	if got := tracer.Counts(p); !maps.Equal(got, r.Paths) {
		errorf("the profile's counts differ from the result's")
	}
	if len(p.Functions) != len(m.Code) || p.Format != profile.Format {
		errorf("profile has %d functions, want %d", len(p.Functions), len(m.Code))
	}
	return problems
}
