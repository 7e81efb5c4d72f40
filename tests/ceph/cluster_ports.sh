#!/bin/bash
# ctest ceph/cluster_ports: two `scripts/ceph/cluster start DIR --mon-port auto`
# at the same moment pick different mon ports (the pick holds a lock of the
# machine until its mon listens) and both clusters work, each with its own
# fsid. Before the lock, both picked the same free port: one mon could not bind
# it and that start's OSD joined the other cluster. Both stopped by their PIDs
# (cluster stop) on every path. Usage: cluster_ports.sh CLUSTER_SCRIPT TMPDIR
set -euo pipefail
CLUSTER=${1:?usage: cluster_ports.sh CLUSTER_SCRIPT TMPDIR}
TMP=${2:?}
mkdir -p "$TMP"
D=$(mktemp -d "$TMP/cluster_ports.XXXXXX")
pa="" pb=""
cleanup() {
	for p in $pa $pb; do kill -KILL -- "-$p" 2>/dev/null || true; done
	"$CLUSTER" stop "$D/a" || true
	"$CLUSTER" stop "$D/b" || true
	rm -rf "$D"
}
trap cleanup EXIT
fail() { echo "cluster_ports: FAIL: $*" >&2; tail -n 5 "$D"/*.out >&2 2>/dev/null || true; exit 1; }
# each start in a process group of its own (setsid), killed whole on failure
setsid "$CLUSTER" start "$D/a" --mon-port auto >"$D/a.out" 2>&1 & pa=$!
setsid "$CLUSTER" start "$D/b" --mon-port auto >"$D/b.out" 2>&1 & pb=$!
# both within 200 s (each takes ~10-40 s; a lost race hung for minutes), else
# killed, daemons and all, by their process groups (cleanup) before ctest's
# timeout would kill this script with SIGKILL and leave them
for _ in $(seq 1 2000); do
	kill -0 "$pa" 2>/dev/null || kill -0 "$pb" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$pa" 2>/dev/null && fail "start a still running after 200 s"
kill -0 "$pb" 2>/dev/null && fail "start b still running after 200 s"
ra=0 rb=0
wait "$pa" || ra=$?
wait "$pb" || rb=$?
pa="" pb=""
[ $ra = 0 ] || fail "start a failed ($ra)"
[ $rb = 0 ] || fail "start b failed ($rb)"
port_of() { sed -n 's/^mon host = \[v2:127.0.0.1:\([0-9]*\),.*/\1/p' "$1/ceph.conf"; }
a=$(port_of "$D/a") b=$(port_of "$D/b")
[ -n "$a" ] && [ -n "$b" ] || fail "no mon port in a ceph.conf ($a, $b)"
[ "$a" != "$b" ] || fail "both clusters picked mon port $a"
fa=$(CEPH_CONF=$D/a/ceph.conf timeout 30 ceph fsid) || fail "cluster a does not answer"
fb=$(CEPH_CONF=$D/b/ceph.conf timeout 30 ceph fsid) || fail "cluster b does not answer"
[ "$fa" != "$fb" ] || fail "both confs reach one cluster ($fa)"
for c in a b; do
	CEPH_CONF=$D/$c/ceph.conf timeout 30 ceph osd stat -f json | grep -q '"num_up_osds":1' \
		|| fail "cluster $c has no OSD up"
done
echo "cluster_ports: ok (mon ports $a and $b)"
