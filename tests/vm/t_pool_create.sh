#!/bin/bash
# vaaictl pool create on stores that already exist (--force):
#  - without --force an existing file is refused and left untouched;
#  - --force refuses a store smaller than SIZE, a directory, the store of a
#    registered pool, and a copy of a pool (a vaaid superblock);
#  - --force formats a file written in full beforehand (first writes are then
#    overwrites for the file system) and a block device (a loop device here),
#    and a LUN on the block-device pool keeps what is written through sd;
#  - a pool in a file gets its journal file <file>.journal (never an existing
#    one: refused), a pool on a block device keeps its journal inside;
#    vaaictl pool list / status name the journal file.
#  - a pool file on ext4 under Linux < 6.4 writes partial granules whole
#    (docs/design.md rule 14): vaaictl pool list / status and the log say so;
#    a block device never does.
#  - its durable writes share cache flushes (docs/design.md rule 15) exactly
#    when sysfs says the file system's device has a volatile write cache
#    without FUA: vaaictl pool list / status and the log say so.
# The loop device stays attached: the pools are registered in the state
# directory, and later tests restart vaaid, which opens them again.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
refused() { # refused EXPECTED_TEXT ARGS...: vaaictl pool create ARGS fails naming EXPECTED_TEXT
	local want=$1 out
	shift
	out=$("$VAAICTL" pool create "$@" 2>&1) && die "pool create $* succeeded: $out"
	grep -qF -- "$want" <<<"$out" || die "pool create $*: expected '$want', got: $out"
}

pre=$STATE/pre.pool
dd if=/dev/zero of="$pre" bs=1M count=64 oflag=direct status=none
refused "already exists" pre "$pre" 64M
refused "--force" pre "$pre" 64M
cmp -s -n $((64 << 20)) "$pre" /dev/zero || die "a refused pool create changed $pre"
refused "fewer than the pool size" pre "$pre" 128M --force
mkdir -p "$STATE/adir"
refused "neither a block device nor a regular file" dir "$STATE/adir" 64M --force
touch "$pre.journal" # a file where the journal file would go: refused, both left alone
refused "it already exists" pre "$pre" 64M --force
cmp -s -n $((64 << 20)) "$pre" /dev/zero || die "a refused pool create changed $pre"
[ ! -s "$pre.journal" ] || die "a refused pool create wrote $pre.journal"
rm "$pre.journal"
"$VAAICTL" pool create pre "$pre" 64M --force >/dev/null || die "pool create --force on a file"
[ "$(head -c 8 "$pre.journal")" = AAIDJFIL ] || die "pool create --force on a file: no $pre.journal"
"$VAAICTL" --json pool list | grep '"name":"pre"' >/dev/null || die "pool pre not listed"
"$VAAICTL" --json pool list | tr '{' '\n' | grep '"name":"pre"' |
	grep -qF "\"journal_file\":\"$pre.journal\"" || die "vaaictl pool list: no journal_file for pool pre"
"$VAAICTL" status | grep -xF "$(printf '%-16s journal file %s' pre "$pre.journal")" >/dev/null ||
	die "vaaictl status does not show pool pre's journal file"
# design rule 14: a pool file on ext4 under Linux < 6.4 writes partial granules whole
kv=$(uname -r); kmaj=${kv%%.*}; kmin=${kv#*.}; kmin=${kmin%%.*}
if [ "$(stat -f -c %T "$STATE")" = ext2/ext3 ] && { [ "$kmaj" -lt 6 ] || { [ "$kmaj" -eq 6 ] && [ "$kmin" -lt 4 ]; }; }; then
	want_whole=true
else
	want_whole=false
fi
"$VAAICTL" --json pool list | tr '{' '\n' | grep '"name":"pre"' |
	grep -qF "\"whole_granule_writes\":$want_whole" ||
	die "vaaictl pool list: pool pre's whole_granule_writes is not $want_whole (kernel $kv, $(stat -f -c %T "$STATE"))"
if $want_whole; then
	"$VAAICTL" status | grep "^pre  *writes partial 4 KiB granules whole" >/dev/null ||
		die "vaaictl status does not say pool pre writes partial granules whole"
	grep -q "pool pre: partial 4 KiB granules are read and written whole (its file system serializes" "$OUT/vaaid.log" ||
		die "vaaid did not log that pool pre writes partial granules whole"
fi
# design rule 15: group flushes where the store's device has a volatile cache
# without FUA (read here from sysfs, independently of vaaid's own detection)
mm=$(findmnt -no MAJ:MIN --target "$STATE" | head -n 1 | tr -d ' ')
q=/sys/dev/block/$mm/queue
[ -d "$q" ] || q=/sys/dev/block/$mm/../queue
if [ "$(cat "$q/write_cache" 2>/dev/null)" = "write back" ] && [ "$(cat "$q/fua" 2>/dev/null)" = 0 ]; then
	want_group=true
else
	want_group=false
fi
"$VAAICTL" --json pool list | tr '{' '\n' | grep '"name":"pre"' |
	grep -qF "\"group_flush\":$want_group" ||
	die "vaaictl pool list: pool pre's group_flush is not $want_group (device $mm: $(cat "$q/write_cache" "$q/fua" 2>&1 | tr '\n' ' '))"
if $want_group; then
	"$VAAICTL" status | grep "^pre  *durable writes share cache flushes" >/dev/null ||
		die "vaaictl status does not say pool pre's durable writes share cache flushes"
	grep -q "pool pre: durable writes share cache flushes (its device has a volatile write cache without FUA" "$OUT/vaaid.log" ||
		die "vaaid did not log that pool pre's durable writes share cache flushes"
fi
echo "group_flush of pool pre: $want_group (device $mm)"
refused "is the store of pool 'pre'" pre2 "$pre" 64M --force
cp "$pre" "$STATE/copy.pool"
refused "holds a vaaid pool" copy "$STATE/copy.pool" 64M --force

modprobe loop 2>/dev/null || true
truncate -s 96M "$STATE/blk.img"
dev=$(losetup -f --show "$STATE/blk.img") || die "losetup"
[ -b "$dev" ] || die "no loop block device"
"$VAAICTL" pool create blk "$dev" 64M --force >/dev/null || die "pool create --force on $dev"
[ ! -e "$dev.journal" ] || die "a pool on a block device got a journal file"
! "$VAAICTL" --json pool list | tr '{' '\n' | grep '"name":"blk"' | grep journal_file >/dev/null ||
	die "vaaictl pool list: a journal_file for the block-device pool blk"
refused "is the store of pool 'blk'" blk2 "$dev" 64M --force
"$VAAICTL" --json pool list | tr '{' '\n' | grep '"name":"blk"' |
	grep -qF '"whole_granule_writes":false' || die "vaaictl pool list: a block device writes granules whole"
read -r sg sd < <(lone_lun blk0 blk $((32 << 20)) 50014050aa1d040)
head -c $((4 << 20)) /dev/urandom >"$OUT/blk.data"
dd if="$OUT/blk.data" of="$sd" bs=1M seek=3 oflag=direct status=none || die "write to $sd"
dd if="$sd" of="$OUT/blk.back" bs=1M skip=3 count=4 iflag=direct status=none || die "read $sd"
cmp -s "$OUT/blk.data" "$OUT/blk.back" || die "data read back from the block-device pool differs"
used=$("$VAAICTL" --json pool list | tr '{' '\n' | grep '"name":"blk"' | grep -o '"used":[0-9]*' |
	cut -d: -f2)
[ "${used:-0}" -ge $((4 << 20)) ] || die "pool blk: used ${used:-?} after writing 4 MiB"
sg_turs "$sg" >/dev/null || die "TEST UNIT READY on blk0"
log "pool create --force ok (file and $dev)"
