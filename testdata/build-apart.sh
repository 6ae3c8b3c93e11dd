#!/usr/bin/env bash
# Builds the C programs kept apart from testdata/c, whose programs every
# runner and bench test iterates over; each serves the tests of one
# feature:
#
#   spin/spin.c        the loop-bound program of the interrupt and timeout tests
#   spew/spew.c        the tests of the copies' output streams
#   lsdir/lsdir.c      the tests of P3's copies of writable mounts
#   hostile/hostile.c  a module whose DWARF names source files outside the
#                      directories reports may read
#
# The .wasm files are committed, so this only needs to run after a change
# to a source: `testdata/build-apart.sh [NAME...]` (default: all). Needs
# clang-14, lld-14, wasi-libc and libclang-rt-14-dev-wasm32 (Debian package
# names). The prefix map keeps this machine's directory out of the DWARF,
# so that rebuilds are byte-identical; the paths hostile.c names stay as
# written.
set -euo pipefail
cd "$(dirname "$0")"

CC=${CC:-clang-14}
declare -A opt=([spin]=-O2 [spew]=-O2 [lsdir]=-O2 [hostile]=-O1)
names=("$@")
((${#names[@]})) || names=(spin spew lsdir hostile)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Compiled with the program's -O and linked without it: linking with -O
# makes clang run binaryen's wasm-opt when it is installed, which drops
# the name section and the DWARF addresses.
for n in "${names[@]}"; do
	[ -n "${opt[$n]:-}" ] || { echo "build-apart.sh: no program $n" >&2; exit 2; }
	(cd "$n" && "$CC" --target=wasm32-wasi "${opt[$n]}" -g -fdebug-prefix-map="$PWD"=. \
		-Wall -Wextra -Werror -std=c11 -c -o "$tmp/$n.o" "$n.c" &&
		"$CC" --target=wasm32-wasi -g -o "$n.wasm" "$tmp/$n.o")
	printf '%-12s %7d bytes\n' "$n.wasm" "$(stat -c %s "$n/$n.wasm")"
done
