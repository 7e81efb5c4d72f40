#!/bin/bash
# ctest tools/ackgen_acked: the oracle's rule at a replayed point (ackgen verify
# --acked, tests/vm/t_log_writes.sh) on a file written by `ackgen gen fill`
# (four commands t:0..t:3 of 512 blocks each, after an acknowledged zeroing of
# the whole range, command init:0, added to the log by hand):
#   - marked commands must hold their bytes, so must the file; with all four
#     marked the file passes;
#   - per tag the first unmarked command may have been in flight: old or new
#     bytes pass (t:3 unmarked: passes);
#   - the tag's later commands were not submitted yet: their bytes must not be
#     there (t:2 and t:3 unmarked, the file holds t:3's bytes: fails, naming
#     LBA 1536);
#   - an acknowledged command whose bytes are lost fails (t:1's range zeroed).
# Usage: ackgen_acked.sh ACKGEN TMPDIR
set -euo pipefail
ACKGEN=${1:?usage: ackgen_acked.sh ACKGEN TMPDIR}
TMP=${2:?}
mkdir -p "$TMP"
D=$(realpath "$(mktemp -d "$TMP/ackgen_acked.XXXXXX")")
trap 'rm -rf "$D"' EXIT
fail() { echo "ackgen_acked: FAIL: $*" >&2; exit 1; }

truncate -s 1M "$D/f"
echo "A init 0 1 ok z A 0 2048 - 0" >"$D/log"
"$ACKGEN" gen fill --dev "$D/f" --lun A --lba 0 --blocks 2048 --log "$D/log" --tag t ||
	fail "ackgen gen fill on a file (O_DIRECT)"
marks() { printf '%s\n' lw-start "$@" >"$D/marks"; }
verify() { "$ACKGEN" verify --acked "$D/marks" --lun "A=$D/f" "$D/log"; }

marks A:init:0 A:t:0 A:t:1 A:t:2 A:t:3
out=$(verify) || fail "all marked: $out"
grep -q "^5 marked commands (of 5 marks), 0 in flight.*2048 sectors checked, 0 wrong" <<<"$out" || fail "all marked: $out"
marks A:init:0 A:t:0 A:t:1 A:t:2
out=$(verify) || fail "t:3 in flight, its new bytes there: $out"
grep -q "1 in flight (512 of their sectors held the new bytes)" <<<"$out" || fail "in flight: $out"
marks A:init:0 A:t:0 A:t:1
st=0; out=$(verify) || st=$?
[ $st = 1 ] || fail "t:3 not yet submitted but its bytes there: exit $st: $out"
grep -q "^FAIL A LBA 1536: expected zeros" <<<"$out" || fail "t:3's bytes not named: $out"
grep -q "512 wrong" <<<"$out" || fail "not exactly t:3's 512 sectors: $out"
marks A:init:0 A:t:0 A:t:1 A:t:2 A:t:3
dd if=/dev/zero of="$D/f" bs=512 seek=512 count=512 conv=notrunc status=none
st=0; out=$(verify) || st=$?
[ $st = 1 ] && grep -q "^FAIL A LBA 512: expected a pattern (command 0.1), holds zeros" <<<"$out" ||
	fail "t:1 lost but not named: exit $st: $out"
# a command with no answer in the log (an incomplete log) is refused, never taken as in flight
marks A:init:0 A:t:0 A:t:1 A:t:2 A:t:3
printf 'S t %s 1\n' 4 >>"$D/log"
st=0; out=$(verify 2>&1) || st=$?
[ $st = 2 ] && grep -q "has no answer" <<<"$out" || fail "an unanswered command with --acked: exit $st: $out"
echo "ackgen_acked: ok"
