#!/bin/bash
# Mutation proof of the crash suite (issue 23): build the engine with each
# deliberate bug of tests/crash/mutations/*.patch and check that the crash
# suite catches it within 1,000 crash points.
#
#   tests/crash/mutations.sh [-j N] [--points N] [--fault tear|trash|alloc] [PATCH...]
#
# How it works: the tracked files of this tree, as they are in the working
# tree, are copied to a temporary directory and built there once (release
# build: crash_suite, vaai-check); the product code carries no mutation hooks.
# First the unmutated suite runs (it must pass: else every "catch" below
# would prove nothing), then for each patch: apply it, rebuild (incremental),
# run the suite with the same seed (derived from this tree's commit, printed)
# and --check vaai-check until its first failure, record the crash point it
# failed at (points to catch = that point + 1), and reverse the patch. A
# mutation the suite does not catch within --points (default 1000), or that
# does not apply or build, fails the script. Prints one line per mutation and
# a summary; docs/crash.md has the last results. Takes a few minutes on 2
# cores (the baseline run is most of it). Needs patch(1) (build-essential has it).
set -euo pipefail

src="$(cd "$(dirname "$0")/../.." && pwd)"
jobs=2
points=1000
fault=tear
patches=()
while [ $# -gt 0 ]; do
	case "$1" in
	-j) jobs="$2"; shift 2 ;;
	--points) points="$2"; shift 2 ;;
	--fault) fault="$2"; shift 2 ;;
	-*) echo "usage: $0 [-j N] [--points N] [--fault tear|trash|alloc] [PATCH...]" >&2; exit 2 ;;
	*) patches+=("$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"); shift ;;
	esac
done
if [ ${#patches[@]} -eq 0 ]; then
	patches=("$src"/tests/crash/mutations/*.patch)
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/vaaid-mutations.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src" "$tmp/run"
git -C "$src" ls-files -z | tar -C "$src" --null -T - -cf - | tar -C "$tmp/src" -xf -
commit="$(git -C "$src" rev-parse HEAD 2>/dev/null || echo none)"

build() {
	ninja -C "$tmp/build" -j "$jobs" crash_suite vaai-check >"$tmp/build.log" 2>&1
}

# run LOG: the suite on the copy's build; its exit status
run() {
	rm -rf "$tmp/run"/*
	VAAID_TEST_TMP="$tmp/run" "$tmp/build/bin/crash_suite" --fault "$fault" --points "$points" \
		--commit "$commit" --salt 7 --no-coverage-check --check "$tmp/build/bin/vaai-check" \
		>"$1" 2>&1
}

t0=$(date +%s)
echo "mutations.sh: commit $commit, fault mode $fault, up to $points crash points each"
cmake -S "$tmp/src" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
if ! build; then
	cat "$tmp/build.log" >&2
	echo "mutations.sh: the unmutated tree does not build" >&2
	exit 1
fi
if ! run "$tmp/baseline.log"; then
	cat "$tmp/baseline.log" >&2
	echo "mutations.sh: the unmutated suite fails: no mutation can be judged" >&2
	exit 1
fi
echo "mutations.sh: unmutated: $(head -n 1 "$tmp/baseline.log" | sed 's/^crash_suite: //'), passed ($(( $(date +%s) - t0 )) s)"

missed=0
for p in "${patches[@]}"; do
	name="$(basename "$p" .patch)"
	t1=$(date +%s)
	if ! patch -d "$tmp/src" -p1 --quiet --forward <"$p"; then
		echo "mutations.sh: $name: the patch does not apply" >&2
		missed=$((missed + 1))
		continue
	fi
	if ! build; then
		cat "$tmp/build.log" >&2
		echo "mutations.sh: $name: does not build" >&2
		missed=$((missed + 1))
	elif run "$tmp/$name.log"; then
		echo "$name: NOT CAUGHT in $points crash points ($(( $(date +%s) - t1 )) s)"
		missed=$((missed + 1))
	else
		at="$(sed -n 's/^crash_suite: FAIL (seed [0-9]*, crash point \([0-9]*\)).*/\1/p' "$tmp/$name.log" | head -n 1)"
		why="$(sed -n 's/^crash_suite: FAIL ([^)]*): //p' "$tmp/$name.log" | head -n 1 | cut -c1-150)"
		if [ -z "$at" ]; then
			tail -n 5 "$tmp/$name.log" >&2
			echo "$name: the suite stopped without a verdict ($(( $(date +%s) - t1 )) s)"
			missed=$((missed + 1))
		else
			echo "$name: caught after $((at + 1)) crash points ($(( $(date +%s) - t1 )) s): $why"
		fi
	fi
	patch -d "$tmp/src" -p1 --quiet -R <"$p"
done
echo "mutations.sh: ${#patches[@]} mutations, $missed not caught; $(( $(date +%s) - t0 )) s"
[ "$missed" -eq 0 ]
