#!/usr/bin/env bash
# Builds the benchmark suite's big Debian program glslang into OUT:
#
#   build.sh OUT
#
# glslang is glslangValidator, Khronos' GLSL and HLSL compiler, from
# Debian's glslang source package, linked with the SPIR-V optimiser and
# validator of Debian's spirv-tools source package: C++ with thousands of
# small and virtual functions (AST traversers, optimiser passes, analyses),
# built with clang-14 and libc++ for wasm32-wasi. The sources are fetched
# with apt-get source at pinned versions and never committed; the only
# change to them is glslang-wasi.patch (no threads). The input is a
# pipeline of five shaders that genshaders.c writes from a fixed seed.
#
# The expected output comes from Debian's own glslangValidator (the
# glslang-tools package of the same version, built by Debian with GCC and
# libstdc++): an oracle that shares no code with the WebAssembly build or
# the runtime under test.
#
# OUT receives the modules, their inputs and expected outputs, and
# programs.txt (this directory's, whose form it describes). pathprof bench
# --prepare --big runs this script and turns programs.txt into suite.json
# entries.
#
# Needs clang-14, lld-14, llvm-14, wasi-libc, libc++-14-dev-wasm32,
# libc++abi-14-dev-wasm32, libclang-rt-14-dev-wasm32, cmake, ninja-build,
# python3, spirv-headers, glslang-tools, dpkg-dev and a deb-src entry in
# APT's sources (bench/debian/build.sh adds one when run as root). Run as
# root, it installs the packages that are missing.
set -euo pipefail

if [ $# -ne 1 ]; then
	echo "usage: $0 OUT" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)

GLSLANG_VERSION=${GLSLANG_VERSION:-12.0.0-2}
SPIRV_TOOLS_VERSION=${SPIRV_TOOLS_VERSION:-2023.1-2}
# Functions per shader: enough for seconds of work in wazero.
FUNCS=${FUNCS:-40}
JOBS=${JOBS:-$(nproc)}

say() { echo "debian-big: $*" >&2; }
die() {
	echo "debian-big: $*" >&2
	exit 1
}

# --- toolchain -----------------------------------------------------------

missing=()
command -v clang++-14 >/dev/null || missing+=(clang-14)
command -v wasm-ld-14 >/dev/null || command -v wasm-ld >/dev/null || missing+=(lld-14)
command -v llvm-ar-14 >/dev/null || missing+=(llvm-14)
[ -f /usr/lib/wasm32-wasi/libc.a ] || missing+=(wasi-libc)
[ -f /usr/lib/wasm32-wasi/libc++.a ] || missing+=(libc++-14-dev-wasm32)
[ -f /usr/lib/wasm32-wasi/libc++abi.a ] || missing+=(libc++abi-14-dev-wasm32)
compgen -G "/usr/lib/llvm-14/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a" >/dev/null ||
	missing+=(libclang-rt-14-dev-wasm32)
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v python3 >/dev/null || missing+=(python3)
[ -f /usr/include/spirv/unified1/spirv.core.grammar.json ] || missing+=(spirv-headers)
command -v glslangValidator >/dev/null || missing+=(glslang-tools)
command -v dpkg-source >/dev/null || missing+=(dpkg-dev)
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		die "missing packages: ${missing[*]}; install them with: sudo apt-get install ${missing[*]}"
	fi
	say "installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

# The oracle must be the same glslang, and was linked with the same
# spirv-tools, as the WebAssembly build.
for p in glslang-tools:$GLSLANG_VERSION spirv-tools:$SPIRV_TOOLS_VERSION; do
	have=$(dpkg-query -W -f='${Version}' "${p%%:*}" 2>/dev/null || true)
	[ "$have" = "${p#*:}" ] ||
		die "${p%%:*} is ${have:-not installed}, want ${p#*:}: the expected output comes from Debian's build of the same version"
done

# --- sources -------------------------------------------------------------

if ! apt-cache showsrc glslang 2>/dev/null | grep -q '^Package:'; then
	die "APT has no source packages: run bench/debian/build.sh as root once (it adds a deb-src entry), or add one for your release's main component and run apt-get update"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# APT downloads as the _apt user where it can, which needs to read the
# directory.
chmod 755 "$work"
cd "$work"
say "fetching glslang $GLSLANG_VERSION and spirv-tools $SPIRV_TOOLS_VERSION with apt-get source"
apt-get source -qq "glslang=$GLSLANG_VERSION" "spirv-tools=$SPIRV_TOOLS_VERSION" >apt.log 2>&1 || {
	cat apt.log >&2
	die "apt-get source failed"
}
glslang_src=$work/glslang-${GLSLANG_VERSION%-*}
spirv_src=$work/spirv-tools-${SPIRV_TOOLS_VERSION%-*}
[ -d "$glslang_src" ] && [ -d "$spirv_src" ] || die "apt-get source unpacked no glslang or spirv-tools directory"
: >"$out/versions.txt"
for dsc in ./*.dsc; do
	printf '%s %s\n' "$(sed -n 's/^Source: //p' "$dsc")" "$(sed -n 's/^Version: //p' "$dsc")" >>"$out/versions.txt"
done
patch -s -d "$glslang_src" -p1 <"$here/glslang-wasi.patch"
# glslang builds SPIRV-Tools as part of its own tree when it finds it
# there, and only then links the optimiser in.
ln -s "$spirv_src" "$glslang_src/External/spirv-tools"

# --- building ------------------------------------------------------------

# SPIRV-Tools accepts only systems it knows; Linux is the nearest to WASI
# for what it asks (it reads no clock: timers are off). glslang's
# OSDependent/Unix layer uses pthread keys and a mutex, which
# wasi_pthread.c supplies for one thread. No exceptions: wasm32-wasi's
# libc++abi has none, and neither project needs them. The build
# directory is a fresh temporary one, so its path is mapped to /build in
# the assertion messages that name source files: the same sources give the
# same module wherever they are built.
cat >wasi.cmake <<EOF
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR wasm32)
set(CMAKE_C_COMPILER clang-14)
set(CMAKE_CXX_COMPILER clang++-14)
set(CMAKE_AR llvm-ar-14)
set(CMAKE_RANLIB llvm-ranlib-14)
set(CMAKE_C_COMPILER_TARGET wasm32-wasi)
set(CMAKE_CXX_COMPILER_TARGET wasm32-wasi)
set(CMAKE_SYSROOT /usr)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_EXECUTABLE_SUFFIX .wasm)
set(CMAKE_C_FLAGS_INIT "-fno-exceptions -ffile-prefix-map=$work=/build -I$here/include")
set(CMAKE_CXX_FLAGS_INIT "-fno-exceptions -ffile-prefix-map=$work=/build -I$here/include")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-L$work/lib -lc++abi")
EOF
mkdir -p lib
clang-14 --target=wasm32-wasi -O2 -Wall -Wextra -Werror -I"$here/include" -c -o lib/wasi_pthread.o "$here/wasi_pthread.c"
llvm-ar-14 rcs lib/libpthread.a lib/wasi_pthread.o

say "building glslangValidator with SPIRV-Tools for wasm32-wasi (about 270 C++ files)"
cmake -G Ninja -S "$glslang_src" -B build -DCMAKE_TOOLCHAIN_FILE="$work/wasi.cmake" \
	-DCMAKE_BUILD_TYPE=Release -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON -DBUILD_SHARED_LIBS=OFF \
	-DSKIP_GLSLANG_INSTALL=ON -DENABLE_CTEST=OFF -DBUILD_TESTING=OFF \
	-DSPIRV-Headers_SOURCE_DIR=/usr -DSPIRV_SKIP_TESTS=ON -DSPIRV_SKIP_EXECUTABLES=ON \
	-DSPIRV_WERROR=OFF -DSPIRV_ALLOW_TIMERS=OFF >cmake.log 2>&1 || {
	cat cmake.log >&2
	die "cmake failed"
}
grep -q 'optimizer enabled' cmake.log || die "glslang did not find SPIRV-Tools' optimiser"
ninja -C build -j "$JOBS" glslangValidator >ninja.log 2>&1 || {
	tail -n 40 ninja.log >&2
	die "building glslangValidator failed"
}
mkdir -p "$out/bin"
# CMake's Linux platform resets the toolchain's executable suffix, so the
# module may come out without .wasm.
bin=build/StandAlone/glslangValidator
[ -f "$bin.wasm" ] && bin=$bin.wasm
[ -f "$bin" ] || die "ninja built no $bin"
cp "$bin" "$out/bin/glslang.wasm"

# --- input and expected output -------------------------------------------

say "writing five shaders of $FUNCS functions"
clang-14 -O2 -Wall -Wextra -Werror -o genshaders "$here/genshaders.c"
mkdir -p "$out/shaders"
./genshaders "$out/shaders" "$FUNCS"

cp "$here/programs.txt" "$out/programs.txt"
# The native run sees what the WebAssembly run sees: the shaders at in/
# and a fresh working directory for the binary it writes.
args=$(awk '$1 == "glslang" { for (i = 7; i <= NF; i++) printf "%s ", $i }' "$here/programs.txt")
[ -n "$args" ] || die "programs.txt has no glslang line"
mkdir native
ln -s "$out/shaders" native/in
code=0
# shellcheck disable=SC2086 # the arguments are words of programs.txt
(cd native && glslangValidator $args) >"$out/glslang.expected" || code=$?
[ "$code" = 0 ] || die "Debian's glslangValidator exited $code on the shaders: $(grep -m1 ERROR "$out/glslang.expected" || true)"
say "glslang: $(stat -c %s "$out/bin/glslang.wasm") bytes of wasm, $(stat -c %s "$out/glslang.expected") bytes of expected output"
