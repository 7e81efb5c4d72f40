#!/bin/bash
# Two gateways of one RBD pool in one guest, through the real LIO (issue 26
# item 3; docs/ceph.md "Two gateways in one guest"):
#  - a single-node cluster inside the guest, as t_rbd_lun.sh starts it;
#  - vaaid A: [alua] group 1, peers 2, handler vaai ([tcmu] leave = vaaib), the
#    run's control socket and PID file, its own state directory; it creates the
#    pool on rbd:rbd/vaaid-gw ([pool] create = yes) and holds its lock;
#  - vaaid B: [alua] group 2, peers 1, [tcmu] handler = vaaib, leave = vaai,
#    --no-dbus, its own control socket and state directory; the same pool is
#    standby there (read-only view);
#  - the same volume gw/vol0 as user:vaai (A) and user:vaaib (B) backstores,
#    each exported through its own tcm_loop target: two SCSI disks;
#  - checked with SG_IO (tests/vm/sgio.py: status and sense exactly): the LU
#    designators of VPD 83h (NAA...), VPD 80h and VPD B0h the same bytes on both
#    paths; the target port group and relative target port designators 1 and 2;
#    REPORT TARGET PORT GROUPS the same bytes on both, group 1 active/optimized,
#    group 2 standby; a READ through B: CHECK CONDITION, NOT READY, 04h/0Bh;
#  - data written through A; `vaaictl --socket B pool takeover gw`: B's path
#    active/optimized (RTPG through B: group 2 A/O, group 1 unavailable: the
#    pool's shared ALUA record marks the group B fenced) and reading A's data
#    (cmp); A's path, with no I/O sent: RTPG the same bytes as B's within 30 s
#    (A's pool watch notices the fence and reads the record), then a READ
#    answers NOT READY 04h/0Ch (fenced: unavailable).
# Every process (both vaaids, the cluster's daemons) is stopped by its PID on
# every path, LIO cleared while both daemons still answer for their backstores
# (a backstore's removal waits for its daemon's reply), and the run's own vaaid
# started again as the other tests expect it. Skipped (77) without Ceph in the
# image or with a vaaid built without librbd.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v ceph-osd >/dev/null || { echo "no Ceph in the guest image (scripts/vm/packages)"; exit 77; }
ldd "$VAAID" | grep librbd >/dev/null || { echo "vaaid was built without librbd (-DVAAID_RBD=ON)"; exit 77; }
CEPHDIR=/var/lib/vaaid/t_alua_gateways-ceph
ASTATE=/var/lib/vaaid/t_alua_gateways-a
BSTATE=/var/lib/vaaid/t_alua_gateways-b
BSOCK=/run/vaaid-b/control
IMAGE=rbd/vaaid-gw
SIZE=$((256 << 20))
SGIO="python3 $VMDIR/sgio.py"
work=$(mktemp -d)
bpid=""
t_start=$(date +%s)

wait_sock() { # wait_sock SOCKET PID: 0 once the daemon PID answers on SOCKET
	for _ in $(seq 1 300); do
		[ -S "$1" ] && "$VAAICTL" --socket "$1" status >/dev/null 2>&1 && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
launch_b() { # vaaid B in the background, its PID in bpid; 0 once it answers
	"$VAAID" --config "$work/b.conf" --state-dir "$BSTATE" --control-socket "$BSOCK" --no-dbus \
		>>"$OUT/vaaid-b.log" 2>&1 &
	bpid=$!
	wait_sock "$BSOCK" "$bpid"
}
# B is alive while its PID runs $VAAID (not by name: a zombie or a reused PID is not B)
b_alive() { [ -n "$bpid" ] && [ "$(readlink "/proc/$bpid/exe" 2>/dev/null)" = "$(readlink -f "$VAAID")" ]; }
stop_b() {
	b_alive || return 0
	kill -TERM "$bpid"
	for _ in $(seq 1 600); do
		b_alive || return 0
		sleep 0.1
	done
	kill -KILL "$bpid" 2>/dev/null
	die "vaaid B did not stop within 60 s of SIGTERM (killed)"
}

cleanup() {
	local rc=$?
	set +e
	# A backstore's removal waits for a netlink reply; with one daemon gone the other
	# answers in its place (src/daemon/handler_alive.c), with none the kernel waits
	# for nobody: LIO is cleared whichever daemons still run.
	lio_clear
	( stop_b ) || rc=1
	( stop_vaaid ) || rc=1 # A
	/vaaid/scripts/ceph/cluster stop "$CEPHDIR" && rm -rf "$CEPHDIR" # (start wants a new DIR)
	rm -rf "$work" "$ASTATE" "$ASTATE-c" "$BSTATE" "$(dirname "$BSOCK")"
	( start_vaaid ) || rc=1 # the run's own daemon, as the next test expects it
	log "guest time of the test: $(( $(date +%s) - t_start )) s"
	exit $rc
}
trap cleanup EXIT

stop_vaaid # the run's own daemon (back in cleanup)
t0=$(date +%s)
/vaaid/scripts/ceph/cluster start "$CEPHDIR" --mon-port auto >"$work/env" || die "the cluster did not start"
export CEPH_CONF=$CEPHDIR/ceph.conf
log "cluster up in $(( $(date +%s) - t0 )) s"

gw_conf() { # gw_conf CREATE GROUP PEER HANDLER LEAVE
	printf '[ceph]\nconf = %s\n[pool gw]\npath = rbd:%s\nsize = 1G\ncreate = %s\n' \
		"$CEPH_CONF" "$IMAGE" "$1"
	shift
	printf '[alua]\ngroup = %s\npeers = %s\n[tcmu]\nhandler = %s\nleave = %s\n' "$@"
}
gw_conf yes 1 2 vaai vaaib >"$work/a.conf" # A makes the image
gw_conf auto 2 1 vaaib vaai >"$work/b.conf" # B never would (auto: a missing image stops it)
echo "$work/a.conf" >"$work/a.path"
mkdir -p "$ASTATE" "$BSTATE" "$(dirname "$BSOCK")"
STATE=$ASTATE VAAID_CONFIG_PATHFILE=$work/a.path start_vaaid
pool_state() { # pool_state SOCKET: the state of pool gw there
	"$VAAICTL" --socket "$1" --json status | python3 -c '
import json, sys
print([p["pool"]["state"] for p in json.load(sys.stdin)["pools"] if p["pool"]["name"] == "gw"][0])'
}
[ "$(pool_state /run/vaaid/control)" = active ] || die "A: pool gw is not active"

# gw_lun HBA NAME CFG WWN: a user backstore NAME (dev_config CFG) on user_HBA,
# exported as LUN 0 of tcm_loop target naa.<WWN>1 (nexus naa.<WWN>2); prints
# "/dev/sgX /dev/sdY" (the target's SCSI address: its tpgt's address file).
gw_lun() {
	local d=$C/core/user_$1/$2 tl=$C/loopback/naa.${4}1/tpgt_1 addr dev sg="" sd=""
	mkdir -p "$d"
	echo -n "dev_config=$3" >"$d/control"
	echo -n "dev_size=$SIZE" >"$d/control"
	echo -n "hw_max_sectors=8192" >"$d/control"
	echo 1 >"$d/enable" || die "enable $2 ($3)"
	echo 120 >"$d/attrib/cmd_time_out" 2>/dev/null || true
	mkdir -p "$tl/lun/lun_0"
	echo -n "naa.${4}2" >"$tl/nexus"
	ln -s "$d" "$tl/lun/lun_0/$2"
	addr=$(cat "$tl/address") # H:0:TPGT
	for _ in $(seq 1 100); do
		dev=/sys/bus/scsi/devices/$addr:0
		sg=$(ls "$dev/scsi_generic" 2>/dev/null || true)
		sd=$(ls "$dev/block" 2>/dev/null || true)
		[ -n "$sg" ] && [ -n "$sd" ] && break
		sleep 0.2
	done
	[ -n "$sg" ] && [ -n "$sd" ] || die "$2 did not appear at $addr"
	echo "/dev/$sg /dev/$sd"
}
read -r sga sda < <(gw_lun 1 gwa vaai/gw/vol0 50014050aa2a000)
launch_b || die "vaaid B did not start (build/vm-out/vaaid-b.log)"
[ "$(pool_state "$BSOCK")" = standby ] || die "B: pool gw is not standby"
read -r sgb sdb < <(gw_lun 2 gwb vaaib/gw/vol0 50014050aa2b000)
[ -n "${sdb:-}" ] && [ -n "${sda:-}" ] || die "the LUNs did not appear"
log "A: $sga $sda, B: $sgb $sdb (user:vaai and user:vaaib on gw/vol0)"

# cmd DEV CDB [ALLOC]: sgio.py's line, past unit attentions (the first command
# after a LUN appears or its ALUA states change gets 06h/29h or 06h/2Ah/06h)
cmd() {
	local out
	for _ in 1 2 3 4 5; do
		out=$($SGIO "$@") || die "SG_IO on $1 failed"
		case "$out" in *" key=6 "*) out=${out#* key=6 }; log "$1: unit attention ${out% data=*}"; continue ;; esac
		echo "$out"
		return 0
	done
	die "$1: still a unit attention after 5 commands: $out"
}
data() { local o; o=$(cmd "$@"); [[ $o == status=00\ * ]] || die "$1 $2: $o"; echo "${o##*data=}"; }
sense() { local o; o=$(cmd "$@"); o=${o% data=*}; echo "${o#status=}"; } # "SS key=K asc=AA ascq=QQ"

# VPD 83h designators: "assoc type value" lines (association 0: the logical unit)
desig() {
	python3 - "$1" <<'PY'
import sys
b = bytes.fromhex(sys.argv[1]); i = 4; end = 4 + int.from_bytes(b[2:4], "big")
while i + 4 <= end:
    n = b[i + 3]
    print((b[i + 1] >> 4) & 3, b[i + 1] & 15, b[i + 4:i + 4 + n].hex())
    i += 4 + n
PY
}
vpd() { data "$1" "12 01 $2 00 ff 00" 255; }
va=$(vpd "$sga" 83) vb=$(vpd "$sgb" 83)
lu_a=$(desig "$va" | grep '^0 ') lu_b=$(desig "$vb" | grep '^0 ')
[ -n "$lu_a" ] && [ "$lu_a" = "$lu_b" ] || die "VPD 83h: the LU designators differ: A: $lu_a B: $lu_b"
grep -q '^0 3 6' <<<"$lu_a" || die "VPD 83h: no NAA (IEEE registered extended) designator: $lu_a"
# target port: relative target port (4h) and target port group (5h), association 1
[ "$(desig "$va" | grep '^1 ' | tr '\n' ' ')" = "1 4 00000001 1 5 00000001 " ] ||
	die "VPD 83h through A: port designators: $(desig "$va" | grep '^1 ' | tr '\n' ' ')"
[ "$(desig "$vb" | grep '^1 ' | tr '\n' ' ')" = "1 4 00000002 1 5 00000002 " ] ||
	die "VPD 83h through B: port designators: $(desig "$vb" | grep '^1 ' | tr '\n' ' ')"
for p in 80 b0; do
	a=$(vpd "$sga" $p) b=$(vpd "$sgb" $p)
	[ -n "$a" ] && [ "$a" = "$b" ] || die "VPD ${p}h differs: A: $a B: $b"
done
log "same LU designators ($(awk '{print $3}' <<<"$lu_a" | tr '\n' ' ')), VPD 80h and B0h; port ids 1 and 2"

# REPORT TARGET PORT GROUPS (length only header): the same bytes on both paths;
# descriptors of 12 bytes, group 1 then group 2, state in byte 0, status in byte 5
rtpg() { data "$1" "a3 0a 00 00 00 00 00 00 01 00 00 00" 256; }
states() { # "G:STATE/STATUS ..." of an RTPG answer
	python3 -c '
import sys
b = bytes.fromhex(sys.argv[1]); n = 4 + int.from_bytes(b[0:4], "big")
print(" ".join("%d:%x/%x" % (int.from_bytes(b[i + 2:i + 4], "big"), b[i] & 15, b[i + 5]) for i in range(4, n, 12)))' "$1"
}
ra=$(rtpg "$sga") rb=$(rtpg "$sgb")
[ "$ra" = "$rb" ] || die "RTPG differs: A: $ra B: $rb"
[ "$(states "$ra")" = "1:0/0 2:2/0" ] || die "RTPG: $(states "$ra") (expected 1 active/optimized, 2 standby)"
log "RTPG the same on both paths: $(states "$ra") (group:state/status)"

READ10="28 00 00 00 00 00 00 00 08 00" # 8 blocks at LBA 0
[ "$(sense "$sgb" "$READ10" 4096)" = "02 key=2 asc=04 ascq=0b" ] ||
	die "READ through B (standby): $(sense "$sgb" "$READ10" 4096), expected NOT READY 04h/0Bh"
log "READ through B: CHECK CONDITION, NOT READY, 04h/0Bh (standby)"

head -c $((4 << 20)) /dev/urandom >"$work/pat"
dd if="$work/pat" of="$sda" bs=1M oflag=direct status=none || die "writing through A"
cmp "$work/pat" <(dd if="$sda" bs=1M count=4 iflag=direct status=none) || die "A reads back other data"

t0=$(date +%s%N)
"$VAAICTL" --socket "$BSOCK" pool takeover gw >&2 || die "vaaictl pool takeover gw on B"
log "takeover by B: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
[ "$(pool_state "$BSOCK")" = active ] || die "B: pool gw not active after the takeover"
rb=$(rtpg "$sgb")
# B shows the group it fenced unavailable (the pool's shared ALUA record)
[ "$(states "$rb")" = "1:3/2 2:0/2" ] ||
	die "RTPG through B after the takeover: $(states "$rb") (expected 1 unavailable, 2 active/optimized)"
cmp "$work/pat" <(dd if="$sdb" bs=1M count=4 iflag=direct status=none) ||
	die "B does not read the data written through A"
log "B after the takeover: RTPG $(states "$rb"); A's 4 MiB read back through B"

# A, fenced and idle: its pool watch (src/daemon/pool_watch.c, every 5 s) notices
# the fence with no I/O sent: RTPG through A (allowed in every state) answers the
# same bytes as B's within a few periods; then a READ through A answers 04h/0Ch
t0=$(date +%s)
until ra=$(rtpg "$sga"); [ "$ra" = "$rb" ]; do
	[ $(( $(date +%s) - t0 )) -lt 30 ] ||
		die "RTPG through A 30 s after the takeover, no I/O sent: $(states "$ra"), through B $(states "$rb") (expected the same bytes: 1 unavailable, 2 active/optimized)"
	sleep 1
done
log "A noticed the fence with no I/O in $(( $(date +%s) - t0 )) s: RTPG through A the same bytes as through B: $(states "$ra")"
s=$(sense "$sga" "$READ10" 4096)
[ "$s" = "02 key=2 asc=04 ascq=0c" ] || die "READ through A (fenced): $s, expected NOT READY 04h/0Ch"
log "A fenced: READ NOT READY 04h/0Ch (unavailable); RTPG through A $(states "$ra"), through B $(states "$rb")"

# One daemon per handler on a host (src/daemon/handler_alive.c): a third vaaid with
# A's handler (a pool of its own) is refused before it opens or makes anything
CSTATE=$ASTATE-c # (O_DIRECT: not on /tmp's tmpfs)
mkdir -p "$CSTATE"
printf '[pool default]\npath = %s/d.pool\nsize = 64M\n[tcmu]\nhandler = vaai\n' "$CSTATE" >"$work/c.conf"
st=0
timeout 120 "$VAAID" --config "$work/c.conf" --state-dir "$CSTATE" --control-socket "$work/c.sock" \
	--no-dbus >"$work/c.log" 2>&1 || st=$?
[ "$st" = 1 ] && grep -q "another vaaid on this host serves user:vaai backstores" "$work/c.log" ||
	die "a second vaaid for user:vaai: exit $st, $(tail -3 "$work/c.log")"
[ ! -e "$CSTATE/d.pool" ] || die "the refused second vaaid made its pool first"
log "a second vaaid for user:vaai refused: $(grep -o 'another vaaid[^(]*' "$work/c.log")"

# [tcmu] leave with the other daemon stopped: A answers in B's place, so that a
# configfs write never waits for a reply nobody sends. B stopped, enabling a new
# user:vaaib backstore is refused at once (A replies -ENODEV; Debian 12's kernel
# makes the write fail with EIO), and removing B's is answered (in cleanup).
stop_b
d=$C/core/user_2/gwb2
mkdir -p "$d"
echo -n "dev_config=vaaib/gw/vol0" >"$d/control"
echo -n "dev_size=$SIZE" >"$d/control"
t0=$(date +%s)
# (a write the kernel waits on for a reply cannot be interrupted: in the background,
# so that silence fails here, not at the guest's time limit)
sh -c "echo 1 >'$d/enable'" 2>"$work/enable.err" &
epid=$!
for _ in $(seq 1 100); do kill -0 "$epid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$epid" 2>/dev/null && die "enabling a user:vaaib backstore with vaaid B stopped still waits after 10 s (nobody answered)"
if wait "$epid"; then
	die "enable of a user:vaaib backstore succeeded with vaaid B stopped"
fi
rmdir "$d"
grep -q "gwb2 is user:vaaib, whose daemon is not running on this host" "$OUT/vaaid.log" ||
	die "A's log does not say it answered for user:vaaib"
log "B stopped: enabling a user:vaaib backstore refused by A in $(( $(date +%s) - t0 )) s ($(cat "$work/enable.err"))"
log "two gateways ok"
