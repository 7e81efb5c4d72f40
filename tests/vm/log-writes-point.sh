#!/bin/bash
# One replayed crash state of t_log_writes.sh, run by replay-log at each point
# (REPLAY_POINT, REPLAY_ENTRY, REPLAY_KIND; the marks so far in $LW_DIR/marks).
# On a dm snapshot of the replayed device (LW_ORIGIN; its changes go to LW_COW
# and are thrown away): file mode mounts the ext4 (its journal replays), raw
# mode uses the device; then vaai-check (read-only), pool-read (opens the pool
# for writing as vaaid does: journal replay, small writes written home; checks
# the recovered pool's invariants as vaai-check does; copies volume lw0 out
# through the pool API, to tmpfs), and `ackgen verify --acked` on the copy. Prints one line; exit 1 names what failed.
set -uo pipefail
snap=lwsnap
D=$LW_DIR/point; mkdir -p "$D" "$D/mnt"
fail() { echo "  point $REPLAY_POINT (entry $REPLAY_ENTRY, $REPLAY_KIND): FAIL: $*"; exit 1; }
cleanup() {
	mountpoint -q "$D/mnt" && umount "$D/mnt"
	dmsetup remove "$snap" 2>/dev/null
	rm -f "${dump:-}"
}
trap cleanup EXIT
ts=() # step times (guest clock), printed with the point
step() { ts+=("$1 $(date +%s%N)"); }
step start
dmsetup create "$snap" --table "0 $LW_SECTORS snapshot $LW_ORIGIN $LW_COW N 8" || fail "dmsetup create snapshot"
dev=/dev/mapper/$snap
[ -b "$dev" ] || dmsetup mknodes "$snap"
step snapshot
if [ "$LW_MODE" = file ]; then
	mount -t ext4 "$dev" "$D/mnt" 2>"$D/mount.err" || fail "mount: $(cat "$D/mount.err")"
	pool=$D/mnt/pool
	[ -e "$pool" ] || fail "no pool file on the file system"
else
	pool=$dev
fi
step mount
"$LW_BIN/vaai-check" "$pool" >"$D/check1" 2>&1 || fail "vaai-check: $(tr '\n' ' ' <"$D/check1")"
step check
dump=${LW_TMP:-/run}/lw-dump # tmpfs: the copy is never on a disk
"$LW_BIN/pool-read" "$pool" lw0 "$dump" >"$D/read" 2>&1 || fail "pool-read: $(tr '\n' ' ' <"$D/read")"
step read
# shellcheck disable=SC2086 # LW_LOGS is a list of paths without spaces
"$LW_BIN/ackgen" verify --acked "$LW_DIR/marks" --lun "A=$dump" $LW_LOGS >"$D/verify" 2>&1 ||
	{ cat "$D/verify"; fail "the oracle: $(tail -n 1 "$D/verify")"; }
step verify
times=$(for ((i = 1; i < ${#ts[@]}; i++)); do
	set -- ${ts[i-1]}; a=$2; set -- ${ts[i]}; echo -n "$1 $(( ($2 - a) / 1000000 )) "; done)
echo "  point $REPLAY_POINT ($REPLAY_KIND): $(sed 's/.*journal replayed/replayed/; s/: consistent//' "$D/check1" | cut -c1-80); $(tail -n 1 "$D/verify" | cut -d';' -f1); ms: $times"
