#!/bin/bash
# Smoke test of `vaai-bench mixed` (scripts/bench/counters-exact) for 3 s at
# queue depth 8: two co-visible LUNs under a random mix of every command kind
# the counters tell apart; each LUN's counters must equal the generator's own
# counts key by key (docs/observability.md, "Counters exact under load"). It
# must exit 0, print exactly its one result line with mismatches=0 and a
# non-zero command count, say that every answer was the expected one, and leave
# no pool file behind. Usage: counters_exact_smoke.sh VAAI_BENCH TMPDIR.
set -euo pipefail
bench="$1"
tmp="$2/bench_mixed.$$"
mkdir -p "$2"
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"; rm -rf "$tmp"' EXIT
fail() {
	echo "counters_exact_smoke: FAIL: $*" >&2
	sed 's/^/  stdout: /' "$out" >&2
	grep -v '^# LUN' "$err" | sed 's/^/  stderr: /' >&2
	exit 1
}

rc=0
"$bench" mixed --dir "$tmp" --runtime 3 --qd 8 --seed 1 >"$out" 2>"$err" || rc=$?
[ "$rc" -eq 0 ] || fail "vaai-bench mixed exited $rc"
[ "$(wc -l <"$out")" -eq 1 ] || fail "expected exactly 1 line on stdout"
re='^counters_exact_mixed runtime_s=3 commands=([0-9]+) luns=2 mismatches=0$'
grep -qE "$re" "$out" || fail "no line matching $re"
n=$(sed -nE "s/$re/\1/p" "$out")
[ "$n" -gt 0 ] || fail "no commands"
grep -qE '^# [0-9]+ counters compared, 0 mismatches; 0 unexpected answers$' "$err" ||
	fail "no '# N counters compared, 0 mismatches; 0 unexpected answers' line"
[ ! -e "$tmp" ] || fail "$tmp left behind"
echo "counters_exact_smoke: ok"
sed 's/^/  /' "$out"
