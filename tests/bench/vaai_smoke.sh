#!/bin/bash
# Smoke test of `vaai-bench vaai` (scripts/bench/vaai) at tiny sizes and a 2 s
# runtime: it must exit 0 (every check of every phase passed: commands GOOD,
# zeroed volumes map nothing, pool used dropped by what was mapped, reads give
# zeros / the data CAW wrote, the contended counter equals the successes) and
# print exactly the five result lines, each once, in their format, with
# non-zero rates. Usage: vaai_smoke.sh VAAI_BENCH TMPDIR. fio is a dependency
# (scripts/install-deps): without it the test fails.
set -euo pipefail
bench="$1"
tmp="$2/bench_vaai.$$"
fio="${FIO:-/usr/bin/fio}"
[ -x "$fio" ] || { echo "vaai_smoke: $fio not found (scripts/install-deps installs fio)"; exit 1; }
mkdir -p "$2"
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"; rm -rf "$tmp"' EXIT
fail() { echo "vaai_smoke: FAIL: $*" >&2; sed 's/^/  stdout: /' "$out" >&2; sed 's/^/  stderr: /' "$err" >&2; exit 1; }

rc=0
"$bench" vaai --dir "$tmp" --fio "$fio" --ws-size 64M --unmap-size 128M --caw-size 16M \
	--runtime 2 >"$out" 2>"$err" || rc=$?
[ "$rc" -eq 0 ] || fail "vaai-bench vaai exited $rc"

N='[0-9]+' R='[0-9]+\.[0-9]+'
patterns=(
	"^caw_distinct_qd32 caw_ops=$N fio_dsync_write_iops=$N ratio=$R\$"
	"^caw_p99_us=$N\$"
	"^caw_contended_8way_ops_s=$N\$"
	"^write_same_zero_100g_s=$R mapped_gib=0\.0625\$"
	"^unmap_256g_s=$R mapped_gib=0\.125\$"
)
[ "$(wc -l <"$out")" -eq ${#patterns[@]} ] || fail "expected exactly ${#patterns[@]} lines on stdout"
for p in "${patterns[@]}"; do
	[ "$(grep -cE "$p" "$out")" -eq 1 ] || fail "no single line matching $p"
done
# rates must be positive, and the ratio must be caw_ops / fio (2 decimals)
read -r caw fio_iops ratio < <(sed -nE "s/^caw_distinct_qd32 caw_ops=($N) fio_dsync_write_iops=($N) ratio=($R)\$/\1 \2 \3/p" "$out")
[ "$caw" -gt 0 ] && [ "$fio_iops" -gt 0 ] || fail "zero CAW or fio rate"
awk -v c="$caw" -v f="$fio_iops" -v r="$ratio" 'BEGIN { d = c / f - r; exit !(d < 0.011 && d > -0.011) }' ||
	fail "ratio $ratio is not $caw / $fio_iops"
[ "$(sed -nE "s/^caw_contended_8way_ops_s=($N)\$/\1/p" "$out")" -gt 0 ] || fail "zero contended rate"
[ "$(sed -nE "s/^caw_p99_us=($N)\$/\1/p" "$out")" -gt 0 ] || fail "zero p99"
for phase in caw ws unmap; do
	grep -q "^# $phase: checked: " "$err" || fail "no '# $phase: checked:' progress line"
done
[ ! -e "$tmp" ] || fail "$tmp left behind"
echo "vaai_smoke: ok"
sed 's/^/  /' "$out"
