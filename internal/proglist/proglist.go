// Package proglist reads lists of programs: a program a line, its fields
// separated by white space, blank lines and lines whose first field starts
// with # skipped. testdata/c/programs.txt, which the tests and the bench
// suite both read, bench/kernels/programs.txt and the Debian build's
// programs.txt are such lists.
package proglist

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Each calls f with the fields of each program line of data, in order. A
// line of fewer than min fields is an error "line N: want FORM"; f's first
// error stops the reading and is returned as "line N: ERR".
func Each(data []byte, min int, form string, f func(fields []string) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for lineno := 1; sc.Scan(); lineno++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) < min {
			return fmt.Errorf("line %d: want %s", lineno, form)
		}
		if err := f(fields); err != nil {
			return fmt.Errorf("line %d: %w", lineno, err)
		}
	}
	return sc.Err()
}

// C is a program of testdata/c/programs.txt (NAME SOURCE OPT STDIN
// [ARGS...]): the module is NAME.wasm, its expected output NAME.expected
// and its exit code the number in NAME.exitcode, all beside the list.
type C struct {
	Name   string
	Source string // the C file's name
	Opt    string // the optimisation flag it was built with
	Stdin  string // the input file's name, or "" for none
	Args   []string
	// ExitCode is what NAME.exitcode records.
	ExitCode uint32
}

// ReadC reads the list of C programs in dir and each one's exit code.
func ReadC(dir string) ([]C, error) { return ReadCList(dir, "programs.txt") }

// ReadCList is ReadC for another list in dir of the same form, such as
// programs-O0.txt.
func ReadCList(dir, name string) ([]C, error) {
	var progs []C
	err := readList(dir, name, 4, "NAME SOURCE OPT STDIN [ARGS...]", func(f []string) error {
		p := C{Name: f[0], Source: f[1], Opt: f[2], Args: f[4:]}
		if f[3] != "-" {
			p.Stdin = f[3]
		}
		code, err := os.ReadFile(filepath.Join(dir, p.Name+".exitcode"))
		if err != nil {
			return err
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(code)), 10, 32)
		if err != nil {
			return fmt.Errorf("%s.exitcode: %w", p.Name, err)
		}
		p.ExitCode = uint32(n)
		progs = append(progs, p)
		return nil
	})
	return progs, err
}

// readList calls f with the fields of each program line of the list name
// in dir, which must list at least one program of min fields.
func readList(dir, name string, min int, form string, f func(fields []string) error) error {
	list := filepath.Join(dir, name)
	data, err := os.ReadFile(list)
	if err != nil {
		return err
	}
	n := 0
	err = Each(data, min, form, func(fields []string) error {
		n++
		return f(fields)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", list, err)
	}
	if n == 0 {
		return fmt.Errorf("%s lists no programs", list)
	}
	return nil
}

// Kernel is a program of bench/kernels/programs.txt (NAME SET SMALL): the
// module is NAME.wasm and its expected output NAME.expected, beside the
// list; every kernel exits 0.
type Kernel struct {
	Name string
	// Validation says the kernel is in the benchmark's validation set
	// (SET "valid"), not its training set ("train").
	Validation bool
	// Small is the size argument the tests run the kernel with; the
	// benchmark runs it without arguments.
	Small string
}

// ReadKernels reads the list of kernels in dir.
func ReadKernels(dir string) ([]Kernel, error) {
	var progs []Kernel
	err := readList(dir, "programs.txt", 3, "NAME SET SMALL", func(f []string) error {
		k := Kernel{Name: f[0], Small: f[2]}
		switch f[1] {
		case "train":
		case "valid":
			k.Validation = true
		default:
			return fmt.Errorf("set %q: want train or valid", f[1])
		}
		progs = append(progs, k)
		return nil
	})
	return progs, err
}
