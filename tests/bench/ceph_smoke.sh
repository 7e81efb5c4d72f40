#!/bin/bash
# ctest ceph/bench_smoke (fixture ceph: CEPH_CONF names the test cluster):
# scripts/bench/ceph-engine's two benchmarks at tiny sizes. `vaai-bench engine
# --rbd rbd` (64 MiB volumes, 1 s a side, no pauses) must print its three
# rbd_* lines exactly once each in the documented format (fio_rbd_iops: fio's
# rbd engine ran); `vaai-bench xcopy --rbd rbd` (64 MiB) the rbd_xcopy_1g line
# with bytes_moved=0 (extents shared: nothing moved in Ceph) and every copy
# verified; both leave no image behind. (That the verification can fail is
# bench/xcopy_smoke's --inject-mismatch, the same code on a pool file; left out
# here to stay under 20 s.)
# Usage: ceph_smoke.sh VAAI_BENCH
set -euo pipefail
BENCH=${1:?usage: ceph_smoke.sh VAAI_BENCH}
: "${CEPH_CONF:?ceph_smoke.sh needs CEPH_CONF (the ceph fixture)}"
ERR=$(mktemp /tmp/ceph-bench-smoke.XXXXXX)
trap 'rm -f "$ERR"' EXIT
fail() { echo "ceph_smoke: FAIL: $*" >&2; [ -s "$ERR" ] && sed 's/^/  | /' "$ERR" >&2; exit 1; }
N='[0-9]+' R='[0-9]+(\.[0-9]+)?'
one() { # one REGEX: exactly one stdout line matches it
	[ "$(grep -cE "^$1\$" <<<"$out")" = 1 ] || fail "expected one line matching: $1 in:
$out"
}
no_images() {
	if rbd ls rbd | grep -q '^vaai-bench-'; then fail "$1 left an image: $(rbd ls rbd | tr '\n' ' ')"; fi
}

out=$("$BENCH" engine --rbd rbd --size 64M --alloc-size 64M --runtime 1 --settle 0 2>"$ERR") ||
	fail "vaai-bench engine --rbd exited $?"
echo "$out"
for p in randwrite_4k randread_4k alloc_write_4k; do
	one "rbd_${p}_qd32 engine_iops=$N fio_rbd_iops=$N ratio=$R"
done
[ "$(wc -l <<<"$out")" = 3 ] || fail "expected exactly 3 lines from vaai-bench engine --rbd"
grep -q -- "--ioengine=rbd" "$ERR" || fail "fio did not run with --ioengine=rbd"
no_images "vaai-bench engine --rbd"

XC=("$BENCH" xcopy --rbd rbd --size 64M --reps 1 --lat-reps 2 --samples 8 --settle 0)
out=$("${XC[@]}" 2>"$ERR") || fail "vaai-bench xcopy --rbd exited $?"
echo "$out"
one "rbd_xcopy_1g xcopy_s=$R readwrite_s=$R ratio=$N size_mib=64 bytes_moved=0"
for what in "EXTENDED COPY destination" "host copy destination"; do
	grep -q "^# verified $what: 64 MiB compared" "$ERR" || fail "no verification of the $what"
done
no_images "vaai-bench xcopy --rbd"

echo "ceph_smoke: OK"
