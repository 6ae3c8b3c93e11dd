#!/usr/bin/env bash
# Digests of every profile and every instrumented copy that pathprof makes
# of the test programs and the bench suite's quick set, with SBL, PBL and
# P3 at k = 2, 4, 8: everything but timings, dates and file paths. Run it
# with two builds and compare the outputs to show that a change altered no
# result.
#
#   scripts/digests.sh PATHPROF OUT [SUITE]
#
# PATHPROF is a built pathprof; OUT receives one line per profile and per
# instrumented copy; SUITE is the bench suite directory (default: the one
# `pathprof bench --prepare --no-debian` makes, prepared here if missing).
# PROGRAMS and CONFIGS (STRATEGY:K words) narrow the run.
set -euo pipefail
pp=$(realpath "$1")
out=$2
suite=${3:-$HOME/.cache/pathprof/bench-suite}
[ -f "$suite/suite.json" ] || "$pp" bench --prepare --no-debian --suite "$suite"
suite=$(realpath "$suite")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

programs=${PROGRAMS:-"calc vm vm-O0 sort wordfreq records grid hello gofmt sort.test strconv.test"}
configs=${CONFIGS:-"sbl:1 pbl:2 pbl:4 pbl:8 p3:2 p3:4 p3:8"}

# normalize prints a profile or a manifest as canonical JSON without its
# timings and the module's file path.
normalize() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d.get("module", {}).pop("path", None)
for r in d.get("runs", []):
    r.pop("seconds", None)
print(json.dumps(d, sort_keys=True, separators=(",", ":")))
PY
}

# args prints, one per line, the profile flags and arguments of a program
# of the suite.
args() {
	python3 - "$suite" "$1" "$work" <<'PY'
import json, os, sys, tempfile
suite, name, work = sys.argv[1:]
m = json.load(open(os.path.join(suite, "suite.json")))
p = next(p for p in m["programs"] if p["name"] == name)
out = []
if p.get("stdin"):
    out += ["--stdin", os.path.join(suite, p["stdin"])]
for e in p.get("env", []):
    out += ["--env", e]
for mt in p.get("mounts", []):
    if mt.startswith("@tmp:"):
        mt = tempfile.mkdtemp(dir=work) + mt[4:]
    if mt.endswith(":ro"):
        mt = mt[:-3]
    out += ["--dir", mt]
out.append(os.path.join(suite, p["wasm"]))
out.append("--")
out += p.get("args", [])
print("\n".join(out))
PY
}

: >"$out"
for name in $programs; do
	mapfile -t a < <(args "$name")
	module=${a[-1]}
	for i in "${!a[@]}"; do [ "${a[$i]}" = -- ] && module=${a[$((i - 1))]}; done
	for c in $configs; do
		s=${c%:*} k=${c#*:}
		flags=(--strategy "$s")
		[ "$s" = sbl ] || flags+=(--copies "$k")
		prof="$work/$name-$s-$k.json"
		rc=0
		(cd "$work" && "$pp" profile -q --cache "" "${flags[@]}" -o "$prof" "${a[@]}" >/dev/null 2>"$work/err") || rc=$?
		d=$(normalize "$prof" | sha256sum | cut -c1-64)
		echo "profile $name $s k=$k exit=$rc $d" | tee -a "$out"
		dir="$work/inst-$name-$s-$k"
		"$pp" instrument "${flags[@]}" -o "$dir" "$module" >/dev/null
		for f in "$dir"/copy-*.wasm; do
			echo "copy $name $s k=$k $(basename "$f") $(sha256sum <"$f" | cut -c1-64)" | tee -a "$out"
		done
		echo "manifest $name $s k=$k $(normalize "$dir/manifest.json" | sha256sum | cut -c1-64)" | tee -a "$out"
		rm -rf "$dir" "$prof"
	done
done
