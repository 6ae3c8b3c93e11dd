#!/usr/bin/env bash
# Builds the C test programs listed in programs.txt and programs-O0.txt (or
# in the lists given as arguments) into WASI modules and records their
# expected output.
#
# The expected stdout and exit status come from a native build of the same
# source rather than from running the .wasm: the tests then check the wasm
# build against an oracle that shares no code with the runtime under test.
# The programs are written to behave identically on ILP32 and LP64.
#
# The .wasm files are committed, so this only needs to run after a change to
# a program. A list in another directory (../kernels/programs.txt) is built
# there. Needs clang-14, lld-14, wasi-libc and libclang-rt-14-dev-wasm32
# (Debian package names).
set -euo pipefail
cd "$(dirname "$0")"

CC=${CC:-clang-14}
WARN=(-Wall -Wextra -Werror -std=c11)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# build builds the programs of one list.
build() {
	while read -r name src opt stdin args; do
		case $name in '' | '#'*) continue ;; esac
		# DWARF keeps line tables for reports; the prefix map keeps this
		# machine's directory out of them, so rebuilds are byte-identical.
		# Compiled with $opt and linked without it: linking with -O makes
		# clang run binaryen's wasm-opt when it is installed, which drops
		# the name section and the DWARF addresses.
		"$CC" --target=wasm32-wasi "$opt" -g -fdebug-prefix-map="$PWD"=. \
			"${WARN[@]}" -c -o "$tmp/$name.o" "$src"
		"$CC" --target=wasm32-wasi -g -o "$name.wasm" "$tmp/$name.o"
		"$CC" "$opt" "${WARN[@]}" -o "$tmp/$name" "$src" -lm

		in=/dev/null
		[ "$stdin" = - ] || in=$stdin
		status=0
		# shellcheck disable=SC2086 # args is a word list on purpose
		"$tmp/$name" $args <"$in" >"$name.expected" || status=$?
		echo "$status" >"$name.exitcode"
		printf '%-12s %7d bytes  exit %d\n' "$name.wasm" "$(stat -c %s "$name.wasm")" "$status"
	done <"$1"
}

lists=("$@")
[ ${#lists[@]} -gt 0 ] || lists=(programs.txt programs-O0.txt)
for list in "${lists[@]}"; do
	(cd "$(dirname "$list")" && build "$(basename "$list")")
done
