package htmlreport

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/runner"
	"github.com/pathprof/pathprof/internal/testbin"
	"github.com/pathprof/pathprof/internal/testprogs"
	"github.com/pathprof/pathprof/profile"
)

// testRuns are the tests of the committed GoogleTest binary, each
// profiled alone, and their merge: a profile of several runs. It returns
// the run of the merge and the profiles alone, in the merge's input
// order.
func testRuns(t *testing.T) (*run, []*profile.Profile) {
	t.Helper()
	runsMu.Lock()
	defer runsMu.Unlock()
	if testRunsDone.r != nil {
		return testRunsDone.r, testRunsDone.alone
	}
	ctx := context.Background()
	path := filepath.Join(testprogs.ModuleRoot(t), "testdata", "testbins", "stack.wasm")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := runner.Config{ProgramName: "stack.wasm", CacheDir: testprogs.WazeroCacheDir(t)}
	tests, err := testbin.List(ctx, orig, testbin.GTest, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := profile.NewMerger()
	alone := map[string]*profile.Profile{}
	for _, test := range tests {
		c := cfg
		c.Args = testbin.RunArgs(testbin.GTest, test)
		p, err := profiler.Profile(ctx, orig, profiler.Options{ModulePath: path, Label: test, Run: c})
		if err != nil {
			t.Fatal(err)
		}
		alone[test] = p
		if err := m.Add(test, test, p); err != nil {
			t.Fatal(err)
		}
	}
	merged, err := m.Profile()
	if err != nil {
		t.Fatal(err)
	}
	var ordered []*profile.Profile
	for _, in := range merged.Inputs {
		ordered = append(ordered, alone[in.Label])
	}
	testRunsDone.r, testRunsDone.alone = &run{path: path, module: orig, prof: merged}, ordered
	return testRunsDone.r, ordered
}

// testRunsDone keeps testRuns' profiles for the tests that follow.
var testRunsDone struct {
	r     *run
	alone []*profile.Profile
}

type pathKey struct {
	fn uint32
	id uint64
}

// uniqueOf is, per run, the paths its profile alone has and no other
// run's: the paths only it covers, found without the merge's
// attribution.
func uniqueOf(alone []*profile.Profile) []map[pathKey]uint64 {
	seen := map[pathKey]int{}
	for _, p := range alone {
		for _, f := range p.Functions {
			for _, q := range f.Paths {
				seen[pathKey{f.Index, q.ID}]++
			}
		}
	}
	out := make([]map[pathKey]uint64, len(alone))
	for i, p := range alone {
		out[i] = map[pathKey]uint64{}
		for _, f := range p.Functions {
			for _, q := range f.Paths {
				if seen[pathKey{f.Index, q.ID}] == 1 {
					out[i][pathKey{f.Index, q.ID}] = q.Count
				}
			}
		}
	}
	return out
}

// TestRunsData checks the page's data of a profile of several runs
// against the runs profiled alone: each run's paths of its own are the
// paths no other run's profile has, with its counts.
func TestRunsData(t *testing.T) {
	rn, alone := testRuns(t)
	bt := buildPage(t, rn, Options{})
	want := uniqueOf(alone)
	ov := &bt.pg.ov
	if len(ov.Inputs) != len(alone) || len(ov.Unique) != len(alone) {
		t.Fatalf("%d inputs and %d unique lists, want %d", len(ov.Inputs), len(ov.Unique), len(alone))
	}
	some := 0
	for i, list := range ov.Unique {
		got := map[pathKey]uint64{}
		for _, u := range list {
			f := bt.r.Functions[u[0].(int)]
			got[pathKey{f.Index, uint64(u[1].(num))}] = uint64(u[2].(num))
		}
		if fmt.Sprint(got) != fmt.Sprint(want[i]) || ov.Inputs[i].Unique != len(want[i]) {
			t.Fatalf("run %s: paths only it ran %v (%d), want %v", ov.Inputs[i].Label, got, ov.Inputs[i].Unique, want[i])
		}
		some += len(got)
	}
	if some == 0 {
		t.Fatal("no run has paths of its own: the test shows nothing")
	}
}

// TestBrowserRuns opens the report of a profile of several runs: the
// runs table sorts by the paths only each ran, a run's view lists them,
// and a path shows the runs that executed it, as their profiles alone
// say.
func TestBrowserRuns(t *testing.T) {
	rn, alone := testRuns(t)
	bt := buildPage(t, rn, Options{})
	want := uniqueOf(alone)
	b := startBrowser(t, 1400, 1000)
	b.open(t, fileURL(bt.file))

	var order []string
	b.eval(t, `[...document.querySelectorAll('#runs-table tr[data-run]')].map(tr => tr.dataset.run)`, &order)
	byUnique := make([]int, len(alone))
	for i := range byUnique {
		byUnique[i] = i
	}
	slices.SortStableFunc(byUnique, func(a, b int) int { return len(want[b]) - len(want[a]) })
	if fmt.Sprint(order) != fmt.Sprint(byUnique) {
		t.Fatalf("runs table in order %v, want most paths of their own first %v", order, byUnique)
	}
	b.click(t, `#runs-table th[data-sort="label"]`)
	b.eval(t, `[...document.querySelectorAll('#runs-table tr[data-run]')].map(tr => tr.dataset.run)`, &order)
	labels := []string{}
	for _, o := range order {
		i, _ := strconv.Atoi(o)
		labels = append(labels, bt.pg.ov.Inputs[i].Label)
	}
	if !slices.IsSorted(labels) || len(labels) != len(alone) {
		t.Fatalf("sorted by label: %v", labels)
	}

	top := byUnique[0]
	b.click(t, fmt.Sprintf(`#runs-table tr[data-run="%d"] a`, top))
	b.waitFor(t, "document.body.dataset.view === 'run'", 30*time.Second)
	var rows [][2]string
	b.eval(t, `[...document.querySelectorAll('#unique-paths tr[data-f]')].map(tr => [tr.dataset.f, tr.dataset.p])`, &rows)
	got := map[pathKey]uint64{}
	for _, r := range rows {
		f, _ := strconv.ParseUint(r[0], 10, 32)
		id, _ := strconv.ParseUint(r[1], 10, 64)
		got[pathKey{uint32(f), id}] = want[top][pathKey{uint32(f), id}]
	}
	if len(rows) == 0 || fmt.Sprint(got) != fmt.Sprint(want[top]) {
		t.Fatalf("run %d lists %v as its own, want %v", top, rows, want[top])
	}

	// A path several runs executed names them all.
	row, pid, runs := -1, uint64(0), []string(nil)
	for i, f := range bt.r.Functions {
		for _, p := range f.Paths {
			if len(p.ByInput) > 1 && row < 0 {
				row, pid = i, p.ID
				for k, a := range alone {
					if hasPath(a, f.Index, p.ID) {
						runs = append(runs, strconv.Itoa(k))
					}
				}
			}
		}
	}
	if row < 0 {
		t.Fatal("no path that several runs executed")
	}
	b.eval(t, fmt.Sprintf("location.hash = %s", jsString(fmt.Sprintf("f=%d&p=%d", bt.r.Functions[row].Index, pid))), nil)
	b.waitFor(t, "document.getElementById('selruns') !== null", 30*time.Second)
	var named []string
	b.eval(t, `[...document.querySelectorAll('#selruns a')].map(a => a.dataset.run).sort()`, &named)
	if fmt.Sprint(named) != fmt.Sprint(runs) {
		t.Fatalf("path %d of %s names runs %v, want %v", pid, bt.r.Functions[row].Name, named, runs)
	}
}

func hasPath(p *profile.Profile, fn uint32, id uint64) bool {
	for _, f := range p.Functions {
		if f.Index == fn {
			for _, q := range f.Paths {
				if q.ID == id {
					return true
				}
			}
		}
	}
	return false
}
