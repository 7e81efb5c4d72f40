#!/bin/bash
# ctest tools/pool_lock: a pool has one owner at a time (vblk_uring's store lock,
# docs/design.md rule 13). While vaai-sim holds a pool open (its script read from
# a FIFO that stays open):
#   - a second vaai-sim `pool open`, vaai-check, and vaaid (a config naming the
#     pool) are refused with "in use", and the pool is left unchanged;
#   - a vaaid config naming one path for two pools is refused at load;
# and once the owner has exited, vaai-check and a new owner open the pool again.
# Usage: pool_lock.sh VAAI_SIM VAAI_CHECK VAAID TMPDIR
set -euo pipefail
SIM=${1:?usage: pool_lock.sh VAAI_SIM VAAI_CHECK VAAID TMPDIR}
CHECK=${2:?}
VAAID=${3:?}
TMP=${4:?}
mkdir -p "$TMP"
D=$(realpath "$(mktemp -d "$TMP/pool_lock.XXXXXX")")
owner=
cleanup() { [ -n "$owner" ] && kill "$owner" 2>/dev/null; exec 7>&- 2>/dev/null; rm -rf "$D"; }
trap cleanup EXIT
fail() { echo "pool_lock: FAIL: $*" >&2; exit 1; }
expect_fail() { # expect_fail REGEX CMD...: CMD exits 1 or 2 (an error, not a crash or a
	# sanitizer's abort), REGEX in its stderr
	local re=$1 st=0; shift
	"$@" >"$D/out" 2>"$D/err" || st=$?
	[ "$st" != 0 ] || fail "succeeded: $*"
	[ "$st" -le 2 ] || { cat "$D/err" >&2; fail "exit status $st (crash or sanitizer report): $*"; }
	grep -qE "$re" "$D/err" || { cat "$D/err" >&2; fail "no '$re' from: $*"; }
}

"$SIM" >/dev/null 2>"$D/err" <<SCRIPT || { cat "$D/err" >&2; fail "create"; }
pool create $D/p 64M extent=1M
volume create v 16M
attach v 0
cmd 0 2a000000000000000800 out=fill:0x5a:4096
SCRIPT
sum_before=$(sha256sum "$D/p" "$D/p.journal")

# the owner: vaai-sim with the pool open, waiting for more script on the FIFO
mkfifo "$D/fifo"
"$SIM" <"$D/fifo" >"$D/owner.out" 2>"$D/owner.err" &
owner=$!
exec 7>"$D/fifo"
echo "pool open $D/p" >&7
echo "stats" >&7
for _ in $(seq 1 100); do grep -q '"used"' "$D/owner.out" 2>/dev/null && break; sleep 0.1; done
grep -q '"used"' "$D/owner.out" || { cat "$D/owner.err" >&2; fail "the owner did not open the pool"; }

expect_fail "in use" "$SIM" <<<"pool open $D/p"
expect_fail "in use" "$CHECK" "$D/p"
conf() { # conf FILE NAME=PATH...: a vaaid config with these pools
	local f=$1; shift
	printf '[daemon]\nstate_dir = %s\ncontrol_socket = %s/control\n' "$D" "$D" >"$f"
	for p in "$@"; do printf '[pool %s]\npath = %s\n' "${p%%=*}" "${p#*=}" >>"$f"; done
}
conf "$D/vaaid.conf" "p=$D/p"
expect_fail "in use" "$VAAID" --config "$D/vaaid.conf" --no-dbus
# the refused openers wrote nothing (the owner is idle, its journal committed)
[ "$(sha256sum "$D/p" "$D/p.journal")" = "$sum_before" ] || fail "a refused opener changed the pool"

# the owner exits: the pool opens again
exec 7>&-
wait "$owner" || { cat "$D/owner.err" >&2; fail "the owner failed"; }
owner=
"$CHECK" "$D/p" >"$D/out" 2>&1 || { cat "$D/out" >&2; fail "vaai-check after the owner exited"; }
"$SIM" >/dev/null 2>"$D/err" <<<"pool open $D/p" || { cat "$D/err" >&2; fail "reopen after the owner exited"; }

# one path for two pools in a config: refused at load, naming both
conf "$D/two.conf" "a=$D/q" "b=$D/q"
expect_fail "pools 'a' and 'b' have the same path" "$VAAID" --config "$D/two.conf" --no-dbus
[ ! -e "$D/q" ] || fail "a refused config created a pool"
echo "pool_lock: ok"
