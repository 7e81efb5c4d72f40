#!/bin/bash
# Guest side of `scripts/bench/xcopy --guest` (issue 4 item 6): the time to
# copy 1 GiB with sg_xcopy (EXTENDED COPY, BPT blocks per segment, default
# 8192 = 4 MiB, the segment ESXi sends with its default MaxHWTransferSize)
# between two vaaid LUNs, and between two LIO fileio LUNs, in the same guest
# and run. Prints one line on stdout:
#   guest_xcopy_1g vaaid_s=S lio_fileio_s=S ratio=R
# ratio = lio_fileio_s / vaaid_s (above 1: vaaid is faster).
#
# How it works: setup-luns.sh makes vol0 and vol1 (user:vaai, pool "default",
# 2 GiB each, LUNs 0 and 1 of the tcm_loop target and the iSCSI target, so
# they are co-visible). Two fileio backstores on files of the scratch disk
# (emulate_write_cache=0: O_DSYNC, the durability contract of vaaid's WCE=0,
# as in bench-guest-fio.sh) become LUNs 2 and 3 of the same tcm_loop target
# (LIO's own copy manager finds a CSCD only among the LUNs of the session's
# TPG). The first 1 GiB of vol0 is filled from /dev/urandom and copied to the
# fileio source, so both sources hold the same bytes; page caches are dropped
# before each timed copy (fileio reads its file through the page cache).
# sg_xcopy sends the EXTENDED COPY commands to the destination, one segment
# each, one after the other. Both copies are checked with cmp (untimed).
# Environment: BPT (blocks per segment, default 8192).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
BPT=${BPT:-8192}
COUNT=$((1 << 21)) # 1 GiB in 512-byte blocks
LOOP=$C/loopback/naa.50014050aa1d0001/tpgt_1
FHBA=$C/core/fileio_1

devs_of_lun() { # devs_of_lun N: "/dev/sgX /dev/sdY" of tcm_loop LUN N
	local h d sg sd
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/proc_name")" = tcm_loopback ] || continue
		for _ in $(seq 1 100); do
			for d in /sys/bus/scsi/devices/"${h##*/host}":*:*:"$1"; do
				[ -d "$d" ] || continue
				sg=$(ls "$d/scsi_generic" 2>/dev/null | head -1)
				sd=$(ls "$d/block" 2>/dev/null | head -1)
				[ -n "$sg" ] && [ -n "$sd" ] && { echo "/dev/$sg /dev/$sd"; return 0; }
			done
			sleep 0.2
		done
	done
	return 1
}

fileio_lun() { # fileio_lun NAME LUN: a 2 GiB fileio backstore on the scratch disk as tcm_loop LUN
	local d=$FHBA/$1
	truncate -s 2G "$STATE/$1.img"
	mkdir -p "$d"
	echo -n "fd_dev_name=$STATE/$1.img,fd_dev_size=$((2 << 30))" > "$d/control"
	echo 1 > "$d/enable" || die "enable fileio $1"
	echo 0 > "$d/attrib/emulate_write_cache" 2>/dev/null || true
	[ "$(cat "$d/attrib/emulate_3pc" 2>/dev/null || echo 1)" = 1 ] || echo 1 > "$d/attrib/emulate_3pc"
	# a unit serial, as targetcli sets one: LIO derives VPD 83h's NAA designator from
	# it, and EXTENDED COPY names LUNs by that NAA (without it LIO refuses the copy)
	cat /proc/sys/kernel/random/uuid > "$d/wwn/vpd_unit_serial"
	mkdir -p "$LOOP/lun/lun_$2"
	ln -s "$d" "$LOOP/lun/lun_$2/$1"
	devs_of_lun "$2" || die "fileio $1 (LUN $2) did not appear"
}

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

timed_xcopy() { # timed_xcopy SG_IF SG_OF WHAT: seconds on stdout
	local t0 t1
	sync
	echo 3 > /proc/sys/vm/drop_caches
	t0=$(now)
	sg_xcopy if="$1" of="$2" bs=512 bpt="$BPT" count=$COUNT >&2 || die "sg_xcopy $3 failed (exit $?)"
	t1=$(now)
	secs "$t0" "$t1"
}

same_gib() { # same_gib DEV_A DEV_B WHAT: the first 1 GiB of both is equal
	cmp -n $((1 << 30)) <(dd if="$1" bs=1M count=1024 iflag=direct status=none) \
		<(dd if="$2" bs=1M count=1024 iflag=direct status=none) >&2 || die "$3: the copy differs"
}

mapfile -t L < <(/vaaid/tests/vm/setup-luns.sh 2 2G)
read -r _ vsg0 vsd0 _ <<<"${L[0]}"
read -r _ vsg1 vsd1 _ <<<"${L[1]}"
mkdir -p "$FHBA"
read -r fsg0 fsd0 < <(fileio_lun xc_src 2)
read -r fsg1 fsd1 < <(fileio_lun xc_dst 3)
sg_turs "$fsg0" >/dev/null 2>&1 || true
sg_turs "$fsg1" >/dev/null 2>&1 || true
log "vaaid $vsg0 -> $vsg1, fileio $fsg0 -> $fsg1, bpt=$BPT"

dd if=/dev/urandom of="$vsd0" bs=1M count=1024 oflag=direct status=none
dd if="$vsd0" of="$fsd0" bs=1M count=1024 iflag=direct oflag=direct status=none
v_s=$(timed_xcopy "$vsg0" "$vsg1" "between vaaid LUNs")
log "vaaid: ${v_s} s"
f_s=$(timed_xcopy "$fsg0" "$fsg1" "between fileio LUNs")
log "fileio: ${f_s} s"
same_gib "$vsd0" "$vsd1" "vaaid"
same_gib "$vsd0" "$fsd1" "fileio"
log "both copies equal their source"

lio_clear
for d in "$FHBA"/*; do [ -d "$d" ] && [ -f "$d/enable" ] && rmdir "$d"; done
rmdir "$FHBA" 2>/dev/null || true
echo "guest_xcopy_1g vaaid_s=$v_s lio_fileio_s=$f_s ratio=$(awk -v v="$v_s" -v f="$f_s" 'BEGIN { if (v > 0) printf "%.2f", f / v; else print "inf" }')"
