#!/bin/bash
# ctest tools/vaaictl_top: vaaictl top in a terminal (tmux, 80x24), against a
# stand-in for vaaid's control socket whose counters grow by a fixed step per
# answer (fake_vaaid_stats.py): the screen shows the pool's use and LUN ds1's
# rates (commands/s, MB/s, CLONE/s, ATS/s, ZERO/s, DEL/s, FAIL/s, latency 0.50
# ms), no line wider than 80 columns; when the daemon goes away the screen says
# so, and when it takes the connection but never answers (a hung reactor) too,
# after 5 s; q quits (exit 0) even then. Everything started is stopped by its PID.
# Usage: vaaictl_top.sh VAAICTL TMPDIR
set -euo pipefail
CTL=${1:?usage: vaaictl_top.sh VAAICTL TMPDIR}
TMP=${2:?}
mkdir -p "$TMP"
D=$(mktemp -d "$TMP/vaaictl_top.XXXXXX")
SOCK=$D/control
TM=(tmux -S "$D/tmux" -f /dev/null)
fake=""; server=""
cleanup() {
	[ -n "$fake" ] && kill "$fake" 2>/dev/null || true
	[ -n "$server" ] && kill "$server" 2>/dev/null || true
	rm -rf "$D"
}
trap cleanup EXIT
fail() { echo "vaaictl_top: FAIL: $*" >&2; echo "--- screen:" >&2; cat "$D/screen" >&2 2>/dev/null || true; exit 1; }
python3 "$(dirname "$0")/fake_vaaid_stats.py" "$SOCK" & fake=$!
for _ in $(seq 1 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || fail "the stand-in daemon did not start"
"${TM[@]}" new-session -d -s top -x 80 -y 24 \
	"$CTL --socket $SOCK top --interval 0.5; echo \$? > $D/exit; sleep 30"
server=$("${TM[@]}" display-message -p -t top '#{pid}')
shot() { "${TM[@]}" capture-pane -p -t top > "$D/screen"; }
# the third screen has rates of two answers
for _ in $(seq 1 50); do
	shot
	grep -Eq '^ds1 +[1-9][0-9.]* ' "$D/screen" && break
	sleep 0.2
done
grep -q '^vaaictl top .* every 0\.5 s  (q quits)' "$D/screen" || fail "no header"
grep -Eq '^POOL default +25\.0 GiB of +100\.0 GiB used \( *25%\), 1 LUN\(s\)' "$D/screen" || fail "no pool line"
grep -Eq '^LUN +CMD/s +MB/s +CLONE/s +ATS/s +ZERO/s +DEL/s +FAIL/s +LAT ms' "$D/screen" || fail "no column titles"
row=$(grep -E '^ds1 ' "$D/screen") || fail "no row for LUN ds1"
read -r _ cmd mb clone ats zero del failed lat <<<"$row"
# every rate is its step per answer over the same interval: their ratios are the steps'
awk -v c="$cmd" -v cl="$clone" -v a="$ats" -v z="$zero" -v d="$del" -v f="$failed" -v m="$mb" 'BEGIN {
	ok = c > 0 && cl > 0 && a > 0 && z > 0 && d > 0 && f > 0 && m > 0
	ok = ok && (a / cl > 4.5 && a / cl < 5.5) && (z / cl > 1.8 && z / cl < 2.2) && (cl / d > 1.8 && cl / d < 2.2)
	exit ok ? 0 : 1 }' || fail "rates not in the steps' ratios: $row"
[ "$lat" = 0.50 ] || fail "latency $lat ms, not 0.50: $row"
awk 'length($0) > 80 { bad = 1 } END { exit bad }' "$D/screen" || fail "a line wider than 80 columns"
# the daemon goes away: said on the screen, still running
kill "$fake"; wait "$fake" 2>/dev/null || true; fake=""
for _ in $(seq 1 30); do
	shot
	grep -q '^cannot reach vaaid' "$D/screen" && break
	sleep 0.2
done
grep -q 'vaaid does not answer:$' "$D/screen" && grep -q '^cannot reach vaaid' "$D/screen" ||
	fail "no word of the daemon gone"
# a daemon that takes the connection and never answers (a hung reactor): top says
# so after its 5 s wait, and q still ends it
rm -f "$SOCK"
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
c = []
while True:
    c.append(s.accept()[0])' "$SOCK" & fake=$!
for _ in $(seq 1 100); do
	shot
	grep -q '^no answer from vaaid within 5000 ms' "$D/screen" && break
	sleep 0.2
done
grep -q '^no answer from vaaid within 5000 ms' "$D/screen" ||
	fail "no word of a daemon that does not answer"
awk 'length($0) > 80 { bad = 1 } END { exit bad }' "$D/screen" || fail "a line wider than 80 columns"
"${TM[@]}" send-keys -t top q
for _ in $(seq 1 100); do [ -s "$D/exit" ] && break; sleep 0.1; done
[ "$(cat "$D/exit" 2>/dev/null)" = 0 ] || fail "q did not end vaaictl top with 0 (exit: $(cat "$D/exit" 2>/dev/null))"
echo "vaaictl_top: ok ($row)"
