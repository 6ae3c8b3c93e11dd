package coverage

import (
	"bytes"
	"maps"
	"regexp"

	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pathprof/pathprof/internal/testprogs"
)

// needTools returns the paths of the named commands, or skips the test
// when .ci/run could not install them (it says why in skipVar), or when
// they are missing outside CI.
func needTools(t *testing.T, skipVar, install string, names ...string) []string {
	t.Helper()
	var paths []string
	for _, n := range names {
		p, err := exec.LookPath(n)
		if err != nil {
			if why := os.Getenv(skipVar); why != "" {
				t.Skip("skipped: " + why)
			}
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed, and .ci/run installs it (apt-get install %s)", n, install)
			}
			t.Skipf("skipped: no %s (on Debian: apt-get install %s, as .ci/run does)", n, install)
		}
		paths = append(paths, p)
	}
	return paths
}

// Why a line executed in clang's coverage of the native build is not in
// pathprof's of the wasm build, where the line has code in the wasm build
// (lines without code are explained by that alone, see TestLLVMCovOracle).
const (
	// The program exits from inside the function: the paths it was on
	// when it called exit() never complete, and only completed paths are
	// counted.
	inFlightAtExit = "in flight at exit"
	// llvm-cov gives a line the count of the region in force at its
	// start: here the region of the break on the line before, although
	// none of the line's own regions ran.
	regionInForce = "region in force"
)

// explained are those lines, by program: each must still differ.
var explained = map[string]map[int]string{
	"records-O0": {303: inFlightAtExit, 328: inFlightAtExit},
	"vm-O0":      {306: regionInForce},
}

// TestLLVMCovOracle compares the lines pathprof's lcov says ran in the
// -O0 wasm builds of the C programs with the lines clang's own coverage
// (-fprofile-instr-generate -fcoverage-mapping, llvm-cov export) says ran
// in native -O0 builds of the same sources on the same input. The sets are
// equal but for lines explained one by one (docs/coverage.md): llvm-cov
// counts lines without code (a closing brace, a declaration, a case
// label, a macro's definition) by the region around them, which the wasm
// build has no instruction for; a function's closing brace holds the
// wasm build's shared return, which every return runs; and the lines in
// the table above.
func TestLLVMCovOracle(t *testing.T) {
	tools := needTools(t, "PATHPROF_SKIP_ORACLE", "clang-14 llvm-14", "clang-14", "llvm-profdata-14", "llvm-cov-14")
	clang, profdata, llvmCov := tools[0], tools[1], tools[2]
	var progs []testprogs.CProgram
	for _, p := range append(testprogs.CPrograms(t), testprogs.CProgramsIn(t, "programs-O0.txt")...) {
		if p.Opt == "-O0" {
			progs = append(progs, p)
		}
	}
	if len(progs) < 6 {
		t.Fatalf("only %d -O0 programs", len(progs))
	}
	for _, p := range progs {
		t.Run(p.Name, func(t *testing.T) {
			r := profiled(t, p.Name)
			src := filepath.Base(p.Source)
			nativeData := nativeLCOV(t, p, clang, profdata, llvmCov)
			native := lcovLines(t, nativeData, src)
			ourData := lcov(t, r.cov)
			ours := lcovLines(t, ourData, src)
			if len(native) == 0 {
				t.Fatalf("llvm-cov has no lines of %s", src)
			}
			text, err := os.ReadFile(p.Source)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(text), "\n")
			noCode, returns := 0, 0
			for _, n := range slices.Sorted(maps.Keys(native)) {
				c, ok := ours[n]
				switch {
				case native[n] == 0 || c > 0:
				case !ok:
					noCode++
				case explained[p.Name][n] != "":
				default:
					t.Errorf("%s:%d ran %d times natively, never in the wasm build: %s", src, n, native[n], lines[n-1])
				}
			}
			for _, n := range slices.Sorted(maps.Keys(ours)) {
				if ours[n] == 0 || native[n] > 0 {
					continue
				}
				// A function's closing brace: the shared return.
				if lines[n-1] == "}" {
					returns++
					continue
				}
				t.Errorf("%s:%d ran %d times in the wasm build, never natively: %s", src, n, ours[n], lines[n-1])
			}
			for n, why := range explained[p.Name] {
				if native[n] == 0 || ours[n] > 0 {
					t.Errorf("%s:%d (%s) no longer differs: natively %d, in the wasm build %d", src, n, why, native[n], ours[n])
				}
			}
			ran := 0
			for _, c := range ours {
				if c > 0 {
					ran++
				}
			}
			t.Logf("%d lines ran in both; natively also %d lines without code in the wasm build and %d explained; in the wasm build also %d closing braces of functions",
				ran-returns, noCode, len(explained[p.Name]), returns)

			// The functions: the same, at the same lines, called as often.
			ourFns := lcovFuncs(t, ourData, src)
			theirs := map[string]fn{}
			for name, f := range lcovFuncs(t, nativeData, src) {
				// llvm-cov names a static function FILE:NAME, and clang
				// for WASI calls a main without arguments __original_main.
				if _, rest, ok := strings.Cut(name, src+":"); ok {
					name = rest
				}
				if _, ok := ourFns[name]; !ok && name == "main" {
					name = "__original_main"
				}
				theirs[name] = f
			}
			if !slices.Equal(slices.Sorted(maps.Keys(theirs)), slices.Sorted(maps.Keys(ourFns))) {
				t.Fatalf("functions %v natively, %v in the wasm build", slices.Sorted(maps.Keys(theirs)), slices.Sorted(maps.Keys(ourFns)))
			}
			comparators := 0
			for name, f := range theirs {
				o := ourFns[name]
				// The function's first instruction can be past its opening
				// brace, where llvm-cov places it, when no code is there.
				if _, code := ours[f.line]; o.line != f.line && (code || o.line < f.line) {
					t.Errorf("%s: at line %d natively, %d in the wasm build", name, f.line, o.line)
				}
				// A comparator is called as often as the C library's qsort
				// calls it: glibc's and wasi-libc's (musl's) sort differently.
				if o.calls != f.calls {
					if comparator.MatchString(lines[o.line-1]) || comparator.MatchString(lines[f.line-2]) {
						comparators++
						continue
					}
					t.Errorf("%s: called %d times natively, %d in the wasm build", name, f.calls, o.calls)
				}
			}
			t.Logf("%d functions, %d comparators called otherwise by the C library's qsort", len(theirs), comparators)
		})
	}
}

// comparator matches the definition of a function that qsort calls.
var comparator = regexp.MustCompile(`^static int \w+\(const void \*\w+, const void \*\w+\)$`)

// nativeLCOV builds p natively with clang's source-based coverage, runs
// it on p's input and returns llvm-cov's lcov export.
func nativeLCOV(t *testing.T, p testprogs.CProgram, clang, profdata, llvmCov string) []byte {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, p.Name)
	command(t, "", exec.Command(clang, "-O0", "-fprofile-instr-generate", "-fcoverage-mapping", "-o", bin, p.Source))
	cmd := exec.Command(bin, p.Args...)
	cmd.Env = append(os.Environ(), "LLVM_PROFILE_FILE="+filepath.Join(dir, "run.profraw"))
	if p.Stdin != "" {
		f, err := os.Open(p.Stdin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != int(p.WantExitCode) {
		t.Fatalf("native %s: %v", p.Name, err)
	}
	if stdout.String() != p.WantStdout {
		t.Fatalf("native %s: output unlike %s.expected", p.Name, p.Name)
	}
	prof := filepath.Join(dir, "run.profdata")
	command(t, "", exec.Command(profdata, "merge", "-sparse", "-o", prof, filepath.Join(dir, "run.profraw")))
	return command(t, "", exec.Command(llvmCov, "export", "-format=lcov", "-instr-profile="+prof, bin))
}

// command runs cmd and returns its stdout, failing the test with its
// stderr if it fails.
func command(t *testing.T, dir string, cmd *exec.Cmd) []byte {
	t.Helper()
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.Bytes())
	}
	return out
}
