#!/bin/bash
# scripts/ceph/cluster stop DIR kills a PID of DIR/<daemon>.pid only while that
# PID is still that ceph daemon: a DIR left by a killed run (or from before a
# reboot) may name a PID another process has now. No Ceph needed: a sleep
# stands for the other process; it must survive the stop, and DIR must go.
set -euo pipefail
tmp=$(mktemp -d "${1:-/tmp}/cluster-stop.XXXXXX")
sleep 60 & other=$!
trap 'kill "$other" 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/c"
for d in mon mgr osd; do echo "$other" >"$tmp/c/$d.pid"; done
"$(dirname "$0")/../../scripts/ceph/cluster" stop "$tmp/c"
kill -0 "$other" 2>/dev/null || { echo "FAIL: stop killed PID $other, which is no ceph daemon" >&2; exit 1; }
[ ! -e "$tmp/c" ] || { echo "FAIL: stop left $tmp/c" >&2; exit 1; }
echo "ok: a foreign PID in the PID files is left alone"
