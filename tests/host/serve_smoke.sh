#!/bin/bash
# scripts/serve end to end from the host: start it on a free port, wait for its
# "reach it with" line, run exactly the iscsi-inq command it prints (checks
# vendor VAAID over iSCSI through the forwarded portal), then Ctrl-C (SIGINT)
# and require a clean stop within 60 s. Run by scripts/test.
set -euo pipefail
cd "$(dirname "$0")/../.."
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$(mktemp); trap 'rm -f "$log"' EXIT
# job control: the background job gets its own process group and, unlike a plain
# "&" job of a script, does not start with SIGINT ignored (so Ctrl-C can be tested)
set -m
scripts/serve --size 1G --port "$port" >"$log" 2>&1 &
pid=$!
set +m
fail() { echo "serve_smoke: FAIL: $*" >&2; sed 's/^/  serve: /' "$log" >&2; kill -INT "$pid" 2>/dev/null || true; sleep 5; kill -KILL -- -"$pid" 2>/dev/null || true; exit 1; }
for _ in $(seq 1 200); do
	grep -q "^reach it with: " "$log" && break
	kill -0 "$pid" 2>/dev/null || fail "scripts/serve exited early"
	sleep 1
done
cmd=$(sed -n 's/^reach it with: //p' "$log")
[ -n "$cmd" ] || fail "no 'reach it with' line within 200 s"
case "$cmd" in "iscsi-inq iscsi://127.0.0.1:$port/iqn.2026-11.org.vaaid:test/0") ;; *) fail "unexpected command: $cmd" ;; esac
out=$($cmd 2>&1) || fail "$cmd failed: $out"
grep -q "^Vendor:VAAID" <<<"$out" || fail "iscsi-inq did not report vendor VAAID: $out"
kill -INT "$pid"
for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
kill -0 "$pid" 2>/dev/null && fail "scripts/serve still running 60 s after Ctrl-C"
wait "$pid" || true
grep -q "serve: stopping" "$log" || fail "no clean stop message"
echo "serve_smoke: ok ($cmd)"
