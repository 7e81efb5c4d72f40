#!/bin/bash
# ctest tools/replay_log: replay-log on a dm-log-writes log written here by
# hand in the kernel's format (super at sector 0; per entry a 512-byte block
# with sector, nr_sectors, flags, data_len and a mark's name, then the data):
#   - the points are the states after each flush and at the last mark of each
#     run of marks, in log order, with the marks so far in --marks;
#   - --from MARK starts after that mark, --points N picks N (the last always);
#   - discards replay as zeros; a plain write over a FUA write of the same flush
#     window is counted as ambiguous;
#   - --subsets: a subset state drops writes of a flush's group, with the marks
#     before the group;
#   - a check that fails stops the replay with exit 1.
# Usage: replay_log.sh REPLAY_LOG TMPDIR
set -euo pipefail
RL=${1:?usage: replay_log.sh REPLAY_LOG TMPDIR}
TMP=${2:?}
mkdir -p "$TMP"
D=$(realpath "$(mktemp -d "$TMP/replay_log.XXXXXX")")
trap 'rm -rf "$D"' EXIT
fail() { echo "replay_log: FAIL: $*" >&2; exit 1; }

# entries: kind sector nr byte|name   (W plain, U FUA write, D discard, F flush, M mark)
python3 - "$D/log" <<'EOF'
import struct, sys
ents = [("W", 0, 1, "a"), ("F", 0, 0, ""), ("M", 0, 0, "m1"), ("W", 1, 1, "b"), ("M", 0, 0, "m2"),
        ("M", 0, 0, "m3"), ("W", 2, 2, "c"), ("F", 0, 0, ""), ("U", 3, 1, "d"), ("D", 0, 1, ""),
        ("F", 0, 0, ""), ("U", 4, 1, "e"), ("W", 4, 1, "f"), ("F", 0, 0, ""), ("M", 0, 0, "end")]
flags = {"W": 0, "U": 2, "D": 4, "F": 1, "M": 8}
out = bytearray(struct.pack("<QQQI", 0x6a736677736872, 1, len(ents), 512).ljust(512, b"\0"))
for k, sec, nr, v in ents:
    name = v.encode() if k == "M" else b""
    out += (struct.pack("<QQQQ", sec, nr, flags[k], len(name)) + name).ljust(512, b"\0")
    if k in "WU":
        out += v.encode() * (512 * nr)
open(sys.argv[1], "wb").write(out)
EOF
# the check prints the point, its kind, the first byte of sectors 0-4 (. = zero) and the marks
cat >"$D/check" <<'EOF'
#!/bin/bash
s=$(for i in 0 1 2 3 4; do c=$(dd if="$T" bs=1 skip=$((i * 512)) count=1 status=none | tr '\0' .); echo -n "$c"; done)
echo "P $REPLAY_POINT $REPLAY_KIND $REPLAY_ENTRY $s $(tr '\n' , <"$M")"
[ "${FAIL_AT:-0}" != "$REPLAY_POINT" ]
EOF
chmod +x "$D/check"
export T=$D/target M=$D/marks
run() { truncate -s 0 "$T"; truncate -s 4096 "$T"; "$RL" "$D/log" "$T" --marks "$M" --check "$D/check" "$@"; }

out=$(run) || fail "replay of every point: $out"
want="P 1 flush 2 a.... 
P 2 mark 3 a.... m1,
P 3 mark 6 ab... m1,m2,m3,
P 4 flush 8 abcc. m1,m2,m3,
P 5 flush 11 .bcd. m1,m2,m3,
P 6 flush 14 .bcdf m1,m2,m3,
P 7 mark 15 .bcdf m1,m2,m3,end,"
[ "$(grep '^P ' <<<"$out")" = "$want" ] || fail "points: got
$(grep '^P ' <<<"$out")
want
$want"
grep -q "7 points checked (0 failed), 15 entries, 4 marks, 4 flushes, 1 ambiguous blocks" <<<"$out" ||
	fail "summary: $(tail -n 1 <<<"$out")"

out=$(run --from m2 --points 2) || fail "--from m2 --points 2: $out"
[ "$(grep '^P ' <<<"$out" | cut -d' ' -f3-4 | tr '\n' ' ')" = "mark 6 mark 15 " ] ||
	fail "--from m2 --points 2: $(grep '^P ' <<<"$out")"

# subsets: the plain writes (and discards) logged right before a flush are its
# group; a subset state drops some of them (here each group has one entry)
n=0
for seed in 1 2 3 4 5 6 7 8; do
	out=$(run --subsets 5 --seed $seed) || fail "--subsets 5 --seed $seed: $out"
	while read -r _ _ kind entry s marks; do
		[ "$kind" = subset ] || continue
		n=$((n + 1))
		case "$entry $s $marks" in # a flush's group dropped: a, c (sectors 2-3), the discard, f
		"0 ..... " | "6 ab... m1,m2,m3," | "9 abcd. m1,m2,m3," | "12 .bcde m1,m2,m3,") ;;
		*) fail "subset state: $entry $s $marks" ;;
		esac
	done < <(grep '^P ' <<<"$out")
	[ "$(grep '^P ' <<<"$out" | grep -v subset | tail -n 1)" = "P $(grep -c '^P ' <<<"$out") mark 15 .bcdf m1,m2,m3,end," ] ||
		fail "after subsets (seed $seed) the replay does not end in the log's state: $out"
done
[ $n -gt 0 ] || fail "no subset state in 8 seeds"

st=0
out=$(FAIL_AT=3 run) || st=$?
[ $st = 1 ] && grep -q "point 3 FAILED" <<<"$out" && ! grep -q '^P 4' <<<"$out" ||
	fail "a failing check did not stop the replay with exit 1 (exit $st): $out"
echo "replay_log: ok"
