#!/bin/bash
# tests/vm/conformance-fileio.sh [SUITES...] — the baseline for
# docs/conformance.md: the same libiscsi iscsi-test-cu --dataloss suites as
# t_libiscsi_vaai.sh / t_caw.sh, run against LIO's own fileio backstore in the
# same guest (not part of scripts/test: it measures LIO, not vaaid). Run:
#   scripts/vm/run --port 0 -- /vaaid/tests/vm/conformance-fileio.sh
# For each block size (512, 4096): a 2 GiB sparse file on the scratch disk as
# a fileio backstore with thin provisioning emulation on (emulate_tpu=1,
# emulate_tpws=1: UNMAP and WRITE SAME with UNMAP punch holes), write cache
# off, a unit serial (as targetcli sets), exported as LUN 0 of a tcm_loop target and of the iSCSI target
# iqn.2026-11.org.vaaid:fileio (demo mode); every suite over SG_IO and over
# iSCSI. Prints libiscsi-summary.py's lines (label fileio-KIND-BLOCK); the
# logs go to /out/libiscsi-fileio-*.log.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
SUITES=("$@")
[ ${#SUITES[@]} -gt 0 ] || SUITES=(SCSI.ExtendedCopy SCSI.ReceiveCopyResults SCSI.WriteSame10
	SCSI.WriteSame16 SCSI.Unmap SCSI.GetLBAStatus SCSI.ReadCapacity16 SCSI.Inquiry SCSI.CompareAndWrite)
IQN=iqn.2026-11.org.vaaid:fileio
LOOP=$C/loopback/naa.50014050aa1d0501/tpgt_1
IT=$C/iscsi/$IQN/tpgt_1
for blk in 512 4096; do
	lio_clear
	rm -f "$STATE/conf-fileio.img"; truncate -s 2G "$STATE/conf-fileio.img"
	d=$C/core/fileio_9/conf$blk
	mkdir -p "$d"
	echo -n "fd_dev_name=$STATE/conf-fileio.img,fd_dev_size=$((2 << 30))" >"$d/control"
	echo 1 >"$d/enable" || die "enable fileio"
	echo "$blk" >"$d/attrib/block_size"
	{ echo 0 >"$d/attrib/emulate_write_cache"; } 2>/dev/null || true
	echo 1 >"$d/attrib/emulate_tpu"; echo 1 >"$d/attrib/emulate_tpws"
	# a unit serial, as targetcli sets one (LIO's VPD 83h NAA designator, which
	# EXTENDED COPY uses to name the LUN)
	cat /proc/sys/kernel/random/uuid >"$d/wwn/vpd_unit_serial"
	{ echo 1 >"$d/attrib/emulate_3pc"; } 2>/dev/null || true
	{ echo 8192 >"$d/attrib/hw_max_sectors"; } 2>/dev/null || true # read-only for fileio
	mkdir -p "$LOOP/lun/lun_0" "$IT/lun/lun_0" "$IT/np/0.0.0.0:3260"
	echo -n "naa.50014050aa1d0502" >"$LOOP/nexus"
	ln -s "$d" "$LOOP/lun/lun_0/f"; ln -s "$d" "$IT/lun/lun_0/f"
	echo 0 >"$IT/attrib/authentication"; echo 1 >"$IT/attrib/generate_node_acls"
	echo 1 >"$IT/attrib/cache_dynamic_acls"; echo 0 >"$IT/attrib/demo_mode_write_protect"
	echo 1 >"$IT/enable"
	sg=""
	for _ in $(seq 1 100); do
		for dev in /sys/bus/scsi/devices/*; do
			[ -f "$dev/model" ] && [ "$(tr -d ' ' <"$dev/model")" = FILEIO ] || continue
			sg=/dev/$(ls "$dev/scsi_generic" 2>/dev/null)
		done
		[ -n "$sg" ] && [ "$sg" != /dev/ ] && break
		sleep 0.2
	done
	[ -n "$sg" ] && [ "$sg" != /dev/ ] || die "the fileio LUN did not appear"
	sg_turs "$sg" >/dev/null 2>&1 || true
	for target in "$sg" "iscsi://127.0.0.1/$IQN/0"; do
		kind=sgio; [ "$target" = "$sg" ] || kind=iscsi
		for s in "${SUITES[@]}"; do
			log=$OUT/libiscsi-fileio-$kind-$blk-$s.log
			iscsi-test-cu -V --dataloss --test="$s" "$target" >"$log" 2>&1
			python3 "$VMDIR/libiscsi-summary.py" "fileio-$kind-$blk" <"$log" | sed "s/passed=/$s passed=/"
		done
	done
done
lio_clear
rm -f "$STATE/conf-fileio.img"
