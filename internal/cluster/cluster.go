// Package cluster runs a work directory's units on batch engines (Slurm
// job arrays, Kubernetes Indexed Jobs) and collects their parts: which
// units are done, running or lost, and the profile once all are done.
package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pathprof/pathprof/internal/atomicfile"
	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/profile"
)

// Engines.
const (
	Slurm      = "slurm"
	Kubernetes = "kubernetes"
)

// Job is one submission of units to an engine, recorded in the work
// directory's jobs.json so that collect can find their logs and
// resubmit to the same engine.
type Job struct {
	Engine string `json:"engine"`
	// ID is Slurm's job id, or the Kubernetes Job's name.
	ID    string `json:"id"`
	Units []int  `json:"units"`
	// Args are the engine's extra arguments (sbatch's), given again on
	// a resubmission; Image and Claim are Kubernetes'.
	Args     []string `json:"args,omitempty"`
	Throttle int      `json:"throttle,omitempty"`
	Image    string   `json:"image,omitempty"`
	Claim    string   `json:"claim,omitempty"`
	// Pathprof is the pathprof that Slurm's tasks run, so that a
	// resubmission runs the same one.
	Pathprof string `json:"pathprof,omitempty"`
	Time     string `json:"time"`
}

type jobsFile struct {
	Jobs []Job `json:"jobs"`
}

func jobsPath(dir string) string { return filepath.Join(dir, "jobs.json") }

// ReadJobs reads the submissions recorded in dir, oldest first; none
// when nothing was submitted.
func ReadJobs(dir string) ([]Job, error) {
	b, err := os.ReadFile(jobsPath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f jobsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %v", jobsPath(dir), err)
	}
	return f.Jobs, nil
}

// AddJob records a submission in dir.
func AddJob(dir string, j Job) error {
	jobs, err := ReadJobs(dir)
	if err != nil {
		return err
	}
	if j.Time == "" {
		j.Time = time.Now().UTC().Format(time.RFC3339)
	}
	b, err := json.MarshalIndent(jobsFile{Jobs: append(jobs, j)}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(jobsPath(dir), append(b, '\n'), 0o644)
}

// State is where a unit stands.
type State string

// A unit is done when its part is written and its program ended, failed
// when it ended badly (a trap, an exit code other than 0: recorded in
// the profile, as profile --runs records a failed run, since running it
// again would fail alike), interrupted when its part was written by a
// stopped run, lost when it has no part and is not queued (its task
// failed before writing one, or its node died), and pending or running
// as the engine says.
const (
	Done        State = "done"
	Failed      State = "failed"
	Interrupted State = "interrupted"
	Lost        State = "lost"
	Pending     State = "pending"
	Running     State = "running"
)

// Unit is a unit's state, why it failed and its last submission's log.
type Unit struct {
	Unit  int
	State State
	Why   string
	Log   string
	part  *profiler.Part
}

// Status reads the parts of dir's units; queued gives the units an
// engine has pending or running (nil for none), which override what the
// parts say (a unit submitted again runs anew).
func Status(dir string, man *profiler.Manifest, jobs []Job, queued map[int]State) []Unit {
	us := make([]Unit, len(man.Units))
	for u := range us {
		us[u] = Unit{Unit: u, State: Lost, Why: "no part written", Log: logOf(dir, jobs, u)}
		p, err := profiler.ReadPart(profiler.UnitPart(dir, u))
		if err == nil {
			// The run time, kept apart (profiler.UnitSeconds); a part
			// without it still merges.
			b, _ := os.ReadFile(profiler.UnitSeconds(dir, u))
			p.Seconds, _ = strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			us[u].Why = err.Error()
		case p.Interrupted != nil:
			us[u].State, us[u].Why = Interrupted, fmt.Sprintf("stopped by %s after %.2fs", p.Interrupted.Reason, p.Interrupted.Seconds)
		case p.Error != "":
			us[u].State, us[u].Why, us[u].part = Failed, p.Error, p
		case p.ExitCode != 0:
			us[u].State, us[u].Why, us[u].part = Failed, fmt.Sprintf("exit code %d", p.ExitCode), p
		default:
			us[u].State, us[u].Why, us[u].part = Done, "", p
		}
		if s, ok := queued[u]; ok {
			us[u].State, us[u].Why = s, ""
		}
	}
	return us
}

// Count is how many units are in each state.
func Count(us []Unit) map[State]int {
	n := map[State]int{}
	for _, u := range us {
		n[u.State]++
	}
	return n
}

// Summary says how many units are in each state, as a line of progress.
func Summary(us []Unit) string {
	n := Count(us)
	return fmt.Sprintf("%d of %d units done, %d running, %d pending, %d failed, %d interrupted, %d lost",
		n[Done], len(us), n[Running], n[Pending], n[Failed], n[Interrupted], n[Lost])
}

// Redo is the units to run again: those interrupted or lost.
func Redo(us []Unit) []int {
	var out []int
	for _, u := range us {
		if u.State == Interrupted || u.State == Lost {
			out = append(out, u.Unit)
		}
	}
	return out
}

// logOf is the log of unit u's last submission, "" if never submitted.
func logOf(dir string, jobs []Job, u int) string {
	for i := len(jobs) - 1; i >= 0; i-- {
		j := jobs[i]
		if !slices.Contains(j.Units, u) {
			continue
		}
		switch j.Engine {
		case Slurm:
			return SlurmLog(dir, j.ID, u)
		case Kubernetes:
			return kubernetesLog(j, u)
		}
	}
	return ""
}

// Merge merges the units' parts into the profile of every run, each
// run's copies as one run's profile and the runs with per-run
// attribution, as profile --runs merges them. Every unit must be done
// or failed.
func Merge(man *profiler.Manifest, cs *profiler.Copies, us []Unit) (*profile.Profile, error) {
	byRun := make([][]*profiler.Part, len(man.Runs))
	for _, u := range us {
		if u.part == nil {
			return nil, fmt.Errorf("unit %d is %s", u.Unit, u.State)
		}
		r := man.Units[u.Unit].Run
		byRun[r] = append(byRun[r], u.part)
	}
	m := profile.NewMerger()
	for r, parts := range byRun {
		p, err := profiler.MergeRun(man, cs, parts)
		if p == nil {
			return nil, fmt.Errorf("run %q: %v", man.Runs[r], err)
		}
		if err := m.Add(man.Runs[r], man.Runs[r], p); err != nil {
			return nil, err
		}
	}
	p, err := m.Profile()
	if err != nil {
		return nil, err
	}
	// Every run had the same copies: the profile says what their plan
	// was weighted by, as each run's did.
	p.Weights = man.Weights
	return p, nil
}
