package history

import (
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/dagtest"
	"github.com/pathprof/pathprof/profile"
)

// TestSameModuleOtherShapes: the previous profile of a module is taken
// whole while its functions' DAGs keep their shapes, and as an earlier
// build's is (the functions whose shape changed left out) once a build of
// pathprof numbers some of them otherwise: their ids name other paths.
func TestSameModuleOtherShapes(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	d1 := dagtest.New(4, []cfg.DAGEdge{{From: cfg.Entry, To: 2}, {From: 2, To: 3}, {From: 3, To: cfg.Exit}})
	d2 := dagtest.New(4, []cfg.DAGEdge{{From: cfg.Entry, To: 2}, {From: 2, To: 3}, {From: 2, To: cfg.Exit}, {From: 3, To: cfg.Exit}})
	digest := strings.Repeat("ab", 32)
	path := func(b int) []profile.Path {
		return []profile.Path{{ID: 0, Count: 3, Kind: profile.KindEntryExit, Blocks: []int{b}}}
	}
	p := &profile.Profile{Format: profile.Format, Version: profile.Version, Module: profile.Module{SHA256: digest}, Strategy: profile.SBL, Copies: 1, Complete: true,
		Functions: []profile.Function{
			{Index: 1, Name: "f", Status: profile.StatusProfiled, PossiblePaths: "1", Paths: path(10)},
			{Index: 2, Name: "g", Status: profile.StatusProfiled, PossiblePaths: "1", Paths: path(20)},
		}}
	before := []Func{{Index: 1, Name: "f", DAG: d1}, {Index: 2, Name: "g", DAG: d1}}
	if err := s.Save(p, before); err != nil {
		t.Fatal(err)
	}
	prev, err := s.Find(digest, "", before)
	if err != nil || prev == nil || !prev.Same || len(prev.Profile.Functions) != 2 {
		t.Fatalf("same shapes: %+v, %v; want the whole profile", prev, err)
	}
	after := []Func{{Index: 1, Name: "f", DAG: d1}, {Index: 2, Name: "g", DAG: d2}}
	prev, err = s.Find(digest, "", after)
	if err != nil || prev == nil || prev.Same || prev.Matched != 1 || prev.Ran != 2 ||
		len(prev.Profile.Functions) != 1 || prev.Profile.Functions[0].Name != "f" {
		t.Fatalf("g's shape changed: %+v, %v; want f's paths only", prev, err)
	}
}
