package main

// This file gives a program pathprof's own standard input when the user
// redirects or pipes it (pathprof profile prog.wasm < in), as a Unix tool
// is expected to, rather than empty input.

import (
	"fmt"
	"io"
	"os"
)

// stdinFile is where the program's input comes from when --stdin is not
// given; tests replace it.
var stdinFile = os.Stdin

// inherited is what a run takes from stdinFile: its bytes when it is a
// file or a pipe, read once so that every copy and every run of a command
// gets the same; none when it is a terminal (the program gets empty input,
// and noteInput says so) or /dev/null.
type inherited struct {
	read     bool
	data     []byte
	terminal bool
}

// input returns stdinFile's bytes (nil for none), reading them the first
// time.
func (in *inherited) input() ([]byte, error) {
	if in.read {
		return in.data, nil
	}
	in.read = true
	if stdinFile == nil {
		return nil, nil
	}
	fi, err := stdinFile.Stat()
	if err != nil {
		return nil, nil // closed: empty input, as before
	}
	if fi.Mode()&os.ModeCharDevice != 0 {
		// /dev/null is a device too, but an explicit empty input.
		null, err := os.Stat(os.DevNull)
		in.terminal = err != nil || !os.SameFile(fi, null)
		return nil, nil
	}
	if in.data, err = io.ReadAll(stdinFile); err != nil {
		return nil, fmt.Errorf("standard input: %w", err)
	}
	return in.data, nil
}

// noteInput says on w (nil: nothing) that the program got empty input
// because pathprof's standard input is a terminal.
func (r *runFlags) noteInput(w io.Writer) {
	if w != nil && r.stdin == "" && r.inherit.terminal {
		fmt.Fprintln(w, "pathprof: standard input is a terminal: the program gets empty input (give it with --stdin FILE or < FILE)")
	}
}
