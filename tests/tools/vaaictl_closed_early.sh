#!/bin/bash
# ctest tools/vaaictl_closed_early: a daemon that closes the control connection
# before reading the request (stopping, or refusing) makes vaaictl exit 3 with a
# message naming the broken pipe -- not die of SIGPIPE with no message (exit
# 141). The stand-in accepts and closes at once; the shim connect_delay.so
# (LD_PRELOAD) holds vaaictl between its connect and its send, so the close
# always comes first. Usage: vaaictl_closed_early.sh VAAICTL SHIM TMPDIR
set -euo pipefail
CTL=${1:?usage: vaaictl_closed_early.sh VAAICTL SHIM TMPDIR}
SHIM=${2:?}
TMP=${3:?}
mkdir -p "$TMP"
D=$(mktemp -d "$TMP/vaaictl_closed_early.XXXXXX")
SOCK=$D/control
fake=""
cleanup() {
	[ -n "$fake" ] && kill "$fake" 2>/dev/null || true
	rm -rf "$D"
}
trap cleanup EXIT
fail() { echo "vaaictl_closed_early: FAIL: $*" >&2; cat "$D/err" >&2 2>/dev/null || true; exit 1; }
python3 - "$SOCK" <<'PY' & fake=$!
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(8)
while True:
    c, _ = s.accept()
    c.close()
PY
for _ in $(seq 1 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || fail "the stand-in daemon did not start"
st=0
# (an ASan vaaictl: the shim comes first in the preload list, which ASan allows with this)
LD_PRELOAD=$SHIM CONNECT_DELAY_MS=300 ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	"$CTL" --socket "$SOCK" status >"$D/out" 2>"$D/err" || st=$?
[ "$st" != 141 ] || fail "vaaictl was killed by SIGPIPE (exit 141), with no message"
[ "$st" = 3 ] || fail "exit status $st, not 3 (no daemon answer)"
grep -q "write to $SOCK: Broken pipe" "$D/err" || fail "the message does not name the broken pipe"
echo "vaaictl_closed_early: ok"
