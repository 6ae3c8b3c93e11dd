// Package testprogs provides the WebAssembly programs that tests decode,
// analyse and run: the C programs committed under testdata/c, Go programs
// built for wasip1 on demand and cached, and the modules of the
// WebAssembly spec test suite that ship with wazero.
//
// It is meant to be imported from tests only; every function takes the
// calling test and fails it if the program cannot be had.
package testprogs
