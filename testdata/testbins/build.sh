#!/usr/bin/env bash
# Builds the test binaries that pathprof test's tests run, beside their
# sources: shapes.wasm, a Rust libtest harness (Debian's rustc and
# libstd-rust-dev-wasm32), and stack.wasm, a GoogleTest binary (clang-14,
# lld-14, wasi-libc, libc++-14-dev-wasm32, libc++abi-14-dev-wasm32,
# libclang-rt-14-dev-wasm32 and googletest's sources).
#
# The .wasm files are committed, so this only needs to run after a change
# to a source; rebuilds are byte-identical.
set -euo pipefail
cd "$(dirname "$0")"

# Rust: std's DWARF alone would be ten megabytes; the name section stays.
/usr/bin/rustc --edition 2021 --test --target wasm32-wasi -C opt-level=1 -C strip=debuginfo \
	--remap-path-prefix="$PWD"=. -o shapes.wasm shapes.rs
printf '%-12s %7d bytes\n' shapes.wasm "$(stat -c %s shapes.wasm)"

# GoogleTest: googletest's own sources (Debian's googletest package)
# built with the test, without threads, exceptions or death tests, which
# WASI has not; DWARF for stack.cc alone.
G=/usr/src/googletest/googletest
CXX=(clang-14 --target=wasm32-wasi -O1 -std=c++17 -fno-exceptions
	-DGTEST_HAS_PTHREAD=0 -DGTEST_HAS_EXCEPTIONS=0 -DGTEST_HAS_STREAM_REDIRECTION=0
	-D_WASI_EMULATED_SIGNAL -D_WASI_EMULATED_PROCESS_CLOCKS -I"$G/include" -I"$G")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${CXX[@]}" -c -o "$tmp/gtest-all.o" "$G/src/gtest-all.cc"
"${CXX[@]}" -c -o "$tmp/gtest_main.o" "$G/src/gtest_main.cc"
"${CXX[@]}" -g -fdebug-prefix-map="$PWD"=. -Wall -Wextra -Werror -c -o "$tmp/stack.o" stack.cc
# Linked without -O: with it clang runs binaryen's wasm-opt when one is
# on PATH, which drops the name section and rewrites the code.
clang-14 --target=wasm32-wasi -o stack.wasm "$tmp/stack.o" "$tmp/gtest-all.o" "$tmp/gtest_main.o" \
	-lc++ -lc++abi -lwasi-emulated-signal -lwasi-emulated-process-clocks
printf '%-12s %7d bytes\n' stack.wasm "$(stat -c %s stack.wasm)"
