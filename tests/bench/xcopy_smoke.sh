#!/bin/bash
# ctest bench/xcopy_smoke: `vaai-bench xcopy` on a 64 MiB range, one repetition.
# Checks that it exits 0, prints each of its three result lines exactly once in
# the documented format (docs/performance.md), that the aligned copy moved no
# data bytes, and that every copy was verified; then that a copy corrupted on
# purpose (--inject-mismatch) makes it exit non-zero naming the mismatch, i.e.
# that the verification can fail.
# Usage: xcopy_smoke.sh VAAI_BENCH TMPDIR
set -euo pipefail
BENCH=${1:?usage: xcopy_smoke.sh VAAI_BENCH TMPDIR}
TMP=${2:?usage: xcopy_smoke.sh VAAI_BENCH TMPDIR}
mkdir -p "$TMP"
DIR=$TMP/xcopy-smoke.$$
ERR=$TMP/xcopy-smoke.$$.err
trap 'rm -rf "$DIR" "$ERR"' EXIT
fail() { echo "xcopy_smoke: FAIL: $*" >&2; [ -s "$ERR" ] && sed 's/^/  | /' "$ERR" >&2; exit 1; }
RUN=("$BENCH" xcopy --dir "$DIR" --size 64M --reps 1 --lat-reps 3 --samples 16 --settle 0)

out=$("${RUN[@]}" 2>"$ERR") || fail "vaai-bench xcopy exited $?"
echo "$out"
N='[0-9]+' R='[0-9]+(\.[0-9]+)?'
one() { # one REGEX: exactly one stdout line matches it
	[ "$(grep -cE "^$1\$" <<<"$out")" = 1 ] || fail "expected one line matching: $1"
}
one "xcopy_8g_16m_segments speedup_vs_host_copy=$R bytes_moved=$N xcopy_s=$R host_copy_s=$R size_mib=64 reps=1"
one "xcopy_240m_command_latency_us=$N median_of=3 min_us=$N max_us=$N"
one "first_write_into_clone latency_ratio_vs_overwrite=$R clone_write_us=$N overwrite_us=$N samples=16 backing=sparse journal=file"
[ "$(wc -l <<<"$out")" = 3 ] || fail "expected exactly 3 lines on stdout"
# Source and destination offsets are extent-aligned: the copy shares, no data byte moves.
grep -qE ' bytes_moved=0 ' <<<"$out" || fail "an extent-aligned copy moved data bytes"
for what in "EXTENDED COPY destination" "host copy destination" "240 MiB EXTENDED COPY destination"; do
	grep -q "^# verified $what: 64 MiB compared\|^# verified $what: 240 MiB compared" "$ERR" ||
		fail "no verification of the $what"
done
grep -q "^# pool invariant checks (vpool_verify): consistent" "$ERR" || fail "no pool invariant check"

# The verification must be able to fail: a destination corrupted after the copy.
set +e
"${RUN[@]}" --inject-mismatch >/dev/null 2>"$ERR"
rc=$?
set -e
[ $rc -ne 0 ] || fail "--inject-mismatch: a corrupted copy was not detected (exit 0)"
grep -q "MISMATCH: EXTENDED COPY destination" "$ERR" || fail "--inject-mismatch: exit $rc without naming the mismatch"
echo "xcopy_smoke: ok (a corrupted copy exits $rc)"
