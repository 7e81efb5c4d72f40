#!/bin/bash
# ctest tools/vaaictl_closed_early: a daemon that closes the control connection
# before reading the request (stopping, or refusing) makes vaaictl exit 3 with a
# message naming the broken pipe -- not die of SIGPIPE with no message (exit
# 141). The stand-in accepts and closes at once; the shim connect_delay.so
# (LD_PRELOAD) holds vaaictl between its connect and its send, so the close
# always comes first. A second stand-in answers a refusal and closes before
# reading (as vaaid does with a request over its line limit): vaaictl still
# reads and prints that answer (exit 1), though its write met the broken pipe.
# Usage: vaaictl_closed_early.sh VAAICTL SHIM TMPDIR
set -euo pipefail
CTL=${1:?usage: vaaictl_closed_early.sh VAAICTL SHIM TMPDIR}
SHIM=${2:?}
TMP=${3:?}
mkdir -p "$TMP"
D=$(mktemp -d "$TMP/vaaictl_closed_early.XXXXXX")
fake=""
cleanup() {
	[ -n "$fake" ] && kill "$fake" 2>/dev/null || true
	rm -rf "$D"
}
trap cleanup EXIT
fail() { echo "vaaictl_closed_early: FAIL: $*" >&2; cat "$D/err" >&2 2>/dev/null || true; exit 1; }
# stand_in MODE SOCK: accepts and closes at once (MODE close), or first sends a
# refusal (MODE answer)
stand_in() {
	python3 - "$1" "$2" <<'PY' & fake=$!
import socket, sys
mode, path = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(8)
while True:
    c, _ = s.accept()
    if mode == "answer":
        c.sendall(b'{"ok":false,"error":"request too long"}\n')
    c.close()
PY
	for _ in $(seq 1 50); do [ -S "$2" ] && break; sleep 0.1; done
	[ -S "$2" ] || fail "the stand-in daemon did not start"
}
run_ctl() { # run_ctl SOCK: vaaictl held 300 ms between its connect and its send
	st=0
	# (an ASan vaaictl: the shim comes first in the preload list, which ASan allows with this)
	LD_PRELOAD=$SHIM CONNECT_DELAY_MS=300 ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
		"$CTL" --socket "$1" status >"$D/out" 2>"$D/err" || st=$?
}

SOCK=$D/control
stand_in close "$SOCK"
run_ctl "$SOCK"
[ "$st" != 141 ] || fail "vaaictl was killed by SIGPIPE (exit 141), with no message"
[ "$st" = 3 ] || fail "exit status $st, not 3 (no daemon answer)"
grep -q "write to $SOCK: Broken pipe" "$D/err" || fail "the message does not name the broken pipe"
kill "$fake"; wait "$fake" 2>/dev/null || true; fake=""

SOCK=$D/control-answers
stand_in answer "$SOCK"
run_ctl "$SOCK"
[ "$st" = 1 ] || fail "a refusal answered before the close: exit status $st, not 1 (the daemon refused)"
grep -q "request too long" "$D/err" || fail "the refusal answered before the close was not printed"
echo "vaaictl_closed_early: ok"
