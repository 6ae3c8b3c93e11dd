#!/usr/bin/env bash
# Builds spin.wasm, the loop-bound program of the interrupt and timeout
# tests (see spin.c). Kept apart from testdata/c, whose programs every
# runner and bench test iterates over.
#
# spin.wasm is committed, so this only needs to run after a change to
# spin.c. Needs clang-14, lld-14, wasi-libc and libclang-rt-14-dev-wasm32
# (Debian package names).
set -euo pipefail
cd "$(dirname "$0")"

CC=${CC:-clang-14}
"$CC" --target=wasm32-wasi -O2 -g -fdebug-prefix-map="$PWD"=. \
	-Wall -Wextra -Werror -std=c11 -o spin.wasm spin.c
printf '%-12s %7d bytes\n' spin.wasm "$(stat -c %s spin.wasm)"
