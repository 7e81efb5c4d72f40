#!/bin/bash
# Issue 25 item 3: malformed HTTP requests, slow clients and many connections to
# the Prometheus endpoint never stall the I/O path. While fio (randrw 4k,
# iodepth 32, direct) runs on a LUN, tests/vm/metrics_load.py abuse attacks
# 127.0.0.1:9612 for 15 s: bursts of 40 connections (the endpoint allows 16),
# clients that send half a request and wait, malformed requests (garbage,
# HTTP/9.9, a 70 KB header, a 100 KB URL, a negative Content-Length, broken
# chunking), and GETs of /metrics back to back. It fails when the disk completed
# no I/O for more than 2 s during the abuse, when an I/O took 5 s or more, or
# when a plain GET /metrics is not served again within 15 s afterwards (the
# endpoint drops idle connections after 10 s). (Shown red with the
# reactor's snapshot sleeping 3 s: docs/observability.md.)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/metrics-vaaid.sh"
if ! metrics_listening; then # (a vaaid restarted by an earlier test: no endpoint)
	log "nothing listens on 127.0.0.1:9612: restarting vaaid with [metrics] listen"
	metrics_vaaid
fi
read -r _ _ sd _ < <(/vaaid/tests/vm/setup-luns.sh 1 2G)
export AREA=32M
fio --name=fill --filename="$sd" --direct=1 --ioengine=libaio --iodepth=4 --bs=1M \
	--rw=write --size=$AREA --output-format=terse >/dev/null || die "prefill of $sd failed"
LEAD=3 ABUSE=15 STALL=2 python3 /vaaid/tests/vm/metrics_load.py abuse "$sd" ||
	die "the endpoint's abuse stalled the I/O path, or the endpoint did not serve afterwards"
