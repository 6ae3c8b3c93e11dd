#!/usr/bin/env bash
# Builds spew.wasm, the program of the tests of the copies' output streams
# (see spew.c). Kept apart from testdata/c, whose programs every
# runner and bench test iterates over.
#
# spew.wasm is committed, so this only needs to run after a change to
# spew.c. Needs clang-14, lld-14, wasi-libc and libclang-rt-14-dev-wasm32
# (Debian package names).
set -euo pipefail
cd "$(dirname "$0")"

CC=${CC:-clang-14}
"$CC" --target=wasm32-wasi -O2 -g -fdebug-prefix-map="$PWD"=. \
	-Wall -Wextra -Werror -std=c11 -o spew.wasm spew.c
printf '%-12s %7d bytes\n' spew.wasm "$(stat -c %s spew.wasm)"
