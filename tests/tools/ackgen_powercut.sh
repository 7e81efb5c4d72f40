#!/bin/bash
# ctest host/ackgen_powercut: the host-side pieces of the guest power-cut test
# (tests/host/power_cut.sh) without a guest:
#   - `ackgen relay`: every complete record reaches its file before its receipt
#     is sent, one receipt per record; an incomplete last record is dropped;
#   - `ackgen verify --cuts`: a command with an S record and no A (in flight at a
#     cut) lets each of its sectors hold the old content or the command's, and
#     nothing else; an acknowledged one must be exact; a CAW in flight raises
#     the counter's upper bound by one; a cut counts when every generator had a
#     command in flight;
#   - `ackgen busy`: every generator has a command of the run in flight.
# The "LUN" is a regular file filled by `ackgen gen fill` (O_DIRECT pwrite).
# Usage: ackgen_powercut.sh ACKGEN TMPDIR
set -euo pipefail
ACKGEN=${1:?usage: ackgen_powercut.sh ACKGEN TMPDIR}
TMP=${2:?}
mkdir -p "$TMP"
D=$(mktemp -d "$TMP/ackgen_powercut.XXXXXX")
RELAY=""
trap '[ -n "$RELAY" ] && kill "$RELAY" 2>/dev/null; rm -rf "$D"' EXIT
fail() { echo "ackgen_powercut: FAIL: $*" >&2; exit 1; }

# --- the relay ----------------------------------------------------------------
"$ACKGEN" relay "$D/sock" "$D/relay.log" 2>"$D/relay.err" & RELAY=$!
for _ in $(seq 1 100); do [ -S "$D/sock" ] && break; sleep 0.05; done
[ -S "$D/sock" ] || fail "the relay does not listen"
python3 - "$D/sock" "$D/relay.log" <<'EOF' || fail "relay: records and receipts"
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
for i in range(3):
    rec = b"S t %d 1 w A 0 8 - 0\n" % i
    s.sendall(rec[:5]); s.sendall(rec[5:])       # a record in two pieces: one receipt
    assert s.recv(16) == b"\n", "one receipt byte per record"
    assert open(sys.argv[2], "rb").read().endswith(rec), "the record is in the file before its receipt"
s.sendall(b"A t 2 9 ok w A 0 8 - 0")           # no newline: never complete
s.close()
EOF
wait "$RELAY" || fail "the relay exited $?"
RELAY=""
[ "$(wc -l <"$D/relay.log")" = 3 ] || fail "relay: $(wc -l <"$D/relay.log") records in the file, want 3 (the incomplete one dropped)"
grep -q "3 records (an incomplete last one dropped)" "$D/relay.err" || fail "relay: $(cat "$D/relay.err")"

# --- the oracle -----------------------------------------------------------------
IMG=$D/lun.img
truncate -s 4M "$IMG"
# blocks 0..2047 hold acknowledged patterns (8 commands of 256 KiB, tag xsrc)
"$ACKGEN" gen fill --dev "$IMG" --lun A --lba 0 --blocks 2048 --log "$D/init.log" --tag xsrc ||
	fail "ackgen gen fill on a file (O_DIRECT)"
# the counter block at 4096: "ACKCOUNT" + value (LE64)
counter() { python3 -c "import struct,sys; sys.stdout.buffer.write(b'ACKCOUNT'+struct.pack('<Q',$1)+bytes(496))" |
	dd of="$IMG" bs=512 seek=4096 conv=notrunc status=none; }
R2=$((2 << 32)) # run 2: command ids of the second boot
verify() { "$ACKGEN" verify --cuts 2 --gens w,caw --lun "A=$IMG" "$D/init.log" "$@"; }
# expect pass|fail WHAT LOG...: the oracle's verdict
expect() {
	local want=$1 what=$2 rc=0; shift 2
	verify "$@" >"$D/out" 2>&1 || rc=$?
	case "$want:$rc" in
	pass:0|fail:1) ;;
	*) cat "$D/out" >&2; fail "$what: oracle exit $rc, want $want" ;;
	esac
}
counter 2
cat >"$D/caw.log" <<EOF
S caw 4294967296 1 c A 4096 1 - 0
A caw 4294967296 2 ok c A 4096 1 - 0
S caw 4294967297 3 c A 4096 1 - 0
A caw 4294967297 4 ok c A 4096 1 - 0
S caw $R2 5 c A 4096 1 - 0
EOF
: >"$D/w.log"
expect pass "untouched after the fill, counter 2 of [2, 3]" "$D/w.log" "$D/caw.log"
counter 3
expect pass "counter 3: the CAW in flight happened" "$D/w.log" "$D/caw.log"
counter 4
expect fail "counter 4 outside [2, 3]" "$D/w.log" "$D/caw.log"
counter 1
expect fail "counter 1 below the acknowledged 2" "$D/w.log" "$D/caw.log"
counter 2

# cut 1: w had no command in flight; cut 2: a zeroing of blocks 8..15 in flight
echo "S w $R2 1 z A 8 8 - 0" >"$D/w.log"
expect pass "in-flight zeroing, nothing written" "$D/w.log" "$D/caw.log"
grep -q "^cut 1: does not count" "$D/out" && grep -q "^cut 2: counts" "$D/out" || { cat "$D/out" >&2; fail "cut counting"; }
dd if=/dev/zero of="$IMG" bs=512 seek=8 count=4 conv=notrunc status=none
expect pass "in-flight zeroing, half of it done" "$D/w.log" "$D/caw.log"
dd if=/dev/zero of="$IMG" bs=512 seek=16 count=1 conv=notrunc status=none
expect fail "a zeroed block outside the command in flight" "$D/w.log" "$D/caw.log"
"$ACKGEN" gen fill --dev "$IMG" --lun A --lba 0 --blocks 512 --log "$D/refill.log" --tag xsrc
# the same zeroing, but acknowledged: must be exact
printf 'S w %s 1 z A 8 8 - 0\nA w %s 2 ok z A 8 8 - 0\n' $R2 $R2 >"$D/w.log"
expect fail "acknowledged zeroing not on the disk" "$D/w.log" "$D/caw.log"
dd if=/dev/zero of="$IMG" bs=512 seek=8 count=8 conv=notrunc status=none
expect pass "acknowledged zeroing on the disk" "$D/w.log" "$D/caw.log"
# a copy in flight of blocks 0..7 onto 1024..1031: each block old or the source's
echo "S w $R2 3 x A 1024 8 A 0" >>"$D/w.log"
expect pass "in-flight copy, nothing copied" "$D/w.log" "$D/caw.log"
dd if="$IMG" of="$IMG" bs=512 skip=0 seek=1024 count=3 conv=notrunc status=none
expect pass "in-flight copy, 3 blocks copied" "$D/w.log" "$D/caw.log"
dd if="$IMG" of="$IMG" bs=512 skip=100 seek=1030 count=1 conv=notrunc status=none
expect fail "in-flight copy, a block from the wrong source" "$D/w.log" "$D/caw.log"
# ackgen busy: every generator with a command of run 2 in flight, as the logs say
printf 'S w/0 %s 1 w A 0 8 - 0\nS w/1 %s 1 w A 64 8 - 0\nA w/1 %s 2 ok w A 64 8 - 0\n' $R2 $((R2 + 1)) $((R2 + 1)) >"$D/busy.log"
printf 'S caw %s 1 r A 4096 1 - 0\nA caw %s 2 ok r A 4096 1 - 0\nS caw %s 3 c A 4096 1 - 0\n' $R2 $R2 $((R2 + 1)) >"$D/busy2.log"
"$ACKGEN" busy --run 2 --gens w,caw "$D/busy.log" "$D/busy2.log" >"$D/out" || fail "busy: w/0 and caw in flight: $(cat "$D/out")"
rc=0; "$ACKGEN" busy --run 3 --gens w,caw "$D/busy.log" "$D/busy2.log" >"$D/out" || rc=$?
[ $rc = 1 ] && grep -q "idle: w caw" "$D/out" || fail "busy: nothing of run 3 in flight, exit $rc: $(cat "$D/out")"
echo "A caw $((R2 + 1)) 4 ok c A 4096 1 - 0" >>"$D/busy2.log"
rc=0; "$ACKGEN" busy --run 2 --gens w,caw "$D/busy.log" "$D/busy2.log" >"$D/out" || rc=$?
[ $rc = 1 ] && grep -q "^idle: caw$" "$D/out" || fail "busy: caw answered, exit $rc: $(cat "$D/out")"
echo "ackgen_powercut: passed (relay receipts; in-flight commands: old or new per block, nothing else; CAW bound; cut counting; ackgen busy)" >&2
