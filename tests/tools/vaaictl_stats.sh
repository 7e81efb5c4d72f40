#!/bin/bash
# ctest tools/vaaictl_stats: `vaaictl stats`' table against a stand-in for vaaid's
# control socket (fake_vaaid_stats.py, its first answer): the lines of what the pool
# did -- bytes shared and copied to the LUN, bytes deallocated by WRITE SAME and by
# UNMAP -- are there for the LUN and for the pool's sum, with the values the stand-in
# sent, and no line is wider than 80 columns although those sizes have the longest
# text ("1023.9 KiB"). Usage: vaaictl_stats.sh VAAICTL TMPDIR
set -euo pipefail
CTL=${1:?usage: vaaictl_stats.sh VAAICTL TMPDIR}
TMP=${2:?}
mkdir -p "$TMP"
D=$(mktemp -d "$TMP/vaaictl_stats.XXXXXX")
SOCK=$D/control
fake=""
cleanup() {
	[ -n "$fake" ] && kill "$fake" 2>/dev/null || true
	rm -rf "$D"
}
trap cleanup EXIT
fail() { echo "vaaictl_stats: FAIL: $*" >&2; echo "--- output:" >&2; cat "$D/out" >&2 2>/dev/null || true; exit 1; }
python3 "$(dirname "$0")/fake_vaaid_stats.py" "$SOCK" & fake=$!
for _ in $(seq 1 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || fail "the stand-in daemon did not start"
"$CTL" --socket "$SOCK" stats >"$D/out" || fail "vaaictl stats exited $?"
n=$(grep -c '^  to here: shared 2\.0 MiB (whole extents), copied 1023\.9 KiB (data moved)$' "$D/out") || true
[ "$n" = 2 ] || fail "the shared/copied line $n times, not 2 (the LUN and the pool's sum)"
n=$(grep -c '^  deallocated: by WRITE SAME 1023\.9 KiB, by UNMAP 1023 B$' "$D/out") || true
[ "$n" = 2 ] || fail "the deallocated line $n times, not 2"
awk 'length($0) > 80 { print "line " NR " has " length($0) " columns"; bad = 1 } END { exit bad }' \
	"$D/out" || fail "lines wider than 80 columns"
echo "vaaictl_stats: ok"
