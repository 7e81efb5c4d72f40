#!/bin/bash
# Counters exact under load through LIO (issue 25; docs/observability.md
# "Counters exact under load", "Through LIO"): the same generator and the same
# comparison as `vaai-bench mixed` on the simulated kernel (tools/vaai-bench/
# mixed.c, mixed_check.c), here through the guest's real kernel: two
# co-visible LUNs of pool "default" (setup-luns.sh: vol0, vol1, one tcm_loop
# nexus), commands sent with the sg v3 asynchronous interface on /dev/sgN
# (tools/vaai-bench/kport_sg.c) at COUNTERS_LOAD_QD in flight on each LUN for
# COUNTERS_LOAD_RUNTIME seconds (default 4 and 10: a short run for TCG), a
# random mix of every kind the counters tell apart (EXTENDED COPY between the
# two LUNs, COMPARE AND WRITE with miscompares on purpose, WRITE SAME, UNMAP,
# refused and failing commands...). The counters before and after are
# `vaaictl --json stats default` (taken once the LUNs' counters stand still for
# a second); every key the generator can know must move by exactly its own
# count, and every answer must be the one expected.
# COUNTERS_LOAD_SEED (default 1) picks the mix.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
RUNTIME=${COUNTERS_LOAD_RUNTIME:-10}
QD=${COUNTERS_LOAD_QD:-4}
SEED=${COUNTERS_LOAD_SEED:-1}
BENCH=/vaaid/build/bin/vaai-bench
[ -x "$BENCH" ] || { echo "no $BENCH (build the tree first)"; exit 77; }
mapfile -t L < <(/vaaid/tests/vm/setup-luns.sh 2 2G) # (the size the other tests give vol0, vol1)
read -r _ sg0 _ _ <<<"${L[0]}"
read -r _ sg1 _ _ <<<"${L[1]}"
[ -n "$sg0" ] && [ -n "$sg1" ] || die "setup-luns.sh gave no disks"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# what reached the new LUNs before the load (the kernel's scan of the new disks,
# setup-luns.sh's TEST UNIT READYs): not compared, printed for the record
"$VAAICTL" --json stats default >"$work/up" || die "vaaictl stats: $(cat "$work/up")"
python3 - "$work/up" >&2 <<'PY' || die "vaaictl stats: no vol0/vol1"
import json, sys
for l in json.load(open(sys.argv[1]))["luns"]:
    if l["volume"] in ("vol0", "vol1"):
        c = l["stats"]["commands"]
        print("  %s since it came up:" % l["volume"], ", ".join(
            "%s %d/%d" % (k, v["ok"], v["failed"]) for k, v in c.items() if v["ok"] or v["failed"]))
PY
log "vaai-bench mixed --sg $sg0=vol0,$sg1=vol1 --runtime $RUNTIME --qd $QD --seed $SEED"
rc=0
"$BENCH" mixed --runtime "$RUNTIME" --qd "$QD" --seed "$SEED" --sg "$sg0=vol0,$sg1=vol1" \
	--stats-cmd "$VAAICTL --json stats default" >"$work/out" 2>"$work/err" || rc=$?
sed 's/^/  /' "$work/err" >&2
cat "$work/out" >&2
[ $rc -eq 0 ] || die "vaai-bench mixed --sg: exit $rc (the mismatches and unexpected answers are above)"
grep -Eq "^counters_exact_mixed runtime_s=$RUNTIME commands=[1-9][0-9]* luns=2 mismatches=0\$" "$work/out" ||
	die "no 'counters_exact_mixed ... mismatches=0' line"
log "counters exact: $(cat "$work/out")"
