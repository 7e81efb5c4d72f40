#!/bin/bash
# COMPARE AND WRITE (ATS) through LIO: sg_compare_and_write success, MISCOMPARE
# (sg3_utils exit 14) leaving the block unchanged, and atomicity under real
# concurrency: two processes (one on the LUN's sg node, one on its sd node, both
# through LIO and the TCMU ring, commands in flight together) increment one counter block with
# read + CAW(old -> old+1) retries; the final counter must equal the number of
# successful CAWs (a lost update would leave it lower), and the two must really
# have collided: at least one MISCOMPARE between them (as the simhost contention
# test requires), else the run proved nothing about atomicity. Then libiscsi's
# SCSI.CompareAndWrite suite (0 failed, skips listed).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
read -r _ sg sd _ < <(/vaaid/tests/vm/setup-luns.sh 1 2G)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
blk() { printf '%-512s' "$1"; } # one 512-byte block holding a value
read_blk() { sg_dd if="$sg" of=/dev/stdout bs=512 skip="$1" count=1 2>/dev/null | tr -d ' '; }

# never-written block: compares equal to zeros
{ head -c 512 /dev/zero; blk first; } > "$work/b1"
sg_compare_and_write --in="$work/b1" --lba=100 --num=1 "$sg" || die "CAW zeros -> first failed"
[ "$(read_blk 100)" = first ] || die "block 100 is not 'first' after the CAW"
# wrong verify data: MISCOMPARE (exit 14), block unchanged
{ blk wrong; blk second; } > "$work/b2"
rc=0; sg_compare_and_write --in="$work/b2" --lba=100 --num=1 "$sg" 2>"$work/err" || rc=$?
[ $rc -eq 14 ] || die "miscompare: sg_compare_and_write exit $rc, expected 14: $(cat "$work/err")"
[ "$(read_blk 100)" = first ] || die "block 100 changed by a miscomparing CAW"

# two racing incrementers on LBA 200
{ head -c 512 /dev/zero; blk 0; } > "$work/init"
sg_compare_and_write --in="$work/init" --lba=200 --num=1 "$sg" || die "counter init"
MAX_MISCOMPARES=2000 # per worker: more means no progress (a counter that never compares equal)
worker() { # worker DEV N [IFLAG]: N successful increments; prints the number of miscompares
	local dev=$1 n=$2 flag=${3:-} ok=0 lost=0 v rc
	while [ $ok -lt "$n" ]; do
		[ $lost -le $MAX_MISCOMPARES ] || { echo "no progress: $lost miscompares, $ok of $n increments"; return 1; }
		# (on the sd node through SG_IO: the page cache would hide the other's writes)
		v=$(sg_dd if="$dev" of=/dev/stdout bs=512 skip=200 count=1 $flag 2>"$work/dd.$BASHPID" | tr -d ' ') ||
			{ echo "read: $(cat "$work/dd.$BASHPID")"; return 1; }
		[[ $v =~ ^[0-9]+$ ]] || { echo "the counter block does not hold a number: '$v'"; return 1; }
		{ blk "$v"; blk $((v + 1)); } > "$work/w.$BASHPID"
		rc=0; sg_compare_and_write --in="$work/w.$BASHPID" --lba=200 --num=1 "$dev" 2>/dev/null || rc=$?
		case $rc in
		0) ok=$((ok + 1)) ;;
		14) lost=$((lost + 1)) ;;
		*) echo "sg_compare_and_write exit $rc (value '$v')"; return 1 ;;
		esac
	done
	echo "$lost"
}
worker "$sg" 40 > "$work/r1" & p1=$!
worker "$sd" 40 iflag=sgio > "$work/r2" & p2=$!
rc1=0; wait $p1 || rc1=$?
rc2=0; wait $p2 || rc2=$?
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] || die "workers failed: 1: $(cat "$work/r1") 2: $(cat "$work/r2")"
final=$(read_blk 200)
[ "$final" = 80 ] || die "counter is $final after 80 successful CAWs (lost update)"
m1=$(cat "$work/r1") m2=$(cat "$work/r2")
[[ $m1 =~ ^[0-9]+$ && $m2 =~ ^[0-9]+$ ]] || die "workers' miscompare counts: '$m1' '$m2'"
# no MISCOMPARE at all: the incrementers never raced, and the counter proves nothing
[ $((m1 + m2)) -gt 0 ] || die "the two incrementers never collided (0 miscompares): atomicity untested"
log "CAW ok: counter 80, miscompares while racing: $m1 + $m2"

SKIPS_NAME=caw SUITES="SCSI.CompareAndWrite" bash "$VMDIR/t_libiscsi.sh"
