#!/bin/bash
# targetcli saveconfig, daemon and LIO restart, restore: the LUNs come back with their data.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
read -r _ sg _ _ < <(/vaaid/tests/vm/setup-luns.sh 1 2G)
pat=$(mktemp); back=$(mktemp); trap 'rm -f "$pat" "$back"' EXIT
head -c 4194304 /dev/urandom > "$pat"
sg_dd if="$pat" of="$sg" bs=512 count=8192 oflag=sgio >/dev/null 2>&1 || die "write"
targetcli saveconfig /tmp/saved.json >/dev/null 2>&1 || die "saveconfig"
stop_vaaid
targetctl clear 2>/dev/null || lio_clear
start_vaaid
targetctl restore /tmp/saved.json >/dev/null 2>&1 || die "restore"
sleep 1
sg=""
for d in /sys/bus/scsi/devices/*; do
	[ "$(cat "$d/vendor" 2>/dev/null | tr -d ' ')" = VAAID ] && sg=/dev/$(ls "$d/scsi_generic" | head -1)
done
[ -n "$sg" ] || die "no LUN after restore"
sg_turs "$sg" >/dev/null 2>&1 || true
sg_dd if="$sg" of="$back" bs=512 count=8192 >/dev/null 2>&1 || die "read back"
cmp "$pat" "$back" || die "data differs after restore"
log "saveconfig/restore ok"
