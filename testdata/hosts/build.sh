#!/usr/bin/env bash
# Builds the programs of the tests of imports beyond WASI, regions and
# reactors:
#
#   markers.c  imports markers and helpers from a module of its own
#              ("bench"); a command
#   reactor.c  a reactor (-mexec-model=reactor): _initialize and exports;
#              reactor-noname.wasm is it without its name section
#
# The .wasm files are committed, so this only needs to run after a change
# to a source. Needs clang-14, lld-14, wasi-libc and
# libclang-rt-14-dev-wasm32, and llvm-14 for llvm-objcopy (Debian package
# names). The prefix map keeps
# this machine's directory out of the DWARF, so that rebuilds are
# byte-identical.
set -euo pipefail
cd "$(dirname "$0")"

CC=${CC:-clang-14}
FLAGS=(--target=wasm32-wasi -g -fdebug-prefix-map="$PWD"=. -Wall -Wextra -Werror -std=c11)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Compiled with -O2 and linked without it: linking with -O makes clang run
# binaryen's wasm-opt when it is installed, which drops the name section
# and the DWARF addresses.
build() { # NAME [LINK FLAGS...]
	local name=$1
	shift
	"$CC" "${FLAGS[@]}" -O2 -c -o "$tmp/$name.o" "$name.c"
	"$CC" "${FLAGS[@]}" "$@" -o "$name.wasm" "$tmp/$name.o"
}
build markers
build reactor -mexec-model=reactor
# The reactor without its name section, as stripped libraries come:
# function names then come from exports and DWARF.
llvm-objcopy-14 --remove-section=name reactor.wasm reactor-noname.wasm
for f in markers reactor reactor-noname; do
	printf '%-20s %7d bytes\n' "$f.wasm" "$(stat -c %s "$f.wasm")"
done
