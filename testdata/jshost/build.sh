#!/usr/bin/env bash
# Builds grow.c with Debian's emscripten (3.1.6: apt-get install
# emscripten) twice:
#
#   grow.js, grow.wasm     with emscripten's JavaScript glue, for node and
#                          browsers; the glue grows the memory from
#                          JavaScript (ALLOW_MEMORY_GROWTH)
#   grow-standalone.wasm   -sSTANDALONE_WASM, a WASI command that runs
#                          under pathprof with a stub for the one import
#                          it adds beyond WASI
#                          (--stub env.emscripten_notify_memory_growth)
#
# The glue is built MODULARIZE (node and pages call createGrow(Module)),
# EXIT_RUNTIME (it reports main's exit code and flushes stdout) and with
# WASM_ASYNC_COMPILATION=0: its asynchronous path takes node 20's fetch for
# a browser's. --profiling-funcs keeps the function names.
#
# It also assembles eh.wat with wabt's wat2wasm (apt-get install wabt).
# The outputs are committed, so the tests need only node and chromium;
# rebuilds are byte-identical.
set -euo pipefail
cd "$(dirname "$0")"

# Debian's emcc runs its JavaScript optimizer with node, which finds
# Debian's acorn only there when node is not Debian's own.
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
common=(-O2 --profiling-funcs -sALLOW_MEMORY_GROWTH=1 -Wall -Wextra -Werror -std=c11)
emcc "${common[@]}" -sEXIT_RUNTIME=1 -sWASM_ASYNC_COMPILATION=0 \
	-sMODULARIZE=1 -sEXPORT_NAME=createGrow -o grow.js grow.c
emcc "${common[@]}" -sSTANDALONE_WASM -o grow-standalone.wasm grow.c
wat2wasm --enable-exceptions --debug-names -o eh.wasm eh.wat
for f in grow.js grow.wasm grow-standalone.wasm eh.wasm; do
	printf '%-22s %7d bytes\n' "$f" "$(stat -c %s "$f")"
done
