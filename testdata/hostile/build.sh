#!/usr/bin/env bash
# Builds hostile.wasm, the module whose DWARF names source files outside
# the directories reports may read (see hostile.c). Kept apart from
# testdata/c, whose programs every runner and bench test iterates over.
#
# hostile.wasm is committed, so this only needs to run after a change to
# hostile.c. Needs clang-14, lld-14, wasi-libc and libclang-rt-14-dev-wasm32
# (Debian package names).
set -euo pipefail
cd "$(dirname "$0")"

CC=${CC:-clang-14}
# The prefix map keeps this machine's directory out of the DWARF, so that
# rebuilds are byte-identical; the paths hostile.c names stay as written.
"$CC" --target=wasm32-wasi -O1 -g -fdebug-prefix-map="$PWD"=. \
	-Wall -Wextra -Werror -std=c11 -o hostile.wasm hostile.c
printf '%-12s %7d bytes\n' hostile.wasm "$(stat -c %s hostile.wasm)"
