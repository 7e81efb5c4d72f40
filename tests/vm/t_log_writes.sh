#!/bin/bash
# Lost volatile cache on the real path (issue 23 item 6; docs/durability.md,
# "Lost volatile cache"): writes the pool's disk acknowledged but no flush
# covered are really lost, and vaaid must not have acknowledged any command
# whose data or metadata was among them.
#
# For each mode (VAAID_LOGWRITES_MODES, default "file raw"):
#   file  the pool is a file (and its .journal) on ext4 on the logged device
#   raw   the pool is the logged device itself
# the logged device is dm-log-writes over a loop device (160 MiB), its log on a
# second loop device (tools/replay-log/main.c says what the log holds), and the
# pool's device (the file system's, or the pool itself) a loop device over the
# logged one (direct I/O): a loop queue has a volatile cache and no FUA, so the
# block layer turns each FUA write into a write and a flush, and the log holds
# only plain writes in the order they completed, and flushes (dm-log-writes
# cannot order a plain write before a later FUA write of the same blocks;
# replay-log counts such "ambiguous" blocks, which must be 0). A vaaid
# of its own (state in the scratch disk) serves one 24 MiB LUN of that pool
# through tcm_loop; ackgen generators (tools/ackgen) run a mixed load on it for
# VAAID_LOGWRITES_SECONDS (default 8): O_DIRECT writes through sd, WRITE(16)
# and UNMAP, WRITE(16) and WRITE SAME(16) zero, EXTENDED COPY within the LUN.
# After each answer GOOD a generator puts a mark A:TAG:ID in the log (ioctl).
# Then the LUN, vaaid, the mount and the dm device go, and build/bin/replay-log
# replays the log onto a zeroed copy to VAAID_LOGWRITES_POINTS points per mode
# (default 12, spread over the load; flush points and mark points), plus
# VAAID_LOGWRITES_SUBSETS (default 2) states where a random subset of the
# writes a flush covered reached the disk (seed VAAID_LOGWRITES_SEED, default
# random, printed). At each point tests/vm/log-writes-point.sh, on a dm
# snapshot of the replayed state: mount (ext4 journal replay), vaai-check,
# pool-read (opens the pool as vaaid does: journal replay; checks the recovered
# pool's invariants; reads the volume through the pool API), and
# `ackgen verify --acked`: every
# sector holds what the last marked command put there (or, for each
# generator's one command that may have been in flight, its new bytes).
# Fails at the first point that does not hold; its logs go to
# build/vm-out/logwrites/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
BIN=${VAAID_BIN:-/vaaid/build/bin}
for b in ackgen replay-log pool-read vaai-check; do
	[ -x "$BIN/$b" ] || die "build $b first"
done
command -v dmsetup >/dev/null || { echo "no dmsetup in the guest image (scripts/vm/packages)"; exit 77; }
modprobe -a loop dm_mod dm_log_writes dm_snapshot 2>/dev/null ||
	{ echo "no dm-log-writes / dm-snapshot module in the guest kernel (scripts/vm/build-image MODULES)"; exit 77; }
export DM_DISABLE_UDEV=1 # no udev in the guest: dmsetup makes /dev/mapper nodes itself
POINTS=${VAAID_LOGWRITES_POINTS:-12}
LOAD=${VAAID_LOGWRITES_SECONDS:-8}
SUBSETS=${VAAID_LOGWRITES_SUBSETS:-2}
MODES=${VAAID_LOGWRITES_MODES:-file raw}
SEED=${VAAID_LOGWRITES_SEED:-$(( $(od -An -N2 -tu2 /dev/urandom) ))}
log "seed $SEED (VAAID_LOGWRITES_SEED=$SEED reproduces the replay's choices), $POINTS points per mode, $LOAD s of load"
DEFAULT_STATE=$STATE
LWROOT=$DEFAULT_STATE/logwrites
DATA_MB=160

loops=() dms=() mnt="" mine=false top=""
cleanup() {
	local rc=$?; set +e
	$mine && { lio_clear; stop_vaaid; }
	[ -n "$mnt" ] && mountpoint -q "$mnt" && umount "$mnt"
	[ -n "$top" ] && losetup -d "$top" 2>/dev/null && sleep 1 # (it holds the dm device)
	for d in "${dms[@]}"; do [ -n "$d" ] && dmsetup remove "$d" 2>/dev/null; done
	for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done
	STATE=$DEFAULT_STATE
	exit $rc
}
trap cleanup EXIT

# LBA ranges of the LUN (512-byte blocks)
R_W=0 R_WN=16384        # 8 MiB: O_DIRECT writes through sd, two threads
R_U=16384 R_UN=8192     # 4 MiB: WRITE(16) / UNMAP, two threads
R_Z=24576 R_ZN=8192     # 4 MiB: WRITE(16) / WRITE SAME(16) zero
R_XS=32768 R_XN=8192    # 4 MiB: copy source, filled once
R_XD=40960              # 4 MiB: EXTENDED COPY destination
LUN_BYTES=$(( 49152 * 512 ))

total=0
mode_n=0
for mode in $MODES; do
	mode_n=$((mode_n + 1))
	t0=$(date +%s)
	W=$LWROOT/$mode; rm -rf "$W"; mkdir -p "$W/mnt" "$W/logs"
	truncate -s ${DATA_MB}M "$W/data.img" "$W/replay.img"
	truncate -s 4G "$W/log.img"
	truncate -s 128M "$W/cow.img"
	ldata=$(losetup -f --show "$W/data.img"); loops+=("$ldata")
	llog=$(losetup -f --show "$W/log.img"); loops+=("$llog")
	sect=$(blockdev --getsz "$ldata")
	name=lw$mode
	dmsetup create "$name" --table "0 $sect log-writes $ldata $llog"; dms+=("$name")
	[ -b "/dev/mapper/$name" ] || dmsetup mknodes "$name"
	[ -b "/dev/mapper/$name" ] || die "/dev/mapper/$name did not appear"
	dev=$(losetup -f --show --direct-io=on "/dev/mapper/$name"); top=$dev
	[ "$(cat "/sys/block/${dev#/dev/}/queue/fua")" = 0 ] || die "$dev has FUA: FUA writes would reach the log"
	# a vaaid of this test's own, with its pool on the logged device
	stop_vaaid
	STATE=$W/state; mkdir -p "$STATE"; mine=true
	start_vaaid
	case $mode in
	file)
		mkfs.ext4 -q -E nodiscard "$dev"
		mnt=$W/mnt; mount "$dev" "$mnt"
		pool=$mnt/pool
		"$VAAICTL" pool create lw "$pool" 96M >/dev/null || die "$mode: pool create on ext4"
		;;
	raw)
		pool=$dev
		"$VAAICTL" pool create lw "$pool" 128M --force >/dev/null || die "$mode: pool create on $dev"
		;;
	*) die "unknown mode $mode (file or raw)" ;;
	esac
	read -r sg sd < <(lone_lun lw0 lw "$LUN_BYTES" "50014050aa1d0${mode_n}0")
	L=$W/logs
	for r in "$R_W $R_WN" "$R_U $R_UN" "$R_Z $R_ZN" "$R_XD $R_XN"; do
		set -- $r
		"$BIN/ackgen" gen zero --dev "$sg" --lun A --lba "$1" --blocks "$2" --log "$L/init.log" --tag init --mark "$name"
	done
	"$BIN/ackgen" gen fill --dev "$sd" --lun A --lba $R_XS --blocks $R_XN --log "$L/init.log" --tag xsrc --mark "$name"
	dmsetup message "$name" 0 mark lw-start
	g=(--run 1 --stop "$W/stop" --seed "$SEED" --seconds "$LOAD" --mark "$name")
	pids=()
	"$BIN/ackgen" gen write --dev "$sd" --lun A --lba $R_W --blocks $R_WN --threads 2 --log "$L/w.log" --tag w "${g[@]}" & pids+=($!)
	"$BIN/ackgen" gen unmap --dev "$sg" --lun A --lba $R_U --blocks $R_UN --threads 2 --log "$L/unmap.log" --tag unmap "${g[@]}" & pids+=($!)
	"$BIN/ackgen" gen wsz --dev "$sg" --lun A --lba $R_Z --blocks $R_ZN --log "$L/wsz.log" --tag wsz "${g[@]}" & pids+=($!)
	"$BIN/ackgen" gen xcopy --dev "$sg" --lun A --lba $R_XD --blocks $R_XN --src "$sg" --srclun A \
		--src-lba $R_XS --log "$L/xcopy.log" --tag xcopy "${g[@]}" & pids+=($!)
	for p in "${pids[@]}"; do wait "$p" || die "$mode: a generator failed (exit $?)"; done
	LOGS=("$L/init.log" "$L/w.log" "$L/unmap.log" "$L/wsz.log" "$L/xcopy.log")
	# the live LUN holds everything acknowledged (the oracle without --acked)
	out=$("$BIN/ackgen" verify --lun "A=$sd" "${LOGS[@]}") || { echo "$out" >&2; die "$mode: the live LUN fails the oracle"; }
	log "$mode: load: $(tail -n 1 <<<"$out" | cut -d';' -f1)"
	lio_clear
	stop_vaaid; mine=false
	STATE=$DEFAULT_STATE
	if [ -n "$mnt" ]; then umount "$mnt"; mnt=""; fi
	losetup -d "$dev"; top=""
	for _ in $(seq 1 50); do [ -e "/sys/block/${dev#/dev/}/loop" ] || break; sleep 0.1; done
	dmsetup remove "$name" # writes the log's last entries and its super
	dms=("${dms[@]/$name}")
	# replay onto the zeroed copy; each point is checked on a snapshot of it
	lrep=$(losetup -f --show "$W/replay.img"); loops+=("$lrep")
	lcow=$(losetup -f --show "$W/cow.img"); loops+=("$lcow")
	t1=$(date +%s)
	rout=$(LW_MODE=$mode LW_DIR=$W LW_ORIGIN=$lrep LW_COW=$lcow LW_SECTORS=$sect LW_BIN=$BIN \
		LW_LOGS="${LOGS[*]}" "$BIN/replay-log" "$W/log.img" "$W/replay.img" --from lw-start \
		--points "$POINTS" --subsets "$SUBSETS" --seed "$SEED" --marks "$W/marks" \
		--check "$VMDIR/log-writes-point.sh") || {
		echo "$rout" >&2
		rm -rf "$OUT/logwrites"; mkdir -p "$OUT/logwrites"
		cp -r "$L" "$W/marks" "$OUT/logwrites/" 2>/dev/null
		"$BIN/replay-log" "$W/log.img" --list > "$OUT/logwrites/log.list" 2>&1
		die "$mode: a replayed state lost acknowledged data or is inconsistent (logs in build/vm-out/logwrites/)"
	}
	# the replay of the whole log (the last point) is what the logged device holds
	cmp -s "$W/replay.img" "$W/data.img" ||
		die "$mode: the replay of the whole log differs from the logged device ($(cmp "$W/replay.img" "$W/data.img" 2>&1 | head -c 200)): the replay's order is not the device's"
	grep -q ", 0 ambiguous blocks" <<<"$rout" ||
		die "$mode: FUA writes reached the log: $(tail -n 1 <<<"$rout")"
	n=$(grep -c '^point [0-9]*:' <<<"$rout")
	total=$((total + n))
	log "$mode: $(head -n 1 <<<"$rout" | sed 's/^replay-log: //')"
	grep '^  point' <<<"$rout" | sed 's/^  /    /' >&2
	log "$mode: $(tail -n 1 <<<"$rout" | sed 's/^replay-log: //'); load $((t1 - t0)) s, replay and checks $(( $(date +%s) - t1 )) s"
	losetup -d "$lcow"; losetup -d "$lrep"; losetup -d "$llog"; losetup -d "$ldata"; loops=()
	dms=()
	rm -rf "$W"
done
[ "$total" -gt 0 ] || die "no point was checked"
log "$total replayed points: 0 acknowledged writes lost, 0 vaai-check findings"
