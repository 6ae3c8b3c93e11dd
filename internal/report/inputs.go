package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/pathprof/pathprof/profile"
)

// Input is one run of a profile of several (a merge, a runs file): how it
// ended and how many paths it executed, and how many no other run did.
type Input struct {
	Label      string   `json:"label"`
	Args       []string `json:"args"`
	Complete   bool     `json:"complete"`
	Incomplete string   `json:"incomplete,omitempty"`
	ExitCode   uint32   `json:"exit_code"`
	Seconds    float64  `json:"seconds"`
	Paths      int      `json:"paths"`
	// Unique is the number of paths this run alone executed.
	Unique int `json:"unique_paths"`
}

// inputs is the runs of p with their paths, when it has more than one.
func inputs(p *profile.Profile) []Input {
	if len(p.Inputs) < 2 {
		return nil
	}
	out := make([]Input, len(p.Inputs))
	for i, in := range p.Inputs {
		out[i] = Input{Label: in.Label, Args: in.Args, Complete: in.Complete, Incomplete: in.Incomplete, ExitCode: in.ExitCode, Seconds: in.Seconds}
	}
	for _, f := range p.Functions {
		for _, q := range f.Paths {
			for _, c := range q.ByInput {
				out[c.Input].Paths++
			}
			if len(q.ByInput) == 1 {
				out[q.ByInput[0].Input].Unique++
			}
		}
	}
	return out
}

// writeInputs writes the runs, most paths of their own first.
func writeInputs(w io.Writer, ins []Input) {
	order := make([]int, len(ins))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(ins[b].Unique, ins[a].Unique), cmp.Compare(ins[b].Paths, ins[a].Paths))
	})
	fmt.Fprintf(w, "\n%s, most paths of their own first\n", plural(len(ins), "run"))
	t := newTable(w)
	fmt.Fprintf(t, "paths\tonly it\tseconds\texit\t  run\n")
	for _, i := range order {
		in := &ins[i]
		state := ""
		if !in.Complete {
			state = " (INCOMPLETE: " + in.Incomplete + ")"
		}
		fmt.Fprintf(t, "%d\t%d\t%.3f\t%d\t  %s%s\n", in.Paths, in.Unique, in.Seconds, in.ExitCode, in.Label, state)
	}
	t.Flush()
}
