package htmlreport

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pageState is what the page shows, read from its DOM.
type pageState struct {
	View     string     `json:"view"`
	F        string     `json:"f"`
	Sel      string     `json:"sel"`
	RowSel   string     `json:"rowSel"`
	Nodes    int        `json:"nodes"`
	On       []int      `json:"on"`
	HiEdges  int        `json:"hiEdges"`
	Steps    int        `json:"steps"`
	Tab      string     `json:"tab"`
	SrcOn    []string   `json:"srcOn"`
	BlkOn    []int      `json:"blkOn"`
	Edges    [][2]any   `json:"edges"`
	PathRows int        `json:"pathRows"`
	FuncRows int        `json:"funcRows"`
	PageInfo string     `json:"pageInfo"`
	Hot      [][]string `json:"hot"`
	Facts    string     `json:"facts"`
}

const stateJS = `(() => {
  const q = s => document.querySelector(s), qa = s => [...document.querySelectorAll(s)];
  return {
    view: document.body.dataset.view || '',
    f: q('main#function') ? q('main#function').dataset.f : '',
    sel: q('#sel') ? q('#sel').dataset.p : '',
    rowSel: q('#pathtable tr.sel') ? q('#pathtable tr.sel').dataset.p : '',
    nodes: qa('#cfg g.node').length,
    on: qa('#cfg g.node.on').map(g => +g.dataset.n).sort((a, b) => a - b),
    hiEdges: qa('#hilite path').length,
    steps: qa('#steps g.step').length,
    tab: q('.tabs button.on') ? q('.tabs button.on').dataset.tab : '',
    srcOn: qa('#source table.src tr.on').map(tr => tr.closest('table').dataset.file + ':' + tr.dataset.line),
    blkOn: qa('#instrs tr.blk.on').map(tr => +tr.dataset.n),
    edges: qa('#cfg g.edges path').map(p => [+p.dataset.e, p.dataset.count]),
    pathRows: qa('#pathtable tr[data-p]').length,
    funcRows: qa('#functable tr[data-f]').length,
    pageInfo: q('#pageinfo') ? q('#pageinfo').textContent : '',
    hot: qa('#hot tr[data-f]').map(tr => [tr.dataset.f, tr.dataset.p]),
    facts: q('#facts') ? q('#facts').textContent : '',
  };
})()`

func (b *browser) state(t *testing.T) pageState {
	t.Helper()
	var s pageState
	b.eval(t, stateJS, &s)
	return s
}

// checkFunction checks the function view of row with path j selected
// against the page's data: the graph's nodes and edge counts, the path's
// blocks highlighted, and its source lines or instruction blocks marked.
func checkFunction(t *testing.T, bt *built, row, j int, s pageState) {
	t.Helper()
	f := bt.r.Functions[row]
	d := &bt.details[row]
	p := d.paths(t)[j]
	if s.View != "function" || s.F != strconv.FormatUint(uint64(f.Index), 10) {
		t.Fatalf("showing %s %s, want function %d", s.View, s.F, f.Index)
	}
	if s.Sel != p.id || s.RowSel != p.id {
		t.Fatalf("path %q selected (row %q), want %s", s.Sel, s.RowSel, p.id)
	}
	if s.Nodes != len(d.Blocks)/4 {
		t.Errorf("%d nodes drawn, the graph has %d", s.Nodes, len(d.Blocks)/4)
	}
	if len(s.Edges) != len(d.Edges)/5 {
		t.Errorf("%d edges drawn, the graph has %d", len(s.Edges), len(d.Edges)/5)
	}
	for _, e := range s.Edges {
		i := int(e[0].(float64))
		if want := strconv.FormatUint(d.Edges[5*i+4], 10); e[1] != want {
			t.Errorf("edge %d shaded for %v crossings, want %s", i, e[1], want)
		}
	}
	want := slices.Clone(p.nodes)
	kind := pathKinds[p.kind]
	if strings.HasPrefix(kind, "entry-") {
		want = append(want, 0)
	}
	if strings.HasSuffix(kind, "-exit") {
		want = append(want, 1)
	}
	slices.Sort(want)
	want = slices.Compact(want)
	if !slices.Equal(s.On, want) {
		t.Errorf("highlighted nodes %v, the path's %v", s.On, want)
	}
	if s.Steps != len(p.nodes) || s.HiEdges < len(p.nodes)-1 {
		t.Errorf("%d step marks and %d highlighted edges for a path of %d blocks", s.Steps, s.HiEdges, len(p.nodes))
	}
	switch s.Tab {
	case "source":
		var lines []string
		for _, n := range p.nodes {
			ls := d.Lines[n]
			for k := 0; k < len(ls); k += 2 {
				if file := bt.pg.ov.Files[ls[k]]; file.Path != "" {
					lines = append(lines, file.Name+":"+strconv.Itoa(ls[k+1]))
				}
			}
		}
		slices.Sort(lines)
		lines = slices.Compact(lines)
		got := slices.Clone(s.SrcOn)
		slices.Sort(got)
		if len(lines) == 0 || !slices.Equal(got, lines) {
			t.Errorf("source lines marked %v, the path's %v", got, lines)
		}
	case "instructions":
		nodes := slices.Clone(p.nodes)
		slices.Sort(nodes)
		got := slices.Clone(s.BlkOn)
		slices.Sort(got)
		if !slices.Equal(got, nodes) {
			t.Errorf("instruction blocks marked %v, the path's %v", got, nodes)
		}
	default:
		t.Errorf("code view %q", s.Tab)
	}
}

// TestBrowserC opens the report of the C program, clicks the hottest
// function in the functions table and then one of its paths, and checks
// what the page shows each time, down to the source lines and their
// counts.
func TestBrowserC(t *testing.T) {
	bt := buildPage(t, calcRun(t), Options{})
	b := startBrowser(t, 1400, 1000)
	took := b.open(t, fileURL(bt.file))
	t.Logf("%s: %d bytes, open in %v", filepath.Base(bt.file), bt.size, took)

	s := b.state(t)
	if s.View != "overview" || s.FuncRows != bt.r.Totals.Executed || !strings.Contains(s.Facts, "sbl, 1 copy") {
		t.Fatalf("overview: %+v", s)
	}
	hot := bt.r.Hottest[0]
	if len(s.Hot) != 10 || s.Hot[0][0] != strconv.FormatUint(uint64(hot.Index), 10) || s.Hot[0][1] != strconv.FormatUint(hot.ID, 10) {
		t.Errorf("hottest paths %v, want %d/%d first", s.Hot, hot.Index, hot.ID)
	}
	if dir := os.Getenv("PATHPROF_HTML_SCREENSHOTS"); dir != "" {
		b.screenshot(t, filepath.Join(dir, "html-overview.png"))
	}

	row := b.row(t, bt, "fn_maxcollatz")
	b.click(t, fmt.Sprintf("#functable tr[data-f=%q] a", strconv.FormatUint(uint64(bt.r.Functions[row].Index), 10)))
	b.waitFor(t, "document.body.dataset.view === 'function'", 30*time.Second)
	s = b.state(t)
	if s.Tab != "source" {
		t.Fatalf("a function with DWARF and its source found shows %q", s.Tab)
	}
	checkFunction(t, bt, row, 0, s)

	// The path through the most blocks, which leaves the inner loop.
	paths := bt.details[row].paths(t)
	j := 0
	for k, p := range paths {
		if len(p.nodes) > len(paths[j].nodes) {
			j = k
		}
	}
	b.click(t, fmt.Sprintf("#pathtable tr[data-p=%q] td", paths[j].id))
	b.waitFor(t, "document.getElementById('sel').dataset.p === "+jsString(paths[j].id), 30*time.Second)
	s = b.state(t)
	checkFunction(t, bt, row, j, s)

	// The margin of a marked line is the most times one of its blocks was
	// entered.
	d := &bt.details[row]
	n := paths[j].nodes[0]
	file, line := bt.pg.ov.Files[d.Lines[n][0]].Name, d.Lines[n][1]
	var most uint64
	for v := 2; v < len(d.Blocks)/4; v++ {
		for k := 0; k < len(d.Lines[v]); k += 2 {
			if bt.pg.ov.Files[d.Lines[v][k]].Name == file && d.Lines[v][k+1] == line {
				most = max(most, d.Blocks[4*v+3])
			}
		}
	}
	var margin string
	b.eval(t, fmt.Sprintf(`document.querySelector('#source table.src[data-file=%q] tr[data-line="%d"] td.cnt').textContent`, file, line), &margin)
	if strings.ReplaceAll(margin, ",", "") != strconv.FormatUint(most, 10) {
		t.Errorf("%s:%d: margin %q, want %d", file, line, margin, most)
	}
	if dir := os.Getenv("PATHPROF_HTML_SCREENSHOTS"); dir != "" {
		// The view a link to the function's third path opens, with the
		// mouse out of the way.
		b.open(t, fileURL(bt.file)+fmt.Sprintf("#f=%d&p=%s", bt.r.Functions[row].Index, paths[2].id))
		if _, err := b.call("Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": 0, "y": 0}); err != nil {
			t.Fatal(err)
		}
		b.eval(t, "window.scrollTo(0, 0)", nil)
		b.screenshot(t, filepath.Join(dir, "html-function.png"))
	}

	// Back to the overview through the link, as a person would.
	b.click(t, "header a[href='#']")
	b.waitFor(t, "document.body.dataset.view === 'overview'", 30*time.Second)
}

// TestBrowserGo opens the report of a Go test binary (no DWARF), clicks a
// function from the hottest paths list and then a path, and checks the
// graph and the instruction listing.
func TestBrowserGo(t *testing.T) {
	bt := buildPage(t, goTestRun(t, "sort"), Options{})
	b := startBrowser(t, 1400, 1000)
	took := b.open(t, fileURL(bt.file))
	t.Logf("sort.test: %d functions, %d bytes, open in %v", len(bt.r.Functions), bt.size, took)
	s := b.state(t)
	if s.View != "overview" || len(s.Hot) == 0 {
		t.Fatalf("overview: %+v", s)
	}
	// The function of the second hottest path, from the hottest list.
	b.click(t, "#hot tr[data-f]:nth-child(3) a")
	b.waitFor(t, "document.body.dataset.view === 'function'", 30*time.Second)
	hot := bt.r.Hottest[1]
	row := -1
	for i, f := range bt.r.Functions {
		if f.Index == hot.Index {
			row = i
		}
	}
	paths := bt.details[row].paths(t)
	j := slices.IndexFunc(paths, func(p dpath) bool { return p.id == strconv.FormatUint(hot.ID, 10) })
	s = b.state(t)
	if s.Tab != "instructions" {
		t.Fatalf("a function without DWARF shows %q", s.Tab)
	}
	checkFunction(t, bt, row, j, s)

	// Another path of the same function.
	k := (j + 1) % len(paths)
	b.click(t, fmt.Sprintf("#pathtable tr[data-p=%q] td", paths[k].id))
	b.waitFor(t, "document.getElementById('sel').dataset.p === "+jsString(paths[k].id), 30*time.Second)
	checkFunction(t, bt, row, k, b.state(t))
}

// TestBrowserLarge opens the reports of a generated module of 30,000
// functions and of the largest test program, the encoding/json test
// binary, and checks that they open, page and show a function quickly.
func TestBrowserLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in short mode: profiles and renders 30,000 functions")
	}
	t.Run("synthetic", func(t *testing.T) {
		const n = 30000
		bt := buildPage(t, synthRun(t, n), Options{})
		if len(bt.r.Functions) != n+1 {
			t.Fatalf("%d functions", len(bt.r.Functions))
		}
		b := startBrowser(t, 1400, 1000)
		took := b.open(t, fileURL(bt.file))
		s := b.state(t)
		if s.FuncRows != 100 || !strings.Contains(s.PageInfo, "of 201 (20,001 functions)") {
			t.Fatalf("overview: %d rows, %q", s.FuncRows, s.PageInfo)
		}
		start := time.Now()
		b.click(t, "#functions .pager button:last-child")
		b.waitFor(t, "document.getElementById('pageinfo').textContent.startsWith('page 2 ')", 30*time.Second)
		next := time.Since(start)

		// Find a function by name and open it.
		start = time.Now()
		b.eval(t, `(() => { const f = document.getElementById('filter'); f.value = 'synth.f29998'; f.dispatchEvent(new Event('input')); })()`, nil)
		b.waitFor(t, "document.querySelectorAll('#functable tr[data-f]').length === 1", 30*time.Second)
		filter := time.Since(start)
		start = time.Now()
		b.click(t, "#functable tr[data-f='29998'] a")
		b.waitFor(t, "document.body.dataset.view === 'function' && document.querySelector('#cfg')", 30*time.Second)
		show := time.Since(start)
		row := b.row(t, bt, "synth.f29998")
		checkFunction(t, bt, row, 0, b.state(t))
		t.Logf("%d functions: page %.1f MB; opens in %v, next page in %v, filter in %v, function view in %v",
			len(bt.r.Functions), float64(bt.size)/1e6, took.Round(time.Millisecond), next.Round(time.Millisecond),
			filter.Round(time.Millisecond), show.Round(time.Millisecond))
		// Generous bounds: go test runs other packages' tests beside this
		// one on a two-core machine. docs/html-report.md has the times on a
		// quiet one.
		if took > time.Minute || next > 5*time.Second || filter > 5*time.Second || show > 10*time.Second {
			t.Errorf("too slow")
		}
	})
	t.Run("encoding/json", func(t *testing.T) {
		bt := buildPage(t, goTestRun(t, "encoding/json"), Options{})
		b := startBrowser(t, 1400, 1000)
		took := b.open(t, fileURL(bt.file))
		start := time.Now()
		b.click(t, "#functable tr[data-f] a")
		b.waitFor(t, "document.body.dataset.view === 'function' && document.querySelector('#cfg')", 30*time.Second)
		show := time.Since(start)
		checkFunction(t, bt, 0, 0, b.state(t))
		var layoutMs float64
		b.eval(t, "cur.layoutMs", &layoutMs)
		t.Logf("encoding/json.test: %d functions, page %.1f MB; opens in %v, its most executed function (%d blocks, laid out in %.0f ms) in %v",
			len(bt.r.Functions), float64(bt.size)/1e6, took.Round(time.Millisecond), len(bt.details[0].Blocks)/4, layoutMs, show.Round(time.Millisecond))
		if took > time.Minute || show > 10*time.Second {
			t.Errorf("too slow")
		}
	})
}

// row finds a function's row by name.
func (b *browser) row(t *testing.T, bt *built, fn string) int {
	t.Helper()
	return bt.row(t, fn)
}
