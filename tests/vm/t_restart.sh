#!/bin/bash
# SIGTERM + restart of vaaid with the LUN live and fio writing: fio finishes with no
# verify error.
#
# "fio was writing when vaaid stopped" is checked on the LUN's sd disk, from the
# block layer's own counters (/sys/block/sdX/stat: writes completed; .../inflight:
# reads and writes issued and not yet answered), not from timing:
#  - before the stop: writes complete (the counter advances within 0.2 s) and
#    writes are in flight, i.e. fio is in a write phase, not verifying;
#  - after vaaid has exited: writes are in flight and stay unanswered (no daemon
#    serves the ring), i.e. fio had write commands outstanding across the stop,
#    which the restarted daemon then completes (fio ends, its verify passing).
# If fio happened to switch to its verify (read) phase at the stop, the cycle does
# not count: vaaid is restarted and stopped again, at most 3 times.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
read -r _ _ sd _ < <(/vaaid/tests/vm/setup-luns.sh 1 2G)
dev=${sd#/dev/}
[ -r "/sys/block/$dev/stat" ] && [ -r "/sys/block/$dev/inflight" ] || die "no block-layer counters for $sd"
writes_done() { awk '{ print $5 }' "/sys/block/$dev/stat"; }
writes_in_flight() { awk '{ print $2 }' "/sys/block/$dev/inflight"; }
fio --name=live --filename="$sd" --direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite \
	--bs=16k --size=64M --loops=3 --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--output-format=terse >/tmp/fio.out 2>&1 &
fp=$!
# a failing test stops its fio (the exit status stays the test's)
cleanup() { local rc=$?; set +e; kill "$fp" 2>/dev/null && wait "$fp" 2>/dev/null; exit $rc; }
trap cleanup EXIT

wait_writing() { # until fio's writes complete and more are in flight (at most 60 s)
	local a b
	for _ in $(seq 1 300); do
		kill -0 $fp 2>/dev/null || { cat /tmp/fio.out >&2; die "fio ended before vaaid was stopped"; }
		a=$(writes_done); sleep 0.2; b=$(writes_done)
		[ "$b" -gt "$a" ] && [ "$(writes_in_flight)" -gt 0 ] && { echo "$((b - a))"; return 0; }
	done
	die "fio did not write to $sd for 60 s"
}

counted=false
for attempt in 1 2 3; do
	rate=$(wait_writing)
	before=$(writes_done)
	stop_vaaid
	sleep 1 # vaaid has exited: what fio submitted since waits in LIO, unanswered
	stuck=$(writes_in_flight)
	at_stop=$(writes_done)
	sleep 1
	still=$(writes_done)
	log "attempt $attempt: $rate writes completed in the 0.2 s before the stop, $((at_stop - before)) during it; vaaid down: $stuck writes in flight, $((still - at_stop)) completed in 1 s"
	[ "$still" -eq "$at_stop" ] || die "writes completed while vaaid was down: $at_stop -> $still"
	start_vaaid
	log "vaaid restarted"
	if [ "$stuck" -gt 0 ]; then
		counted=true
		break
	fi
	log "no write in flight at the stop (fio between its write and verify phases): again"
done
$counted || die "fio never had a write in flight when vaaid stopped (3 attempts)"
wait $fp || { cat /tmp/fio.out >&2; die "fio failed across the daemon restart"; }
[ "$(writes_done)" -gt "$still" ] || die "no write completed after the restart"
log "restart ok: $stuck writes were in flight across the stop, and fio's verify passed"
