#!/bin/bash
# EXTENDED COPY between two vaaid LUNs with sg_xcopy (bpt=8192), to the
# destination and --on_src, cmp of the ranges; sg_copy_results --params and
# --status (held list identifier, then discarded, unknown id refused); a copy
# naming a LUN that is not co-visible is refused (exit 10, COPY ABORTED) and
# the target is unchanged.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mapfile -t L < <(/vaaid/tests/vm/setup-luns.sh 2 2G)
read -r _ sg0 sd0 _ <<<"${L[0]}"
read -r _ sg1 sd1 _ <<<"${L[1]}"
head -c $((64 << 20)) /dev/urandom > /tmp/pat
dd if=/tmp/pat of="$sd0" bs=1M oflag=direct status=none
sg_xcopy if="$sg0" of="$sg1" bs=512 bpt=8192 count=$((64 << 11)) || die "sg_xcopy to destination"
cmp -n $((64 << 20)) /tmp/pat <(dd if="$sd1" bs=1M count=64 iflag=direct status=none) || die "copy differs"
sg_xcopy --on_src if="$sg0" of="$sg1" bs=512 bpt=8192 skip=2048 seek=$((1 << 21)) count=20480 || die "sg_xcopy --on_src"
cmp -n $((10 << 20)) <(dd if=/tmp/pat bs=1M skip=1 count=10 status=none) \
	<(dd if="$sd1" bs=1M skip=1024 count=10 iflag=direct status=none) || die "--on_src copy differs"
grep -qi "maximum segment" <<<"$(sg_copy_results --params "$sg0")" || die "sg_copy_results --params: $(sg_copy_results --params "$sg0" 2>&1)"
# COPY STATUS (SPC-4 6.18.3) of a held list identifier (LIST ID USAGE 00b): sg_xcopy
# sends its commands (here 3 of 8192 blocks, the last 4096) to the destination
# unless --on_src; the status is the last command's, and it is discarded once
# reported whole (SPC-4 5.17.4.3); an unknown list identifier is 24h/00h (exit 5).
sg_xcopy if="$sg0" of="$sg1" bs=512 bpt=8192 skip=4096 seek=$((3 << 20)) count=20480 list_id=7 id_usage=hold ||
	die "sg_xcopy id_usage=hold"
st=$(sg_copy_results --status --list_id=7 "$sg1" 2>&1) || die "sg_copy_results --status: $st"
grep -q "Operation completed without errors" <<<"$st" && grep -q "Transfer count: $((4096 * 512))\$" <<<"$st" &&
	grep -q "Held data discarded: No" <<<"$st" || die "sg_copy_results --status: $st"
rc=0; st=$(sg_copy_results --status --list_id=7 "$sg1" 2>&1) || rc=$?
[ $rc -eq 5 ] || die "COPY STATUS of an already reported copy: exit $rc, expected 5 (ILLEGAL REQUEST): $st"
rc=0; st=$(sg_copy_results --status --list_id=99 "$sg1" 2>&1) || rc=$?
[ $rc -eq 5 ] || die "COPY STATUS of an unknown list identifier: exit $rc, expected 5: $st"
cmp -n $((10 << 20)) <(dd if=/tmp/pat bs=1M skip=2 count=10 status=none) \
	<(dd if="$sd1" bs=1M skip=1536 count=10 iflag=direct status=none) || die "held-id copy differs"
# vol2 exported only through tcm_loop: a copy received by vol0 (exported by iSCSI too) may not name it
C=/sys/kernel/config/target
mkdir -p $C/core/user_1/vol2
echo -n "dev_config=vaai/default/vol2" > $C/core/user_1/vol2/control
echo -n "dev_size=$((1 << 30))" > $C/core/user_1/vol2/control
echo 1 > $C/core/user_1/vol2/enable
mkdir -p $C/loopback/naa.50014050aa1d0001/tpgt_1/lun/lun_2
ln -s $C/core/user_1/vol2 $C/loopback/naa.50014050aa1d0001/tpgt_1/lun/lun_2/v2
sleep 1
sg2="" sd2=""
for d in /sys/bus/scsi/devices/*:*:*:2; do
	[ -d "$d/scsi_generic" ] || continue
	sg2=/dev/$(ls "$d/scsi_generic" | head -1)
	sd2=/dev/$(ls "$d/block" | head -1)
done
[ -n "$sg2" ] && [ -n "$sd2" ] || die "vol2 did not appear"
sg_turs "$sg2" >/dev/null 2>&1 || true
# (never dd from /dev/sgN: a plain read() there waits for a reply to nothing)
before=$(dd if="$sd2" bs=1M count=1 iflag=direct status=none | md5sum)
set +e
sg_xcopy --on_src if="$sg0" of="$sg2" bs=512 bpt=8192 count=2048 2>/tmp/xc.err
rc=$?
set -e
[ $rc -eq 10 ] || die "copy to a LUN that is not co-visible: exit $rc, expected 10 ($(cat /tmp/xc.err))"
after=$(dd if="$sd2" bs=1M count=1 iflag=direct status=none | md5sum)
[ "$before" = "$after" ] || die "the refused copy changed the target"
log "xcopy ok"
