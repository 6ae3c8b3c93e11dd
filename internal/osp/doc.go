// Package osp is online subpath profiling: it finds the hot sequences of
// basic blocks of a WebAssembly run — subpaths of fixed lengths that cross
// calls, returns and loop iterations — by sampling them, with the
// profiler's memory bounded, and scores such samples against exact counts
// of every subpath of the same deterministic run.
//
// Instrument puts a countdown of block entries into the program: when it
// runs out, a recorder added to the program records the next 2^n blocks
// (n the longest length asked for) into an area of the program's memory
// that the program cannot see, and Go hands subpaths of every length from
// each sample to a HotList, counting samples (Gibbons and Matias) of the
// subpaths of each length whose estimates scale back to frequencies. Skips
// are geometric, so every block entry is equally likely to start a sample.
// Program.Sample makes a Profile; Program.Trace counts every subpath
// exactly (Exact), and ScoreProfile compares the two. docs/osp.md describes
// the method, the file format and the measured results.
package osp
