#!/bin/bash
# smoke-fileio.sh — runs in the LIO guest; proves the guest's LIO works without
# vaaid:  scripts/vm/run -- /vaaid/tests/vm/smoke-fileio.sh
#
# How it works: through raw configfs, creates a 64 MiB fileio backstore on
# the scratch disk, exports it as LUN 0 of a tcm_loop target (nexus first,
# then the LUN link, which scans the LUN synchronously), finds its /dev/sdX
# and /dev/sgN through sysfs (there is no udev), checks that sg_inq reports
# LIO-ORG and the unit serial, that sg_readcap gives the size, and that data
# written with dd reads back, then removes everything again. Prints what it
# checks on stderr; exits 0 on success, 1 on any failure.
set -euo pipefail
C=/sys/kernel/config/target
NAME=smoke_fileio
FILE=/var/lib/vaaid/smoke-fileio.img
SIZE=$((64 << 20))
SERIAL=vaaidsmoke0001
WWN=naa.50014050aa1d5001
NEXUS=naa.50014050aa1d5002
BS=$C/core/fileio_0/$NAME
TPG=$C/loopback/$WWN/tpgt_1

log() { echo "[smoke-fileio] $*" >&2; }
die() { log "FAIL: $*"; exit 1; }

cleanup() {
	rm -f "$TPG/lun/lun_0/$NAME" 2>/dev/null || true
	rmdir "$TPG/lun/lun_0" "$TPG" "$C/loopback/$WWN" 2>/dev/null || true
	rmdir "$BS" "$C/core/fileio_0" 2>/dev/null || true
	rm -f "$FILE"
}
trap cleanup EXIT

[ -d $C/core ] || die "no LIO configfs at $C (configfs mounted? target_core_mod loaded?)"
modprobe -a target_core_file tcm_loop sg sd_mod

log "fileio backstore $NAME ($SIZE bytes at $FILE)"
mkdir -p "$BS"
echo -n "fd_dev_name=$FILE,fd_dev_size=$SIZE" >"$BS/control"
echo -n "$SERIAL" >"$BS/wwn/vpd_unit_serial"
echo 1 >"$BS/enable"

log "tcm_loop target $WWN, nexus $NEXUS, LUN 0"
mkdir -p "$TPG/lun/lun_0"
echo -n "$NEXUS" >"$TPG/nexus"
ln -s "$BS" "$TPG/lun/lun_0/$NAME"

host=""
for h in /sys/class/scsi_host/host*; do
	[ "$(cat "$h/proc_name" 2>/dev/null)" = tcm_loopback ] && host=${h##*/host}
done
[ -n "$host" ] || die "no tcm_loopback SCSI host"
sd="" sg=""
for _ in $(seq 1 100); do
	for d in /sys/bus/scsi/devices/"$host":*:*:0; do
		[ -d "$d" ] || continue
		sd=$(ls "$d/block" 2>/dev/null | head -1)
		sg=$(ls "$d/scsi_generic" 2>/dev/null | head -1)
	done
	[ -n "$sd" ] && [ -n "$sg" ] && break
	sleep 0.1
done
[ -n "$sd" ] && [ -n "$sg" ] || die "LUN 0 did not appear as /dev/sdX + /dev/sgN"
[ -b "/dev/$sd" ] || die "/dev/$sd is not a block device"
log "LUN 0 is /dev/$sd and /dev/$sg"

sg_turs "/dev/$sg" >/dev/null 2>&1 || true # takes the first UNIT ATTENTION
inq=$(sg_inq "/dev/$sd") || die "sg_inq /dev/$sd failed"
echo "$inq" | grep 'Vendor identification: LIO-ORG' >/dev/null || die "sg_inq: vendor is not LIO-ORG: $inq"
grep -q "$SERIAL" <<<"$(sg_inq -p 0x80 "/dev/$sg")" || die "sg_inq -p 0x80: unit serial $SERIAL missing"
log "sg_inq: $(echo "$inq" | grep -E 'Vendor|Product identification' | tr -s ' ' | paste -sd';' -)"
cap=$(sg_readcap "/dev/$sg") || die "sg_readcap failed"
echo "$cap" | grep "Device size: $SIZE bytes" >/dev/null || die "sg_readcap: size is not $SIZE: $cap"
log "sg_readcap: $SIZE bytes"

head -c 1048576 /dev/urandom >/tmp/smoke.pattern
dd if=/tmp/smoke.pattern of="/dev/$sd" bs=1M seek=3 oflag=direct status=none || die "dd write failed"
dd if="/dev/$sd" of=/tmp/smoke.back bs=1M skip=3 count=1 iflag=direct status=none || die "dd read failed"
cmp -s /tmp/smoke.pattern /tmp/smoke.back || die "data read back differs from data written"
log "1 MiB written with O_DIRECT at 3 MiB reads back equal"
log "PASS"
