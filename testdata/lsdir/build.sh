#!/usr/bin/env bash
# Builds lsdir.wasm, the program of the tests of P3's copies of writable mounts
# (see lsdir.c). Kept apart from testdata/c, whose programs every
# runner and bench test iterates over.
#
# lsdir.wasm is committed, so this only needs to run after a change to
# lsdir.c. Needs clang-14, lld-14, wasi-libc and libclang-rt-14-dev-wasm32
# (Debian package names).
set -euo pipefail
cd "$(dirname "$0")"

CC=${CC:-clang-14}
"$CC" --target=wasm32-wasi -O2 -g -fdebug-prefix-map="$PWD"=. \
	-Wall -Wextra -Werror -std=c11 -o lsdir.wasm lsdir.c
printf '%-12s %7d bytes\n' lsdir.wasm "$(stat -c %s lsdir.wasm)"
