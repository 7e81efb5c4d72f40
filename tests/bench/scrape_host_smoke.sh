#!/bin/bash
# Smoke test of `vaai-bench scrape` (scripts/bench/scrape-host) at tiny sizes: 2
# LUNs, one round of 3 idle scrapes, 1 s of load with scrapes, 1 s alone. It must
# exit 0 and print exactly its three lines (scrape_size_host, scrape_latency_host
# with luns=2, scrape_cost_host with rounds=1) with non-zero sizes, scrape counts
# and IOPS; and a scrape after the rounds (--dump) must be vaaid's metrics text
# for the two loaded LUNs: both volumes' READ and WRITE counts non-zero, the pool's
# capacity, the histogram's buckets. Timings are not checked. Leaves no pool file.
# Usage: scrape_host_smoke.sh VAAI_BENCH TMPDIR.
set -euo pipefail
bench="$1"
tmp="$2/bench_scrape.$$"
mkdir -p "$2"
out=$(mktemp) err=$(mktemp) dump=$(mktemp)
trap 'rm -f "$out" "$err" "$dump"; rm -rf "$tmp"' EXIT
fail() {
	echo "scrape_host_smoke: FAIL: $*" >&2
	sed 's/^/  stdout: /' "$out" >&2
	sed 's/^/  stderr: /' "$err" >&2
	exit 1
}

rc=0
"$bench" scrape --dir "$tmp" --luns 2 --rounds 1 --k 3 --runtime 1 --warmup 0.1 --gap 0.05 \
	--area 4M --dump "$dump" >"$out" 2>"$err" || rc=$?
[ "$rc" -eq 0 ] || fail "vaai-bench scrape exited $rc"
[ "$(wc -l <"$out")" -eq 3 ] || fail "expected exactly 3 lines on stdout"
n='[0-9]+'
f='[0-9]+\.[0-9]+'
grep -qE "^scrape_size_host bytes=[1-9][0-9]* lines=[1-9][0-9]*$" "$out" || fail "no scrape_size_host line"
grep -qE "^scrape_latency_host luns=2 idle_p99_ms=$f loaded_p99_ms=$f ratio=$f idle_p50_ms=$f loaded_p50_ms=$f$" "$out" ||
	fail "no scrape_latency_host line"
re="^scrape_cost_host iops_noscrape=[1-9][0-9]* iops_scraping=[1-9][0-9]* ratio=$f scrapes_idle=3 scrapes_loaded=([1-9][0-9]*) rounds=1$"
grep -qE "$re" "$out" || fail "no scrape_cost_host line with 3 idle scrapes and loaded ones"
grep -qE '^# loaded scrapes \([1-9][0-9]*\), medians, ms: total ' "$err" || fail "no breakdown of the loaded scrapes"

# the text served: vaaid's exposition of the two LUNs and the pool
grep -qx '# TYPE vaaid_commands_total counter' "$dump" || fail "the scrape has no vaaid_commands_total family"
for v in v0 v1; do
	for k in read write; do
		grep -qE "^vaaid_commands_total\{pool=\"sim\",volume=\"$v\",naa=\"[0-9a-f]{32}\",kind=\"$k\",result=\"ok\"\} [1-9][0-9]*$" "$dump" ||
			fail "the scrape has no non-zero $k count of $v"
	done
	grep -qE "^vaaid_command_latency_seconds_bucket\{pool=\"sim\",volume=\"$v\",.*le=\"\+Inf\"\} $n$" "$dump" ||
		fail "the scrape has no latency histogram of $v"
done
grep -qE '^vaaid_pool_capacity_bytes\{pool="sim"\} [1-9][0-9]*$' "$dump" || fail "the scrape has no pool capacity"
[ "$(tail -c 1 "$dump" | od -An -c | tr -d ' ')" = '\n' ] || fail "the text does not end in a newline"
[ ! -e "$tmp" ] || fail "$tmp left behind"
echo "scrape_host_smoke: ok"
sed 's/^/  /' "$out"
