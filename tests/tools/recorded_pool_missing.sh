#!/bin/bash
# ctest tools/recorded_pool_missing: a pool that `vaaictl pool create` recorded in
# <state_dir>/pools.conf is never recreated empty when its file is missing at start
# (a file system not mounted, a disk gone): vaaid refuses to start, naming the pool,
# its path and pools.conf, and makes no file there (vd_config_load_recorded). A pool
# of vaaid.conf with create = auto is still made (the first start's convenience).
# Usage: recorded_pool_missing.sh VAAID TMPDIR
set -euo pipefail
VAAID=${1:?usage: recorded_pool_missing.sh VAAID TMPDIR}
TMP=${2:?}
mkdir -p "$TMP"
D=$(realpath "$(mktemp -d "$TMP/recorded_pool_missing.XXXXXX")")
trap 'rm -rf "$D"' EXIT
fail() { echo "recorded_pool_missing: FAIL: $*" >&2; exit 1; }

printf '[daemon]\nstate_dir = %s\ncontrol_socket = %s/control\n[pool here]\npath = %s/here.pool\nsize = 64M\n' \
	"$D" "$D" "$D" >"$D/vaaid.conf"
# as remember_pool (src/daemon/control_request.c) writes it
printf '[pool gone]\npath = %s/mnt/gone.pool\nsize = 67108864\n' "$D" >"$D/pools.conf"
mkdir "$D/mnt" # the mount point, its file system not mounted
st=0
"$VAAID" --config "$D/vaaid.conf" --no-dbus >"$D/out" 2>"$D/err" || st=$?
[ "$st" != 0 ] || fail "vaaid started with a recorded pool missing"
[ "$st" -le 2 ] || { cat "$D/err" >&2; fail "exit status $st (crash or sanitizer report)"; }
grep -q "pool 'gone': $D/mnt/gone.pool does not exist.*pools.conf" "$D/err" ||
	{ cat "$D/err" >&2; fail "the error does not name the pool, its path and pools.conf"; }
[ ! -e "$D/mnt/gone.pool" ] || fail "a missing recorded pool was recreated (empty)"
[ ! -e "$D/mnt/gone.pool.journal" ] || fail "a missing recorded pool's journal was recreated"
# (vaaid.conf's pools open first: its create = auto pool was made before the refusal)
[ -e "$D/here.pool" ] || fail "vaaid.conf's create = auto pool was not made"
echo "recorded_pool_missing: ok"
