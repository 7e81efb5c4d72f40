#!/bin/bash
# Guest side of scripts/bench/scrape (issue 25's goal: the Prometheus endpoint's
# scrape latency p99 under full data-path load at most 3x its idle p99). vaaid
# serves /metrics on 127.0.0.1:9612 (scripts/vm/guest-start-services). Makes
# LUNS LUNs (default 8) of 2 GiB, writes each one's first AREA (default 64M;
# fio's random I/O stays there: reads of never-written thin space would cost
# nothing), then BLOCKS (default 3) rounds of tests/vm/metrics_load.py round on
# all their sd disks (idle scrapes; scrapes while fio randrw 4k iodepth 32 loads
# every disk; fio without scraping: K, RUNTIME, GAP there), and prints its
# report: scrape_size, scrape_latency and scrape_cost lines.
# DAEMONS="NAME=BINARY NAME=BINARY ...": each round runs once per daemon, vaaid
# restarted with that binary before it (the LUNs stay in LIO and come back), the
# daemons' order alternating between rounds: a before/after comparison on the
# same guest, disks and host load; the report's lines then end in daemon=NAME.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/metrics-vaaid.sh"
N=${LUNS:-8}
export AREA=${AREA:-64M} RESULTS=/tmp/scrape-results.jsonl
rm -f "$RESULTS"
mapfile -t L < <(/vaaid/tests/vm/setup-luns.sh "$N" 2G)
[ ${#L[@]} -eq "$N" ] || die "setup-luns gave ${#L[@]} LUNs, not $N"
disks=() sgs=()
for l in "${L[@]}"; do
	read -r _ sg sd _ <<<"$l"
	disks+=("$sd") sgs+=("$sg")
	fio --name=fill --filename="$sd" --direct=1 --ioengine=libaio --iodepth=4 --bs=1M \
		--rw=write --size="$AREA" --output-format=terse >/dev/null || die "prefill of $sd failed"
done
log "$N LUNs: ${disks[*]}"
read -r -a D <<<"${DAEMONS:-}"
for ((b = 0; b < ${BLOCKS:-3}; b++)); do
	if [ ${#D[@]} -eq 0 ]; then
		python3 /vaaid/tests/vm/metrics_load.py round "" "${disks[@]}" || die "round $((b + 1))"
		continue
	fi
	for ((j = 0; j < ${#D[@]}; j++)); do
		i=$(( b % 2 ? ${#D[@]} - 1 - j : j ))
		name=${D[$i]%%=*} bin=${D[$i]#*=}
		metrics_vaaid "$bin"
		for sg in "${sgs[@]}"; do # served again (the first command may see a unit attention)
			sg_turs "$sg" >/dev/null 2>&1 || sg_turs "$sg" >/dev/null 2>&1 || die "$sg not served by $name"
		done
		python3 /vaaid/tests/vm/metrics_load.py round "$name" "${disks[@]}" || die "round $((b + 1)) of $name"
	done
done
python3 /vaaid/tests/vm/metrics_load.py report
