#!/usr/bin/env bash
# Builds the benchmark suite's Debian C programs into OUT:
#
#   build.sh OUT
#
# bzip2, zlib's minigzip and the Lua 5.4 interpreter come from Debian
# source packages fetched with apt-get source (their sources are never
# committed), built with clang-14 for wasm32-wasi. Each is also built for
# this machine from the same sources: the native build's output is the
# expected output, an oracle that shares no code with the WebAssembly
# runtime under test.
#
# OUT receives the modules, their inputs and expected outputs, and
# programs.txt, one program a line:
#
#   NAME WASM STDIN EXPECT_STDOUT EXIT_CODE [ARGS...]
#
# with file names relative to OUT. pathprof bench --prepare runs this
# script and turns programs.txt into suite.json entries.
#
# Needs clang-14, lld-14, wasi-libc and libclang-rt-14-dev-wasm32, the
# native C library headers (libc6-dev), dpkg-dev (dpkg-source unpacks the
# packages) and a deb-src entry in APT's sources. Run as root, it installs
# what is missing and adds the deb-src entry itself.
set -euo pipefail

if [ $# -ne 1 ]; then
	echo "usage: $0 OUT" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)

CC=${CC:-clang-14}
NATIVE_CC=${NATIVE_CC:-clang-14}
# Large enough that each compressor runs for a fraction of a second or
# more under wazero, small enough to keep a benchmark run short.
TEXT_BYTES=${TEXT_BYTES:-6000000}

say() { echo "debian: $*" >&2; }
die() {
	echo "debian: $*" >&2
	exit 1
}

# --- toolchain -----------------------------------------------------------

missing=()
command -v "$CC" >/dev/null || missing+=(clang-14)
command -v wasm-ld-14 >/dev/null || command -v wasm-ld >/dev/null || missing+=(lld-14)
[ -f /usr/lib/wasm32-wasi/libc.a ] || missing+=(wasi-libc)
compgen -G "/usr/lib/llvm-14/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a" >/dev/null ||
	missing+=(libclang-rt-14-dev-wasm32)
[ -f /usr/include/stdio.h ] || missing+=(libc6-dev)
command -v dpkg-source >/dev/null || missing+=(dpkg-dev)
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		die "missing packages: ${missing[*]}; install them with: sudo apt-get install ${missing[*]}"
	fi
	say "installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

# --- sources -------------------------------------------------------------

# The deb-src entry mirrors the first deb entry of the system's sources,
# for the release this machine runs.
add_deb_src() {
	local uri codename file=/etc/apt/sources.list.d/pathprof-deb-src.sources
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || die "cannot tell the Debian release from /etc/os-release"
	# Debian's own archive, not a third party's or the security archive.
	uri=$({
		grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{for (i = 2; i <= NF; i++) print $i}'
		grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
			awk '{for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) print $i}'
	} | grep -E '/debian/?$' | head -n1 || true)
	[ -n "$uri" ] || uri=http://deb.debian.org/debian
	say "adding a deb-src entry for $codename main ($uri) in $file"
	cat >"$file" <<EOF
Types: deb-src
URIs: $uri
Suites: $codename
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	apt-get update -qq
}

if ! apt-cache showsrc bzip2 2>/dev/null | grep -q '^Package:'; then
	if [ "$(id -u)" -ne 0 ]; then
		die "APT has no source packages: add a deb-src entry for your release's main component under /etc/apt/sources.list.d and run apt-get update (as root)"
	fi
	add_deb_src
	apt-cache showsrc bzip2 2>/dev/null | grep -q '^Package:' ||
		die "APT still finds no source packages after adding a deb-src entry"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# APT downloads as the _apt user where it can, which needs to read the
# directory.
chmod 755 "$work"
cd "$work"
say "fetching bzip2, zlib and lua5.4 with apt-get source"
apt-get source -qq bzip2 zlib lua5.4 >apt.log 2>&1 || {
	cat apt.log >&2
	die "apt-get source failed"
}
srcdir() {
	local d
	d=$(find . -maxdepth 1 -type d -name "$1-*" | sort | head -n1)
	[ -n "$d" ] || die "apt-get source unpacked no $1 directory"
	echo "$work/${d#./}"
}
bzip2_src=$(srcdir bzip2)
zlib_src=$(srcdir zlib)
lua_src=$(srcdir lua5.4)
: >"$out/versions.txt"
for dsc in ./*.dsc; do
	printf '%s %s\n' "$(sed -n 's/^Source: //p' "$dsc")" "$(sed -n 's/^Version: //p' "$dsc")" >>"$out/versions.txt"
done

# --- building ------------------------------------------------------------

# DWARF keeps line tables for pathprof report; the prefix map keeps the
# temporary build directory out of them. wasi-libc lacks signals and
# process clocks unless emulated, and a few functions that wasi_stubs.c
# supplies.
WASM_FLAGS=(--target=wasm32-wasi -O2 -g -fdebug-prefix-map="$work"=/src
	-D_WASI_EMULATED_SIGNAL -D_WASI_EMULATED_PROCESS_CLOCKS
	-Wno-deprecated-declarations -I"$here/include" -include wasi_compat.h)
WASM_LIBS=("$here/wasi_stubs.c" -lwasi-emulated-signal -lwasi-emulated-process-clocks)
NATIVE_FLAGS=(-O2 -w)
mkdir -p "$out/bin" "$out/data" native

wasm() { # NAME SOURCES... [FLAGS...]
	local name=$1
	shift
	"$CC" "${WASM_FLAGS[@]}" -o "$out/bin/$name.wasm" "$@" "${WASM_LIBS[@]}"
}

say "building gentext and the input text ($TEXT_BYTES bytes)"
"$NATIVE_CC" "${NATIVE_FLAGS[@]}" -o native/gentext "$here/gentext.c"
native/gentext "$TEXT_BYTES" >"$out/data/text.txt"

say "building bzip2 ($(basename "$bzip2_src"))"
bz=()
for f in blocksort huffman crctable randtable compress decompress bzlib bzip2; do
	bz+=("$bzip2_src/$f.c")
done
wasm bzip2 "${bz[@]}" -D_FILE_OFFSET_BITS=64
"$NATIVE_CC" "${NATIVE_FLAGS[@]}" -D_FILE_OFFSET_BITS=64 -o native/bzip2 "${bz[@]}"
native/bzip2 -9 <"$out/data/text.txt" >"$out/data/text.txt.bz2"
native/bzip2 -d <"$out/data/text.txt.bz2" | cmp -s - "$out/data/text.txt" ||
	die "bzip2 does not decompress its own output back to the input"

say "building minigzip ($(basename "$zlib_src"))"
z=()
for f in adler32 crc32 deflate infback inffast inflate inftrees trees zutil \
	compress uncompr gzclose gzlib gzread gzwrite test/minigzip; do
	z+=("$zlib_src/$f.c")
done
# zlib's configure would define HAVE_UNISTD_H; without it the gz*
# functions call lseek undeclared, with the wrong type.
wasm minigzip "${z[@]}" -I"$zlib_src" -DHAVE_UNISTD_H
"$NATIVE_CC" "${NATIVE_FLAGS[@]}" -I"$zlib_src" -DHAVE_UNISTD_H -o native/minigzip "${z[@]}"
native/minigzip -9 <"$out/data/text.txt" >"$out/data/text.txt.gz"
native/minigzip -d <"$out/data/text.txt.gz" | cmp -s - "$out/data/text.txt" ||
	die "minigzip does not decompress its own output back to the input"

say "building lua ($(basename "$lua_src"))"
# Debian's luaconf.h includes a header its build generates.
mkdir -p gen
echo '#define DEB_HOST_MULTIARCH "wasm32-wasi"' >gen/lua5.4-deb-multiarch.h
lua=()
for f in lapi lcode lctype ldebug ldo ldump lfunc lgc llex lmem lobject lopcodes \
	lparser lstate lstring ltable ltm lundump lvm lzio lauxlib lbaselib lcorolib \
	ldblib liolib lmathlib loadlib loslib lstrlib ltablib lutf8lib linit lua; do
	lua+=("$lua_src/src/$f.c")
done
# wasi-libc has no setjmp, so a Lua error (and a coroutine yield, which
# Lua implements the same way) aborts: the scripts raise none and do not
# yield. The string hash seed is fixed, so table layouts, and with them
# the paths taken, are the same in every run and in the native build.
LUA_FLAGS=(-Igen -DLUA_COMPAT_5_3 '-DLUAI_THROW(L,c)=abort()' '-DLUAI_TRY(L,c,a)={a}'
	-Dluai_jmpbuf=int '-Dluai_makeseed(L)=0x2545F491u')
wasm lua "${lua[@]}" "${LUA_FLAGS[@]}"
"$NATIVE_CC" "${NATIVE_FLAGS[@]}" "${LUA_FLAGS[@]}" -o native/lua "${lua[@]}" -lm

# --- the programs --------------------------------------------------------

{
	echo "bzip2 bin/bzip2.wasm data/text.txt data/text.txt.bz2 0 -9"
	echo "bzip2-d bin/bzip2.wasm data/text.txt.bz2 data/text.txt 0 -d"
	echo "minigzip bin/minigzip.wasm data/text.txt data/text.txt.gz 0 -9"
} >"$out/programs.tmp"
mkdir -p "$out/lua"
for script in "$here"/lua/*.lua; do
	name=$(basename "$script" .lua)
	cp "$script" "$out/lua/$name.lua"
	status=0
	native/lua - <"$script" >"$out/lua/$name.expected" || status=$?
	[ "$status" -eq 0 ] || die "lua/$name.lua exits with status $status natively; the scripts must run without errors"
	echo "lua-$name bin/lua.wasm lua/$name.lua lua/$name.expected 0 -" >>"$out/programs.tmp"
done
mv "$out/programs.tmp" "$out/programs.txt"
say "built $(wc -l <"$out/programs.txt") programs into $out"
