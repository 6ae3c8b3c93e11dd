#!/usr/bin/env bash
# Builds the benchmark kernels listed in programs.txt into WASI modules and
# records their expected output from a native build of the same source (an
# oracle that shares no code with the runtime under test): NAME.expected at
# the default size, which the benchmark runs, and NAME.small.expected at
# the size SMALL, which the tests run.
#
# The .wasm files are committed, so pathprof bench --prepare copies them
# and this only needs to run after a change to a kernel. Needs clang-14,
# lld-14, wasi-libc and libclang-rt-14-dev-wasm32 (Debian package names).
set -euo pipefail
cd "$(dirname "$0")"

CC=${CC:-clang-14}
WARN=(-Wall -Wextra -Werror -std=gnu11)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

while read -r name set small; do
	case $name in '' | '#'*) continue ;; esac
	# DWARF keeps line tables for reports; the prefix map keeps this
	# machine's directory out of them, so rebuilds are byte-identical.
	# Linking with -O makes clang run binaryen's wasm-opt when it is
	# installed; the committed kernels were built so (no name section, so
	# names come from DWARF), and rebuilding them byte for byte needs it.
	"$CC" --target=wasm32-wasi -O2 -g -fdebug-prefix-map="$PWD"=. \
		"${WARN[@]}" -o "$name.wasm" "$name.c"
	"$CC" -O2 "${WARN[@]}" -o "$tmp/$name" "$name.c" -lm
	"$tmp/$name" >"$name.expected"
	"$tmp/$name" "$small" >"$name.small.expected"
	printf '%-14s %7d bytes  %s  %s\n' "$name.wasm" "$(stat -c %s "$name.wasm")" "$set" "$(head -c 70 "$name.expected")"
done <programs.txt
