// Command pathprof gives exact path profiles of WebAssembly programs.
//
// The commands, their synopses and summaries are the table commands below:
// "pathprof help" prints them, "pathprof COMMAND -h" a command's flags, and
// docs/commands.md describes each command at length.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"github.com/pathprof/pathprof/internal/runner"
	"io"
	"os"
	"strings"

	"github.com/pathprof/pathprof/internal/atomicfile"
	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/inspect"
	"github.com/pathprof/pathprof/internal/srcmap"
	"github.com/pathprof/pathprof/internal/wasm"
)

// A command is one row of the command line's table.
type command struct {
	name string
	// synopsis holds one line per form of the command, without
	// "pathprof NAME"; a "\n" inside a form continues it on the next line.
	synopsis []string
	// summary says in one line what the command does.
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands is the command line's one table: the top-level usage and each
// command's usage line are printed from it, and a test checks the README's
// table of commands against it. It is filled in init, since the commands'
// functions print their usage from it.
var commands []command

func init() {
	commands = []command{
		{"profile", []string{
			"[--strategy sbl|pbl|p3] [--copies K] [--jobs N] [--weights PROFILE] [--uncovered-from BASE] [--history DIR | --no-history] [--engine wazero|node] [--counter-module] [--timeout D] [--snapshot-every D]\n" +
				"[-o FILE] [--top N] [-q]\n" +
				"[--stub MODULE.NAME[=RESULT]] [--stub-missing] [--region MODULE.START,MODULE.END | --region-func NAME] [--invoke NAME[:ARG,...]]\n" +
				"[--label LABEL] [--env K=V] [--dir HOST[:GUEST][:ro]] [--stdin FILE] [--cache DIR] MODULE [ARGS...]",
			"--runs FILE [--jobs N] [--strategy sbl|pbl|p3] [--copies K] [--weights PROFILE] [--uncovered-from BASE] [--history DIR | --no-history] [--counter-module] [--timeout D]\n" +
				"[-o FILE] [--top N] [-q]\n" +
				"[--stub MODULE.NAME[=RESULT]] [--stub-missing] [--region MODULE.START,MODULE.END | --region-func NAME] [--invoke NAME[:ARG,...]]\n" +
				"[--cache DIR] MODULE",
		}, "Run a WASI program deterministically and write its exact path profile.", cmdProfile},
		{"test", []string{
			"[--protocol go|rust|gtest] [--run REGEXP] [--jobs N] [--strategy sbl|pbl|p3] [--copies K] [--weights PROFILE] [--uncovered-from BASE]\n" +
				"[--history DIR | --no-history] [--counter-module] [--timeout D] [-o FILE] [--top N] [-q] [--binary FILE] [--stub MODULE.NAME[=RESULT]] [--stub-missing]\n" +
				"[--env K=V] [--dir HOST[:GUEST][:ro]] [--stdin FILE] [--cache DIR] MODULE|PACKAGE [ARGS...]",
		}, "Profile each test of a test binary (Go, Rust libtest, GoogleTest) as a run, with each path's counts by test.", cmdTest},
		{"report", []string{
			"[--top N] [--json] [--html FILE] [--lcov FILE] [--cobertura FILE] [--source DIR] [--module FILE] PROFILE",
		}, "Print a profile's hottest paths, path coverage per function and source lines, or write an HTML report, lcov or Cobertura.", cmdReport},
		{"inspect", []string{
			"[--json] [--func NAME] [--dot FILE] MODULE",
		}, "List each function's blocks, edges, loops and acyclic paths; draw one's CFG and DAG.", cmdInspect},
		{"instrument", []string{
			"[--strategy sbl|pbl|p3] [--copies K] [--weights PROFILE] [--counter-module] [--host wasi|js] [--runs FILE] -o DIR MODULE",
		}, "Write a strategy's copies, their counter modules, a manifest and a node runner or an ES module for JS hosts.", cmdInstrument},
		{"exec", []string{
			"[-o FILE] [--timeout D] [-q] [runner flags] DIR COPY [ARGS...]",
			"--counts FILE [--exit-code N] [--output FILE] DIR COPY",
			"[--timeout D] [-q] [runner flags] DIR --unit I [--units U,...]",
		}, "Run one copy or work unit and write its part, or make the part from a node run's counts.", cmdExec},
		{"merge", []string{
			"[-o FILE] [--dir DIR] PARTS...",
			"[-o FILE] [-q] PROFILES...",
		}, "Merge the copies' parts into the exact profile, or profiles of different runs into one.", cmdMerge},
		{"submit", []string{
			"--engine slurm [--throttle N] [--wait [--poll D]] [--pathprof PATH] DIR [-- SBATCH_ARGS...]",
			"--engine kubernetes --image IMAGE --pvc CLAIM [--throttle N] [-o FILE] DIR",
		}, "Submit a work directory's units (copies × runs) as a Slurm array job or a Kubernetes Indexed Job.", cmdSubmit},
		{"collect", []string{
			"[-o FILE] [--resubmit] [--wait [--poll D]] [--throttle N] DIR",
		}, "Merge a work directory's units into the profile, or list those missing or failed with their logs and resubmit them.", cmdCollect},
		{"diff", []string{
			"[--threshold PCT] [--json] [--html FILE [--source DIR]] [--module-a FILE] [--module-b FILE] A B",
		}, "Compare two profiles: paths gone, new and changed, per function and in total, and coverage before and after.", cmdDiff},
		{"osp", []string{
			"[--memory BYTES] [--lengths 2,4,...,64] [--skip N] [--seed N] [--compact=false] [--concise] [-o FILE] [--top N] [-q]\n" +
				"[--env K=V] [--dir HOST[:GUEST][:ro]] [--stdin FILE] [--cache DIR] MODULE [ARGS...]",
			"--show PROFILE [--top N] [--module FILE]",
		}, "Sample hot subpaths (block sequences across calls) within a memory bound.", cmdOSP},
		{"osp-score", []string{
			"[--memory BYTES] [--lengths 2,4,...,64] [--skip N] [--seed N] [--compact=false] [--concise] [--profile FILE | --unbounded] [-o FILE] [--top N]\n" +
				"[--env K=V] [--dir HOST[:GUEST][:ro]] [--stdin FILE] [--cache DIR] MODULE [ARGS...]",
		}, "Score the sampled hot subpaths against exact counts of the same run.", cmdOSPScore},
		{"bench", []string{
			"[--quick] [--strategies [--hits-only] [--prefix-plans]] [--big] [--suite DIR] [-o DIR] [--runs N] [--only NAME] [--cache DIR]",
			"--osp [--memory BYTES] [--lengths 2,4,...,64] [--skip N] [--seed N] [--compact=false] [--concise] [--sweep BYTES,...]\n" +
				"[--quick] [--suite DIR] [-o DIR] [--runs N] [--only NAME] [--cache DIR]",
			"--prepare [--no-debian] [--big] [--suite DIR] [--src DIR]",
			"--from RESULTS.json -o DIR",
		}, "Measure SBL, PBL, P3 or OSP on the benchmark suite: overhead, probe hits, accuracy.", cmdBench},
	}
}

// lookup returns the command called name, or nil.
func lookup(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// forms writes the command's forms, each line after prefix and each
// continuation line indented under the first one's flags.
func (c *command) forms(w *strings.Builder, first, others string) {
	for i, form := range c.synopsis {
		lead := others + "pathprof " + c.name + " "
		if i == 0 {
			lead = first + "pathprof " + c.name + " "
		}
		indent := strings.Repeat(" ", len(lead))
		for j, line := range strings.Split(form, "\n") {
			if j == 0 {
				w.WriteString(lead)
			} else {
				w.WriteString(indent)
			}
			w.WriteString(line)
			w.WriteByte('\n')
		}
	}
}

// usageOf is the usage line of the command called name, as its flag set
// prints it before the flags.
func usageOf(name string) string {
	var b strings.Builder
	lookup(name).forms(&b, "usage: ", "       ")
	return strings.TrimSuffix(b.String(), "\n")
}

// newFlagSet returns the flag set of the command called name: errors go to
// stderr, and its usage is the command's usage line from the table followed
// by the flags.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, usageOf(name))
		fs.PrintDefaults()
	}
	return fs
}

// usage is the top-level usage: every command's forms and summary.
func usage() string {
	var b strings.Builder
	b.WriteString("pathprof gives exact path profiles of WebAssembly programs.\n\nUsage:\n")
	for i := range commands {
		c := &commands[i]
		c.forms(&b, "  ", "  ")
		fmt.Fprintf(&b, "      %s\n", c.summary)
	}
	b.WriteString("\nRun \"pathprof COMMAND -h\" for a command's flags.\n")
	return b.String()
}

func main() {
	setMemoryLimit()
	if _, err := runner.CacheLimit(); err != nil {
		fmt.Fprintln(os.Stderr, "pathprof:", err)
		os.Exit(2)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage())
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if c := lookup(args[0]); c != nil {
		return c.run(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "pathprof: unknown command %q\n\n%s", args[0], usage())
	return 2
}

func cmdInspect(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("inspect", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	fn := fs.String("func", "", "only the function with this name or index (with --dot: the function to draw)")
	dot := fs.String("dot", "", "write the CFG and DAG of the --func function to this Graphviz file")
	if err := fs.Parse(interleaved(fs, args)); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	path := fs.Arg(0)
	m, err := load(path)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	opt := inspect.Options{CFG: cfg.Options{NoReturn: cfg.NoReturnImports(m, [2]string{"wasi_snapshot_preview1", "proc_exit"})}}
	if *dot != "" {
		if *fn == "" {
			fmt.Fprintln(stderr, "pathprof: --dot needs --func to say which function to draw")
			return 2
		}
		def, err := inspect.Find(m, *fn)
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %s: %v\n", path, err)
			return 1
		}
		err = atomicfile.Write(*dot, 0o644, func(w io.Writer) error { return inspect.WriteDot(w, m, def, opt.CFG) })
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %v\n", err)
			return 1
		}
		*fn = fmt.Sprint(m.NumImportedFuncs + uint32(def))
	} else if *fn != "" {
		def, err := inspect.Find(m, *fn)
		if err != nil {
			fmt.Fprintf(stderr, "pathprof: %s: %v\n", path, err)
			return 1
		}
		*fn = fmt.Sprint(m.NumImportedFuncs + uint32(def))
	}
	opt.Func = *fn
	s, err := inspect.Module(m, opt)
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %s: %v\n", path, err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(s)
	} else {
		err = inspect.WriteText(stdout, s)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pathprof: %v\n", err)
		return 1
	}
	return 0
}

// load reads and decodes a module, naming the file in errors.
func load(path string) (*wasm.Module, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := wasm.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	srcmap.AddNames(m)
	return m, nil
}

// interleaved moves flags that follow positional arguments to the front, so
// "inspect MODULE --json" works like "inspect --json MODULE".
func interleaved(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := a[1:]
			if name[0] == '-' {
				name = name[1:]
			}
			if f := fs.Lookup(name); f != nil && !isBool(f) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(flags, pos...)
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
