#!/bin/bash
# LIO LUNs whose pool is a Ceph RBD image (issue 26 item 4), in the guest:
#  - a single-node cluster inside the guest (scripts/ceph/cluster: qemu's user
#    networking cannot carry Ceph's addresses to the host), stopped by its
#    daemons' PIDs on every path (the EXIT trap);
#  - a vaaid of its own (the run's daemon is stopped first and comes back with
#    the next test) whose pool "default" is rbd:rbd/vaaid-guest, so that
#    setup-luns.sh makes the LUNs (configfs, tcm_loop + iSCSI) as for every
#    other guest test; its state directory is its own;
#  - the pool is on RBD: vaaictl names the image, and 32 MiB written through a
#    LUN become new data objects in Ceph;
#  - sg_xcopy of those 32 MiB vol0 -> vol1 (1 MiB extents, aligned: shared),
#    cmp of source and destination ranges, and the copy moved no data: the
#    pool's used space is unchanged, its sharing savings grew by 32 MiB, its
#    store read nothing and wrote only journal-sized bytes, and Ceph has no
#    new data objects;
#  - libiscsi's basic suites (t_libiscsi.sh, over SG_IO and iSCSI) on vol0,
#    passes, failures, skips and known conflicts counted separately. Under TCG
#    the whole basic list takes ~15 min on RBD (the OSD, the mon and librbd
#    share the guest's two emulated CPUs), so by default (run-all.sh, CI) only
#    READ(16) and WRITE(16) (every read and write flavour of the suites:
#    FUA, DPO, beyond the end, zero blocks...) and the 7 that do no I/O
#    (Inquiry, ReadCapacity10/16, TestUnitReady, ModeSense6,
#    ReportSupportedOpcodes, Mandatory): ~3 min. The 10- and 12-byte CDBs,
#    VERIFY and WRITE AND VERIFY reach the store through the same reads and
#    writes and run on file pools in t_libiscsi.sh. RBD_LIBISCSI=full runs
#    t_libiscsi.sh's whole list (~15 min); SUITES names the suites;
#  - memory: the guest's free memory before and after, the peak RSS of the
#    Ceph daemons and vaaid (stderr).
# Skipped (77) without Ceph in the guest image or with a vaaid built without
# librbd (-DVAAID_RBD=OFF).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v ceph-osd >/dev/null || { echo "no Ceph in the guest image (scripts/vm/packages)"; exit 77; }
# (grep -q would end the pipe early: ldd's SIGPIPE fails it under pipefail)
ldd "$VAAID" | grep librbd >/dev/null || { echo "vaaid was built without librbd (-DVAAID_RBD=ON)"; exit 77; }
CEPHDIR=/var/lib/vaaid/t_rbd_lun-ceph
RSTATE=/var/lib/vaaid/t_rbd_lun-state
CONF=/run/t_rbd_lun.conf
IMAGE=rbd/vaaid-guest
MiB=$((1 << 20))
COPY=32 # MiB written, then copied
work=$(mktemp -d)

mem_avail() { awk '/^MemAvailable/ {print int($2 / 1024)}' /proc/meminfo; }
peak_rss() { # peak_rss NAME PID: "NAME VmHWM MiB"
	awk -v n="$1" '/^VmHWM/ {printf "%s %d MiB", n, $2 / 1024}' "/proc/$2/status" 2>/dev/null || true
}
cleanup() {
	local rc=$?
	set +e
	# LIO's backstores go while their daemon serves them, then the daemon (it
	# closes the image), then the cluster, by PIDs
	if [ -n "$(vaaid_pid)" ]; then
		lio_clear
		( stop_vaaid ) || rc=1 # (its die ends the subshell only: the cluster stops anyway)
	fi
	/vaaid/scripts/ceph/cluster stop "$CEPHDIR"
	rm -rf "$work" "$RSTATE" "$CONF" "$CONF.path"
	exit $rc
}
trap cleanup EXIT

stop_vaaid # the run's own daemon (run-all.sh starts it again for the next test)
mem0=$(mem_avail)
t0=$(date +%s)
/vaaid/scripts/ceph/cluster start "$CEPHDIR" --mon-port auto >"$work/env" || die "the cluster did not start"
export CEPH_CONF=$CEPHDIR/ceph.conf
log "cluster up in $(( $(date +%s) - t0 )) s"

cat >"$CONF" <<EOF
[ceph]
conf = $CEPH_CONF
[pool default]
path = rbd:$IMAGE
size = 2G
create = yes
EOF
mkdir -p "$RSTATE"
echo "$CONF" >"$CONF.path"
STATE=$RSTATE VAAID_CONFIG_PATHFILE=$CONF.path start_vaaid

# the LUNs' pool is the image
"$VAAICTL" --json status >"$work/s0" || die "vaaictl status: $(cat "$work/s0")"
python3 - "$work/s0" "rbd:$IMAGE" <<'PY' || die "pool default is not on rbd:$IMAGE"
import json, sys
p = [x["pool"] for x in json.load(open(sys.argv[1]))["pools"] if x["pool"]["name"] == "default"]
assert p and p[0]["path"] == sys.argv[2] and p[0]["state"] == "active", p
PY

mapfile -t L < <(/vaaid/tests/vm/setup-luns.sh 2 1G)
read -r _ sg0 sd0 _ <<<"${L[0]:-}"
read -r _ sg1 sd1 _ <<<"${L[1]:-}"
[ -n "${sd1:-}" ] || die "setup-luns failed"

data_objects() { # (rados' complaint that vaaid's client holds client.admin's admin socket: to a file)
	rados -p rbd ls 2>>"$work/rados.err" | grep -c '^rbd_data\.' || true
}
obj0=$(data_objects)
head -c $((COPY * MiB)) /dev/urandom >"$work/pat"
dd if="$work/pat" of="$sd0" bs=1M oflag=direct status=none || die "writing $COPY MiB to vol0"
obj1=$(data_objects)
# 1 MiB objects: one per MiB written (the journal's own are a few more)
[ $((obj1 - obj0)) -ge $COPY ] ||
	die "writing $COPY MiB through the LUN made $((obj1 - obj0)) new data objects in Ceph, expected >= $COPY"
log "$COPY MiB written through vol0: $((obj1 - obj0)) new data objects in Ceph"

"$VAAICTL" --json stats default >"$work/s1"
t0=$(date +%s)
sg_xcopy if="$sg0" of="$sg1" bs=512 bpt=8192 count=$((COPY << 11)) || die "sg_xcopy vol0 -> vol1"
log "sg_xcopy of $COPY MiB: $(( $(date +%s) - t0 )) s"
"$VAAICTL" --json stats default >"$work/s2"
obj2=$(data_objects)
cmp "$work/pat" <(dd if="$sd0" bs=1M count=$COPY iflag=direct status=none) || die "vol0 differs from what was written"
cmp "$work/pat" <(dd if="$sd1" bs=1M count=$COPY iflag=direct status=none) || die "the copy on vol1 differs"
python3 - "$work/s1" "$work/s2" $((COPY * MiB)) <<'PY' || die "the copy moved data (not shared)"
import json, sys
def pool(f):
    return [x for x in json.load(open(f))["pools"] if x["name"] == "default"][0]["pool"]
b, a, n = pool(sys.argv[1]), pool(sys.argv[2]), int(sys.argv[3])
io_b, io_a = b["counters"]["store_io"], a["counters"]["store_io"]
d = {k: a[k] - b[k] for k in ("used", "sharing_savings")}
d.update({k: io_a[k] - io_b[k] for k in ("bytes_read", "bytes_written")})
d["journal_bytes"] = a["counters"]["journal_bytes"] - b["counters"]["journal_bytes"]
print("xcopy deltas: " + " ".join("%s=%d" % kv for kv in sorted(d.items())), file=sys.stderr)
assert d["used"] == 0, "used grew"
assert d["sharing_savings"] == n, "sharing_savings grew by %d, not %d" % (d["sharing_savings"], n)
assert d["bytes_read"] < n // 16, "the store read data"
assert d["bytes_written"] < n // 16, "the store wrote data"
PY
[ $((obj2 - obj1)) -lt $((COPY / 4)) ] ||
	die "the copy made $((obj2 - obj1)) new data objects in Ceph (a data copy makes $COPY)"
log "xcopy on RBD: shared, no data moved; $((obj2 - obj1)) new data objects; cmp equal"

# libiscsi's basic suites on vol0 (t_libiscsi.sh reuses the LUN setup-luns made)
if [ "${RBD_LIBISCSI:-}" != full ]; then
	export SUITES=${SUITES:-"SCSI.Inquiry SCSI.ReadCapacity10 SCSI.ReadCapacity16 SCSI.TestUnitReady
SCSI.ModeSense6 SCSI.ReportSupportedOpcodes SCSI.Mandatory SCSI.Read16 SCSI.Write16"}
fi
t0=$(date +%s)
rc=0
KNOWN=$VMDIR/libiscsi-known-conflicts.txt SKIPS_NAME=rbd LOGTAG=-rbd \
	bash "$VMDIR/t_libiscsi.sh" 2> >(tee "$work/li" >&2) || rc=$?
sleep 0.5 # (the tee)
tot=$(grep -o 'passed=[0-9]* failed=[0-9]* skipped=[0-9]* conflicts=[0-9]*' "$work/li" |
	awk -F'[= ]' '{p += $2; f += $4; s += $6; c += $8; n++}
		END {printf "suites=%d passed=%d failed=%d skipped=%d conflicts=%d", n / 2, p, f, s, c}')
log "libiscsi on the RBD LUN (SG_IO + iSCSI, $(( $(date +%s) - t0 )) s): $tot"
[ $rc -eq 0 ] || die "libiscsi on the RBD LUN: failures (build/vm-out/libiscsi-rbd-*.log)"

log "memory: MemAvailable $mem0 MiB before the cluster, $(mem_avail) MiB now; peak RSS:" \
	"$(for d in mon mgr osd; do peak_rss "ceph-$d" "$(cat "$CEPHDIR/$d.pid")"; echo -n ", "; done)$(peak_rss vaaid "$(vaaid_pid)")"
log "rbd on LIO ok"
