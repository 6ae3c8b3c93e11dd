// Command pathprof gives exact path profiles of WebAssembly programs.
//
// Usage:
//
//	pathprof inspect [--json] [--func NAME] [--dot FILE] MODULE
//	pathprof profile [--strategy sbl|pbl|p3] [--copies K] [-o FILE] [runner flags] MODULE [-- ARGS...]
//	pathprof report [--top N] [--json] PROFILE
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/pathprof/pathprof/internal/cfg"
	"github.com/pathprof/pathprof/internal/inspect"
	"github.com/pathprof/pathprof/internal/wasm"
)

const usage = `pathprof gives exact path profiles of WebAssembly programs.

Usage:
  pathprof inspect [--json] [--func NAME] [--dot FILE] MODULE
      Per function: index, name, blocks, edges, loops and acyclic paths.
  pathprof profile [--strategy sbl|pbl|p3] [--copies K] [--jobs N] [-o FILE] [--top N]
                   [--env K=V] [--dir HOST[:GUEST]] [--stdin FILE] [--cache DIR] MODULE [-- ARGS...]
      Run a WASI program deterministically and write its exact path profile.
  pathprof report [--top N] [--json] [--module FILE] PROFILE
      Hottest paths, path coverage per function, source lines.
  pathprof instrument [--strategy sbl|pbl|p3] [--copies K] [--weights PROFILE] [--counter-module] -o DIR MODULE
      Write the copies, their counter modules, a manifest and a node runner.
  pathprof exec [-o FILE] [runner flags] DIR COPY [-- ARGS...]
      Run one copy and write its part; or --counts FILE to take a node run's.
  pathprof merge [-o FILE] [--dir DIR] PARTS...
      Merge the copies' parts into the exact profile.
  pathprof osp [--memory BYTES] [--lengths 2,4,...,64] [--skip N] [--seed N] [--compact=false] [--concise] [-o FILE] [--top N]
               [runner flags] MODULE [-- ARGS...]
      Sample hot subpaths (block sequences across calls) with bounded memory.
  pathprof osp-score [sampling flags] [runner flags] MODULE [-- ARGS...]
      Score the sampled hot subpaths against exact counts of the same run.
  pathprof bench [--quick] [--prepare] [--suite DIR] [-o DIR] [--runs N]
      Measure profiling overhead on the benchmark suite.

Run "pathprof COMMAND -h" for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "inspect":
		return cmdInspect(args[1:], stdout, stderr)
	case "profile":
		return cmdProfile(args[1:], stdout, stderr)
	case "report":
		return cmdReport(args[1:], stdout, stderr)
	case "bench":
		return cmdBench(args[1:], stdout, stderr)
	case "instrument":
		return cmdInstrument(args[1:], stdout, stderr)
	case "exec":
		return cmdExec(args[1:], stdout, stderr)
	case "merge":
		return cmdMerge(args[1:], stdout, stderr)
	case "osp":
		return cmdOSP(args[1:], stdout, stderr)
	case "osp-score":
		return cmdOSPScore(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "pathprof: unknown command %q\n\n%s", args[0], usage)
	return 2
}

func cmdInspect(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	fn := fs.String("func", "", "only the function with this name or index (with --dot: the function to draw)")
	dot := fs.String("dot", "", "write the CFG and DAG of the --func function to this Graphviz file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pathprof inspect [--json] [--func NAME] [--dot FILE] MODULE")
		fs.PrintDefaults()
	}
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
		f, err := os.Create(*dot)
		if err == nil {
			err = inspect.WriteDot(f, m, def, opt.CFG)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
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
