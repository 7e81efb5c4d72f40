#!/bin/bash
# Guest side of scripts/bench/scrape (issue 25's goal: the Prometheus endpoint's
# scrape latency p99 under full data-path load at most 3x its idle p99). vaaid
# serves /metrics on 127.0.0.1:9612 (scripts/vm/guest-start-services). Makes
# LUNS LUNs (default 8) of 2 GiB, writes each one's first AREA (default 64M;
# fio's random I/O stays there: reads of never-written thin space would cost
# nothing), then tests/vm/metrics_load.py bench on all their sd disks: rounds of
# idle scrapes, scrapes while fio randrw 4k iodepth 32 loads every disk, and fio
# without scraping (BLOCKS, K, RUNTIME, GAP: see metrics_load.py). Prints its
# scrape_size, scrape_latency and scrape_cost lines.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
N=${LUNS:-8}
export AREA=${AREA:-64M}
mapfile -t L < <(/vaaid/tests/vm/setup-luns.sh "$N" 2G)
[ ${#L[@]} -eq "$N" ] || die "setup-luns gave ${#L[@]} LUNs, not $N"
disks=()
for l in "${L[@]}"; do
	read -r _ _ sd _ <<<"$l"
	disks+=("$sd")
	fio --name=fill --filename="$sd" --direct=1 --ioengine=libaio --iodepth=4 --bs=1M \
		--rw=write --size="$AREA" --output-format=terse >/dev/null || die "prefill of $sd failed"
done
log "$N LUNs: ${disks[*]}"
exec python3 /vaaid/tests/vm/metrics_load.py bench "${disks[@]}"
