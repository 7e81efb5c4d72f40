#!/bin/bash
# Guest side of `scripts/bench/vaai --guest`: Block Zero as ESXi sends it —
# WRITE SAME(16) of a zero block, no UNMAP bit, each command of the LUN's own
# VPD B0 MAXIMUM WRITE SAME LENGTH — over 1 GiB that was written first, on a
# vaaid LUN and on a LIO fileio LUN (write cache off, emulate_tpws=1) in the
# same guest and run. Prints
#   guest_write_same_zero_1g vaaid_s=… lio_fileio_s=… ratio=…
# (ratio = lio_fileio_s / vaaid_s: how many times faster vaaid zeroes) and
# checks that both read back as zeros afterwards (exit 1 if not).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
AREA=$((1 << 30))
LOOP=$C/loopback/naa.50014050aa1d0001/tpgt_1

sg_of() { echo "/dev/$(ls "/sys/block/${1#/dev/}/device/scsi_generic")"; }

zero_time() { # zero_time SG: seconds to zero the first AREA bytes with WRITE SAME(16)
	local sg=$1 max lba=0 n t0 t1 blocks=$((AREA / 512))
	# "Maximum write same length: 0x10000 blocks" (sg3_utils prints it in hex)
	max=$(sg_vpd -p bl "$sg" | awk -F: '/[Mm]aximum write same length/ {split($2, a, " "); print a[1]; exit}')
	max=$((max))
	[ "$max" -gt 0 ] || die "$sg reports no MAXIMUM WRITE SAME LENGTH"
	t0=$(date +%s%N)
	while [ $lba -lt $blocks ]; do
		n=$((blocks - lba)); [ $n -gt "$max" ] && n=$max
		sg_write_same --16 --lba=$lba --num=$n "$sg" >/dev/null || die "WRITE SAME at $lba on $sg failed"
		lba=$((lba + n))
	done
	t1=$(date +%s%N)
	echo "$(( (t1 - t0) / 1000000 ))"
}

# vaaid LUN 0 + fileio LUN 1 on the same scratch disk
read -r _ vsg vsd _ < <(/vaaid/tests/vm/setup-luns.sh 1 2G)
truncate -s 2G "$STATE/bench-ws.img"
F=$C/core/fileio_1/bench_ws
mkdir -p "$F"
echo -n "fd_dev_name=$STATE/bench-ws.img,fd_dev_size=$((2 << 30))" >"$F/control"
echo 1 >"$F/enable"
echo 0 >"$F/attrib/emulate_write_cache" 2>/dev/null || true
echo 1 >"$F/attrib/emulate_tpws"; echo 1 >"$F/attrib/emulate_tpu"
cat /proc/sys/kernel/random/uuid >"$F/wwn/vpd_unit_serial"
mkdir -p "$LOOP/lun/lun_1"
ln -s "$F" "$LOOP/lun/lun_1/ws"
fsd=$(sd_of_lun 1) || die "fileio LUN did not appear"
fsg=$(sg_of "$fsd")
# adding LUN 1 raises REPORTED LUNS DATA HAS CHANGED on the target's LUNs: take
# every pending unit attention before the timed commands
for s in "$vsg" "$fsg"; do sg_turs "$s" >/dev/null 2>&1 || true; sg_turs "$s" >/dev/null 2>&1 || true; done

for d in "$vsd" "$fsd"; do
	dd if=/dev/urandom of="$d" bs=1M count=$((AREA >> 20)) oflag=direct status=none || die "prefill $d"
done
v_ms=$(zero_time "$vsg")
f_ms=$(zero_time "$fsg")
for d in "$vsd" "$fsd"; do
	cmp -n $AREA "$d" /dev/zero >/dev/null 2>&1 || die "$d does not read back as zeros after WRITE SAME"
done
log "vaaid max write same $(sg_vpd -p bl "$vsg" | grep -i 'write same length'); fileio $(sg_vpd -p bl "$fsg" | grep -i 'write same length')"
python3 -c 'import sys; v, f = int(sys.argv[1]), int(sys.argv[2]); print(f"guest_write_same_zero_1g vaaid_s={v/1000:.3f} lio_fileio_s={f/1000:.3f} ratio={f/max(v,1):.1f}")' "$v_ms" "$f_ms"
rm -f "$LOOP/lun/lun_1/ws"; rmdir "$LOOP/lun/lun_1"
