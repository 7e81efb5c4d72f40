#!/bin/bash
# SIGTERM + restart of vaaid with the LUN live and fio running: fio finishes with no verify error.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
read -r _ _ sd _ < <(/vaaid/tests/vm/setup-luns.sh 1 2G)
fio --name=live --filename="$sd" --direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite \
	--bs=16k --size=64M --loops=3 --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--output-format=terse >/tmp/fio.out 2>&1 &
fp=$!
sleep 5
stop_vaaid
log "vaaid stopped with fio running"
start_vaaid
log "vaaid restarted"
wait $fp || { cat /tmp/fio.out >&2; die "fio failed across the daemon restart"; }
log "restart ok"
