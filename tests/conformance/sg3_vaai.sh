#!/bin/bash
# sg3_utils and Linux sd against a vaaid LUN (run in the LIO guest by
# tests/vm/t_sg3_conformance.sh): WRITE SAME (10/16, UNMAP bit, NDOB, a pattern),
# COMPARE AND WRITE (miscompare offset), UNMAP, GET LBA STATUS, LOG SENSE 0Ch, then
# the sd driver as a client: blkdiscard with provisioning_mode unmap, writesame_16
# and writesame_10, blkdiscard -z, fstrim on ext4 -- each checked against the pool's
# mapped bytes (vaaictl) and what reads return.
#   sg3_vaai.sh SG SD VOLUME   (VOLUME: pool/volume behind the LUN, for vaaictl)
set -euo pipefail
SG=$1 SD=$2 VOL=$3
VAAICTL=${VAAICTL:-/vaaid/build/bin/vaaictl}
die() { echo "[sg3_vaai] FAIL: $*" >&2; exit 1; }
say() { echo "[sg3_vaai] $*" >&2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mapped() { "$VAAICTL" --json status | python3 -c '
import json, sys
pool, vol = sys.argv[1].split("/")
for p in json.load(sys.stdin)["pools"]:
    if p["pool"]["name"] == pool:
        for v in p["volumes"]:
            if v["name"] == vol:
                print(v["mapped"])' "$VOL"; }
status_at() { sg_get_lba_status --lba="$1" --brief --brief "$SG" 2>/dev/null | tr -d ' '; } # 0 mapped, 1 deallocated
zeros_at() { # zeros_at LBA BLOCKS
	cmp -s -n $(($2 * 512)) <(sg_dd if="$SG" of=/dev/stdout bs=512 skip="$1" count="$2" 2>/dev/null) /dev/zero
}
fill() { sg_dd if=/dev/urandom of="$SG" bs=512 bpt=2048 seek="$1" count="$2" oflag=sgio >/dev/null 2>&1; }
G=$((1 << 21)) # LBA of 1 GiB: extent aligned (1 MiB = 2048 blocks)

fill $G $((16 * 2048)) || die "fill"
m0=$(mapped)
# WRITE SAME(16) UNMAP=1 over one extent: deallocated, zeros, 1 MiB given back
sg_write_same --16 --unmap --lba=$G --num=2048 "$SG" || die "write same 16 unmap"
[ "$(status_at $G)" = 1 ] || die "GET LBA STATUS after WRITE SAME(16) UNMAP: $(status_at $G)"
zeros_at $G 2048 || die "not zeros after WRITE SAME(16) UNMAP"
[ $(($(mapped) + (1 << 20))) -eq "$m0" ] || die "mapped $(mapped), expected $m0 - 1 MiB"
# WRITE SAME(10) of a zero block (no UNMAP bit): deallocates too
sg_write_same --10 --lba=$((G + 2048)) --num=2048 "$SG" || die "write same 10 zeros"
[ "$(status_at $((G + 2048)))" = 1 ] || die "WRITE SAME(10) zeros did not deallocate"
# WRITE SAME(16) NDOB
sg_write_same --16 --ndob --lba=$((G + 4096)) --num=2048 "$SG" || die "write same ndob"
[ "$(status_at $((G + 4096)))" = 1 ] || die "NDOB did not deallocate"
zeros_at $((G + 4096)) 2048 || die "not zeros after NDOB"
# a non-zero pattern is written for real, block by block
head -c 512 /dev/urandom > "$work/blk"
sg_write_same --16 --in="$work/blk" --lba=$((G + 6144)) --num=16 "$SG" || die "write same pattern"
for i in 0 7 15; do
	cmp -s "$work/blk" <(sg_dd if="$SG" of=/dev/stdout bs=512 skip=$((G + 6144 + i)) count=1 2>/dev/null) ||
		die "WRITE SAME pattern: block $i differs"
done
[ "$(status_at $((G + 6144)))" = 0 ] || die "pattern range not mapped"
# UNMAP of two extents
m1=$(mapped)
sg_unmap --lba=$((G + 8192)) --num=4096 "$SG" || die "sg_unmap"
[ "$(status_at $((G + 8192)))" = 1 ] && zeros_at $((G + 8192)) 4096 || die "UNMAP: not deallocated/zeros"
[ $(($(mapped) + (2 << 20))) -eq "$m1" ] || die "UNMAP did not give back 2 MiB"
# COMPARE AND WRITE: the miscompare offset is in the sense INFORMATION field
{ head -c 100 /dev/zero; printf 'X'; head -c 411 /dev/zero; head -c 512 /dev/urandom; } > "$work/caw"
rc=0; out=$(sg_compare_and_write --in="$work/caw" --lba=$((G + 4096)) --num=1 -v "$SG" 2>&1) || rc=$?
[ $rc -eq 14 ] || die "sg_compare_and_write exit $rc: $out"
grep -qiE "info(rmation)?( field| fld)?[:=]? *(0x0*64|100)\b" <<<"$out" || die "miscompare offset 100 not reported: $out"
# LOG SENSE: Logical Block Provisioning page
grep -qi "used LBA mapping threshold resource count" <<<"$(sg_logs -p lbp "$SG")" || die "sg_logs -p lbp"
say "sg3_utils ok"

# ---- Linux sd as the client
sdn=${SD#/dev/}
pm=$(ls /sys/block/"$sdn"/device/scsi_disk/*/provisioning_mode)
[ "$(cat "$pm")" = unmap ] || die "sd chose provisioning_mode $(cat "$pm"), expected unmap"
for mode in unmap writesame_16 writesame_10; do
	echo "$mode" > "$pm" || die "cannot set provisioning_mode $mode"
	fill $((G + 16384)) 8192 || die "fill for $mode"
	before=$(mapped)
	blkdiscard -o $(((G + 16384) * 512)) -l $((4 << 20)) "$SD" || die "blkdiscard ($mode)"
	[ $(($(mapped) + (4 << 20))) -eq "$before" ] || die "blkdiscard ($mode) did not give back 4 MiB"
	zeros_at $((G + 16384)) 8192 || die "not zeros after blkdiscard ($mode)"
done
echo unmap > "$pm"
# blkdiscard -z (BLKZEROOUT: WRITE SAME zeros through sd): zeros, and no space used
fill $((G + 24576)) 4096
before=$(mapped)
blkdiscard -z -o $(((G + 24576) * 512)) -l $((2 << 20)) "$SD" || die "blkdiscard -z"
zeros_at $((G + 24576)) 4096 || die "not zeros after blkdiscard -z"
[ "$(mapped)" -le "$before" ] || die "blkdiscard -z used space"
say "sd discard ok"
