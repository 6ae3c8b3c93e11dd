package main

// This file is the work units of a directory written with a runs file:
// "exec DIR --unit I" runs one, "submit" hands them to a batch engine
// and "collect" merges their parts (docs/cluster.md).

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pathprof/pathprof/internal/atomicfile"
	"github.com/pathprof/pathprof/internal/cluster"
	"github.com/pathprof/pathprof/internal/profiler"
	"github.com/pathprof/pathprof/internal/runs"
	"github.com/pathprof/pathprof/profile"
)

// runsFileName is the runs file in a work directory, its paths absolute.
const runsFileName = "runs.json"

// writeUnits makes dir, just written by instrument, a work directory of
// the runs specs: the runs file beside the manifest, which enumerates
// the units.
func writeUnits(dir string, specs []runs.Spec, man *profiler.Manifest) error {
	var err error
	labels := make([]string, len(specs))
	for i := range specs {
		s := &specs[i]
		labels[i] = s.Label
		if s.Stdin != "" {
			if s.Stdin, err = filepath.Abs(s.Stdin); err != nil {
				return err
			}
		}
		for j := range s.Mounts {
			if s.Mounts[j].Host, err = filepath.Abs(s.Mounts[j].Host); err != nil {
				return err
			}
		}
	}
	if err := runs.WriteFile(filepath.Join(dir, runsFileName), specs); err != nil {
		return err
	}
	man.SetRuns(labels)
	return profiler.WriteManifest(dir, man)
}

// readWorkDir reads the work directory at path, made absolute since the
// engines' tasks run elsewhere: its manifest and original module, checked
// against each other, and no copy (each command builds only the copies
// it runs or merges); ok is false after saying why it cannot, or that it
// has no units.
func readWorkDir(path string, stderr io.Writer) (dir string, man *profiler.Manifest, orig []byte, ok bool) {
	dir, err := filepath.Abs(path)
	if err == nil {
		man, orig, err = profiler.ReadManifest(dir)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return "", nil, nil, false
	}
	if len(man.Units) == 0 {
		fmt.Fprintf(stderr, "pathprof: %s has no work units: write it with instrument --runs FILE\n", dir)
		return "", nil, nil, false
	}
	return dir, man, orig, true
}

// hasUnit reports whether exec's arguments ask for a work unit: --unit
// or --units among the flags before a second operand (after DIR COPY
// come the program's arguments, which may be anything).
func hasUnit(args []string) bool {
	operands := 0
	for i := 0; i < len(args) && operands < 2; i++ {
		a := args[i]
		if a == "--" {
			return false
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			operands++
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case name == "unit" || name == "units":
			return true
		case !hasValue && name != "q" && name != "stub-missing":
			i++ // the flag's value
		}
	}
	return false
}

// unitFlags registers exec's flags of work units, which execUnit reads
// (cmdExec lists them in its usage).
func unitFlags(fs *flag.FlagSet) (unit, list *string) {
	unit = fs.String("unit", "", "run work unit `I` of a directory written with --runs (with --units, the I-th of the list)")
	list = fs.String("units", "", "with --unit: the work units, `U,U,...`, of which --unit picks one (a Kubernetes resubmission)")
	return unit, list
}

// execUnit is "exec DIR --unit I": one copy on one run of the work
// directory, its part written to DIR/parts whole or not at all.
func execUnit(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("exec", stderr)
	unitArg, list := unitFlags(fs)
	timeout := fs.Duration("timeout", 0, "stop the run after `D` unless its run gives a timeout, and write the part marked interrupted; exit 124")
	quiet := fs.Bool("q", false, "no progress line on stderr")
	rf := &runFlags{}
	rf.register(fs)
	if err := fs.Parse(interleaved(fs, args)); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		if fs.NArg() > 1 {
			fmt.Fprintln(stderr, "pathprof: a unit's run gives its input: no program arguments with --unit")
		}
		fs.Usage()
		return 2
	}
	if len(rf.env) > 0 || len(rf.dirs) > 0 || rf.stdin != "" {
		fmt.Fprintln(stderr, "pathprof: a unit's run gives its input: --env, --dir and --stdin do not go with --unit")
		return 2
	}
	dir := fs.Arg(0)
	u, err := strconv.Atoi(*unitArg)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: --unit %q is not a number\n", *unitArg)
		return 2
	}
	if *list != "" {
		us := strings.Split(*list, ",")
		if u < 0 || u >= len(us) {
			fmt.Fprintf(stderr, "pathprof: --unit %d: --units lists %d units\n", u, len(us))
			return 2
		}
		if u, err = strconv.Atoi(us[u]); err != nil {
			fmt.Fprintf(stderr, "pathprof: --units %q: not a list of numbers\n", *list)
			return 2
		}
	}
	// Until the copy runs, exec only prepares, which a stop abandons.
	stops := listen(stderr)
	defer stops.close()
	dir, man, orig, ok := readWorkDir(dir, stderr)
	if !ok {
		return 1
	}
	startHeap(len(orig))
	if u < 0 || u >= len(man.Units) {
		fmt.Fprintf(stderr, "pathprof: unit %d: %s has units 0 to %d\n", u, dir, len(man.Units)-1)
		return 2
	}
	specs, err := runs.ReadFile(filepath.Join(dir, runsFileName))
	if err == nil && (len(specs) != len(man.Runs) || specs[man.Units[u].Run].Label != man.Runs[man.Units[u].Run]) {
		err = fmt.Errorf("%s does not hold the manifest's runs", filepath.Join(dir, runsFileName))
	}
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	unit, spec := man.Units[u], &specs[man.Units[u].Run]
	base, err := rf.program(man.Module.Path)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 2
	}
	cfg, err := spec.Config(base)
	var stdin []byte
	if err == nil && cfg.Stdin != nil {
		stdin, err = io.ReadAll(cfg.Stdin)
		cfg.Stdin = bytes.NewReader(stdin)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: run %q: %v\n", spec.Label, err)
		return 1
	}
	sum := profiler.OutputHash()
	cfg.Stdout, cfg.Stderr = io.MultiWriter(stdout, sum), io.MultiWriter(stderr, sum)
	if spec.Timeout != 0 {
		*timeout = time.Duration(spec.Timeout)
	}
	if !*quiet {
		fmt.Fprintf(stderr, "pathprof: unit %d of %d: copy %d on run %q\n", u, len(man.Units), unit.Copy, spec.Label)
	}
	out := profiler.UnitPart(dir, u)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	res, err := man.BuildCopy(dir, orig, unit.Copy)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	run, in, ok := runCopy(dir, man, res, cfg, stops, *timeout, stderr)
	if !ok {
		return 1
	}
	part := profiler.NewUnitPart(man, u, run, sum.Sum(nil), spec.Label, cfg, stdin)
	code := copyCode(part, run, in, stderr)
	secs := strconv.FormatFloat(run.Result.RunTime.Seconds(), 'f', -1, 64) + "\n"
	if err := atomicfile.WriteFile(profiler.UnitSeconds(dir, u), []byte(secs), 0o644); err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	if !writePart(out, part, stderr) {
		return 1
	}
	return code
}

// submitFlags are what submit and collect --resubmit share.
type submitFlags struct {
	engine, image, claim, pathprof, manifest string
	throttle                                 int
	wait                                     bool
	poll                                     time.Duration
}

func (f *submitFlags) register(fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
	BoolVar(*bool, string, bool, string)
	DurationVar(*time.Duration, string, time.Duration, string)
}) {
	fs.IntVar(&f.throttle, "throttle", 0, "run at most `N` units at once (Slurm's %N, the Job's parallelism; 0: as many as the engine will)")
	fs.BoolVar(&f.wait, "wait", false, "wait until the units have run, with their count done, running and failed as it changes")
	fs.DurationVar(&f.poll, "poll", 5*time.Second, "with --wait: ask the engine where the units stand every `D`")
	fs.StringVar(&f.pathprof, "pathprof", "", "the pathprof the Slurm nodes run, `PATH` as they see it (default: this one)")
}

// cmdSubmit is "submit": the units of a work directory as an array job.
func cmdSubmit(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("submit", stderr)
	var f submitFlags
	fs.StringVar(&f.engine, "engine", "", "the batch engine: slurm or kubernetes")
	fs.StringVar(&f.image, "image", "", "kubernetes: the pathprof container `IMAGE` the pods run (Dockerfile)")
	fs.StringVar(&f.claim, "pvc", "", "kubernetes: the persistent volume `CLAIM` that holds the work directory")
	fs.StringVar(&f.manifest, "o", "", "kubernetes: also write the Job's manifest to `FILE`")
	f.register(fs)
	own, extra := args, []string(nil)
	if i := slices.Index(args, "--"); i >= 0 {
		own, extra = args[:i], args[i+1:]
	}
	if err := fs.Parse(interleaved(fs, own)); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	switch f.engine {
	case cluster.Slurm:
	case cluster.Kubernetes:
		if f.image == "" || f.claim == "" {
			fmt.Fprintln(stderr, "pathprof: --engine kubernetes needs --image IMAGE and --pvc CLAIM")
			return 2
		}
		if len(extra) > 0 {
			fmt.Fprintln(stderr, "pathprof: arguments after -- are sbatch's: --engine kubernetes takes none")
			return 2
		}
	default:
		fmt.Fprintf(stderr, "pathprof: --engine %q: want slurm or kubernetes\n", f.engine)
		return 2
	}
	dir, man, _, ok := readWorkDir(fs.Arg(0), stderr)
	if !ok {
		return 1
	}
	units := make([]int, len(man.Units))
	for i := range units {
		units[i] = i
	}
	job := cluster.Job{Engine: f.engine, Args: extra, Throttle: f.throttle, Image: f.image, Claim: f.claim}
	return submit(dir, man, job, units, f, stdout, stderr)
}

// submit submits units of dir as job says, records the job, and with
// f.wait waits for them.
func submit(dir string, man *profiler.Manifest, job cluster.Job, units []int, f submitFlags, stdout, stderr io.Writer) int {
	ctx := context.Background()
	job.Units = units
	switch job.Engine {
	case cluster.Slurm:
		exe := cmp.Or(f.pathprof, job.Pathprof)
		if exe == "" {
			var err error
			if exe, err = os.Executable(); err != nil {
				fmt.Fprintf(stderr, "pathprof: %v\n", err)
				return 1
			}
		}
		id, err := cluster.SubmitSlurm(ctx, exe, dir, units, job.Throttle, job.Args)
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		job.ID, job.Pathprof = id, exe
		fmt.Fprintf(stdout, "submitted %d units of %s as Slurm job %s\n", len(units), dir, id)
	case cluster.Kubernetes:
		jobs, err := cluster.ReadJobs(dir)
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		job.ID = cluster.KubernetesName(dir, len(jobs)+1)
		m, err := cluster.KubernetesJob(job.ID, job.Image, job.Claim, dir, units, job.Throttle)
		if err == nil && f.manifest != "" {
			err = atomicfile.WriteFile(f.manifest, m, 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		applied, err := cluster.ApplyKubernetes(ctx, m)
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			if f.manifest == "" {
				fmt.Fprintln(stderr, "pathprof: -o FILE writes the Job's manifest, to apply elsewhere")
			}
			return 1
		}
		if !applied {
			// The manifest is the output, for kubectl elsewhere; the job
			// is recorded all the same, for collect's logs and resubmission.
			if err := cluster.AddJob(dir, job); err != nil {
				fmt.Fprintf(stderr, "pathprof: %v\n", err)
				return 1
			}
			stdout.Write(m)
			fmt.Fprintf(stderr, "pathprof: no kubectl here: apply this Indexed Job where there is one (kubectl apply -f FILE), then run pathprof collect %s\n", dir)
			return 0
		}
		fmt.Fprintf(stdout, "submitted %d units of %s as Kubernetes Job %s\n", len(units), dir, job.ID)
	}
	if err := cluster.AddJob(dir, job); err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	if !f.wait {
		fmt.Fprintf(stdout, "then: pathprof collect %s\n", dir)
		return 0
	}
	if job.Engine != cluster.Slurm {
		fmt.Fprintln(stderr, "pathprof: --wait waits for Slurm jobs: wait with kubectl wait --for=condition=complete job/"+job.ID)
		return 0
	}
	us, err := waitUnits(ctx, dir, man, f.poll, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	for _, u := range units {
		if s := us[u].State; s != cluster.Done && s != cluster.Failed {
			fmt.Fprintf(stderr, "pathprof: job %s ended with units to run again: pathprof collect --resubmit %s\n", job.ID, dir)
			return 1
		}
	}
	fmt.Fprintf(stdout, "job %s done: pathprof collect %s\n", job.ID, dir)
	return 0
}

// waitUnits waits until Slurm has none of dir's units pending or
// running, saying where the units stand whenever that changes.
func waitUnits(ctx context.Context, dir string, man *profiler.Manifest, poll time.Duration, stderr io.Writer) ([]cluster.Unit, error) {
	last := ""
	for {
		us, queued, err := unitStatus(ctx, dir, man)
		if err != nil {
			return nil, err
		}
		if s := cluster.Summary(us); s != last {
			fmt.Fprintf(stderr, "pathprof: %s\n", s)
			last = s
		}
		if len(queued) == 0 {
			return us, nil
		}
		time.Sleep(poll)
	}
}

// unitStatus is where dir's units stand, and those Slurm has queued.
func unitStatus(ctx context.Context, dir string, man *profiler.Manifest) ([]cluster.Unit, map[int]cluster.State, error) {
	jobs, err := cluster.ReadJobs(dir)
	if err != nil {
		return nil, nil, err
	}
	queued, err := cluster.SlurmQueue(ctx, jobs)
	if err != nil {
		return nil, nil, err
	}
	return cluster.Status(dir, man, jobs, queued), queued, nil
}

// cmdCollect is "collect": the profile of a work directory's units, or
// which units are not done and their logs.
func cmdCollect(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("collect", stderr)
	out := fs.String("o", "pathprof.json", "write the profile to `FILE`")
	resubmit := fs.Bool("resubmit", false, "submit the units interrupted or lost again, to the engine they last went to")
	var f submitFlags
	f.register(fs)
	if err := fs.Parse(interleaved(fs, args)); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	if !checkOutput(*out, stderr) {
		return 1
	}
	dir, man, orig, ok := readWorkDir(fs.Arg(0), stderr)
	if !ok {
		return 1
	}
	ctx := context.Background()
	var us []cluster.Unit
	var err error
	if f.wait {
		us, err = waitUnits(ctx, dir, man, f.poll, stderr)
	} else {
		us, _, err = unitStatus(ctx, dir, man)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	if redo := cluster.Redo(us); len(redo) > 0 && *resubmit {
		jobs, err := cluster.ReadJobs(dir)
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		if len(jobs) == 0 {
			fmt.Fprintf(stderr, "pathprof: %s was never submitted: pathprof submit --engine ENGINE %s\n", dir, dir)
			return 1
		}
		job := jobs[len(jobs)-1]
		job.Throttle = cmp.Or(f.throttle, job.Throttle)
		fmt.Fprintf(stderr, "pathprof: resubmitting %d units: %s\n", len(redo), cluster.ArraySpec(redo, 0))
		if code := submit(dir, man, job, redo, f, stdout, stderr); code != 0 || !f.wait {
			return code
		}
		if us, _, err = unitStatus(ctx, dir, man); err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
	}
	n := cluster.Count(us)
	if n[cluster.Done]+n[cluster.Failed] < len(us) {
		fmt.Fprintf(stderr, "pathprof: %s\n", cluster.Summary(us))
		for _, u := range us {
			if u.State == cluster.Done || u.State == cluster.Failed {
				continue
			}
			fmt.Fprintf(stderr, "    unit %d (%s): %s", u.Unit, unitName(man, u.Unit), u.State)
			if u.Why != "" {
				fmt.Fprintf(stderr, ": %s", u.Why)
			}
			if u.Log != "" {
				fmt.Fprintf(stderr, "; log %s", u.Log)
			}
			fmt.Fprintln(stderr)
		}
		if len(cluster.Redo(us)) > 0 {
			fmt.Fprintf(stderr, "pathprof: run them again: pathprof collect --resubmit %s\n", dir)
		}
		return 1
	}
	// Every unit is done: merging needs every copy's numberings.
	startHeap(len(orig))
	var p *profile.Profile
	_, _, cs, err := profiler.ReadDir(dir)
	if err == nil {
		p, err = cluster.Merge(man, cs, us)
	}
	if err == nil {
		err = profile.WriteFile(*out, p)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	for _, u := range us {
		if u.State == cluster.Failed {
			fmt.Fprintf(stderr, "pathprof: unit %d (%s) failed: %s; log %s\n", u.Unit, unitName(man, u.Unit), u.Why, u.Log)
		}
	}
	fmt.Fprintf(stdout, "wrote %s: %d units of %d runs merged, %d failed\n", *out, len(us), len(man.Runs), n[cluster.Failed])
	if n[cluster.Failed] > 0 {
		return 1
	}
	return 0
}

// unitName says which copy and run unit u is.
func unitName(man *profiler.Manifest, u int) string {
	unit := man.Units[u]
	return fmt.Sprintf("copy %d of run %q", unit.Copy, man.Runs[unit.Run])
}
