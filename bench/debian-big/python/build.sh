#!/usr/bin/env bash
# Builds the big Debian program python into OUT:
#
#   build.sh OUT
#
# python is CPython 3.11, the interpreter of Debian's python3.11 source
# package, built for wasm32-wasi the way its upstream builds it there
# (Tools/wasm: that directory's config.site, configure
# --host=wasm32-unknown-wasi, every C module of the standard library that
# builds linked in, since WASI loads no shared objects) with clang-14 and
# wasi-libc. C with thousands of functions: the bytecode interpreter, the
# PEG parser and compiler, the object types behind their slot tables, and
# the C modules (json, re, pickle, decimal, unicodedata, ...). The source
# is fetched with apt-get source at a pinned version and never committed.
# Debian's patches are not applied: they adapt the layout and build of
# Debian's own packages through a configure that Debian regenerates, and
# backport security fixes; the WebAssembly build is upstream 3.11.2 as the
# source package holds it, with upstream's configure. The input is
# bench.py (this directory), run against the same source's standard
# library.
#
# The expected output comes from Debian's own /usr/bin/python3.11 (the
# python3.11 package, built by Debian with GCC) of the same upstream
# version: an oracle that shares no compiled code with the WebAssembly
# build or the runtime under test. The script runs it twice, with two hash
# seeds, and refuses an input whose output depends on the seed.
#
# OUT receives the module, the standard library, the input and the
# expected output, and programs.txt (this directory's, whose form it
# describes). pathprof bench --prepare --big runs this script and turns
# programs.txt into suite.json entries.
#
# Needs clang-14, lld-14, llvm-14, wasi-libc, libclang-rt-14-dev-wasm32,
# make, python3.11, dpkg-dev and a deb-src entry in APT's sources
# (bench/debian/build.sh adds one when run as root). Run as root, it
# installs the packages that are missing.
set -euo pipefail

if [ $# -ne 1 ]; then
	echo "usage: $0 OUT" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)

PYTHON_VERSION=${PYTHON_VERSION:-3.11.2-6+deb12u8}
JOBS=${JOBS:-$(nproc)}
# Debian's interpreter, never another one earlier on PATH.
native=/usr/bin/python3.11

say() { echo "debian-big python: $*" >&2; }
die() {
	echo "debian-big python: $*" >&2
	exit 1
}

# --- toolchain -----------------------------------------------------------

missing=()
command -v clang-14 >/dev/null || missing+=(clang-14)
command -v wasm-ld-14 >/dev/null || command -v wasm-ld >/dev/null || missing+=(lld-14)
command -v llvm-ar-14 >/dev/null || missing+=(llvm-14)
[ -f /usr/lib/wasm32-wasi/libc.a ] || missing+=(wasi-libc)
compgen -G "/usr/lib/llvm-14/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a" >/dev/null ||
	missing+=(libclang-rt-14-dev-wasm32)
command -v make >/dev/null || missing+=(make)
[ -x "$native" ] || missing+=(python3.11)
command -v dpkg-source >/dev/null || missing+=(dpkg-dev)
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		die "missing packages: ${missing[*]}; install them with: sudo apt-get install ${missing[*]}"
	fi
	say "installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

# The oracle must be the same upstream version; Debian's revisions of it
# differ in backported security fixes, which bench.py does not reach.
have=$(dpkg-query -W -f='${Version}' python3.11-minimal 2>/dev/null || true)
[ "${have%%-*}" = "${PYTHON_VERSION%%-*}" ] ||
	die "python3.11-minimal is ${have:-not installed}, want upstream ${PYTHON_VERSION%%-*}: the expected output comes from Debian's build of the same version"

# --- source --------------------------------------------------------------

if ! apt-cache showsrc python3.11 2>/dev/null | grep -q '^Package:'; then
	die "APT has no source packages: run bench/debian/build.sh as root once (it adds a deb-src entry), or add one for your release's main component and run apt-get update"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# APT downloads as the _apt user where it can, which needs to read the
# directory.
chmod 755 "$work"
cd "$work"
say "fetching python3.11 $PYTHON_VERSION with apt-get source"
apt-get source -qq --download-only "python3.11=$PYTHON_VERSION" >apt.log 2>&1 || {
	cat apt.log >&2
	die "apt-get source failed"
}
dpkg-source --skip-patches -x ./python3.11_*.dsc src >dpkg-source.log 2>&1 || {
	cat dpkg-source.log >&2
	die "dpkg-source failed"
}
src=$work/src
printf 'python3.11 %s (upstream sources, without Debian patches)\nnative python3.11-minimal %s\n' "$PYTHON_VERSION" "$have" >"$out/versions.txt"

# --- building ------------------------------------------------------------

# As Tools/wasm/wasi-env sets it up for the WASI SDK, with Debian's
# clang-14 and wasi-libc; pkg-config is kept from the host's libraries,
# whose modules (zlib, _lzma, _uuid, ...) have no wasm32 build here.
# --disable-test-modules: the interpreter's own test extensions, which
# only its test suite imports.
say "configuring CPython for wasm32-wasi"
mkdir build
(
	cd build
	export CONFIG_SITE=$src/Tools/wasm/config.site-wasm32-wasi
	export CC="clang-14 --target=wasm32-wasi" CPP="clang-14 --target=wasm32-wasi -E" CXX="clang++-14 --target=wasm32-wasi"
	# The module names no temporary directory: __FILE__s are mapped to
	# /build, and configure is run by a relative path, so the source
	# directory getpath carries (VPATH) is ../src.
	export CFLAGS="-ffile-prefix-map=$work=/build"
	export AR=llvm-ar-14 RANLIB=llvm-ranlib-14
	export PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=/nonexistent
	../src/configure -C --host=wasm32-unknown-wasi --build="$("$src/config.guess")" \
		--with-build-python="$native" --disable-test-modules >../configure.log 2>&1
) || {
	tail -n 40 configure.log >&2
	die "configure failed"
}
say "building python.wasm (about 200 C files)"
make -C build -j "$JOBS" python.wasm >make.log 2>&1 || {
	tail -n 40 make.log >&2
	die "building python.wasm failed"
}
mkdir -p "$out/bin"
# Without DWARF (configure's -g), as Debian ships its binaries; the name
# section stays.
llvm-objcopy-14 --strip-debug build/python.wasm "$out/bin/python.wasm"

# --- standard library, input and expected output -------------------------

# The interpreter finds its library at its prefix, /usr/local; the tests
# of the library stay out. lib-dynload, where an installed interpreter
# keeps its shared modules, is empty: WASI has all of them linked in, but
# the interpreter looks for the directory at start.
mkdir -p "$out/lib/lib-dynload"
tar -C "$src/Lib" --exclude=./test -cf - . | tar -C "$out/lib" -xf -
mkdir -p "$out/in"
cp "$here/bench.py" "$out/in/bench.py"
cp "$here/programs.txt" "$out/programs.txt"

args=$(awk '$1 == "python" { for (i = 7; i <= NF; i++) printf "%s ", $i }' "$here/programs.txt")
[ -n "$args" ] || die "programs.txt has no python line"
mkdir native
ln -s "$out/in" native/in
for seed in 0 1; do
	code=0
	# shellcheck disable=SC2086 # the arguments are words of programs.txt
	(cd native && env -i PATH=/usr/bin:/bin PYTHONHASHSEED=$seed "$native" ${args//\/in\//in\/}) >"native/out.$seed" || code=$?
	[ "$code" = 0 ] || die "Debian's python3.11 exited $code on bench.py"
done
cmp -s native/out.0 native/out.1 || die "bench.py's output depends on the hash seed"
cp native/out.0 "$out/python.expected"
say "python: $(stat -c %s "$out/bin/python.wasm") bytes of wasm, $(stat -c %s "$out/python.expected") bytes of expected output"
