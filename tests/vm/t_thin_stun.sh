#!/bin/bash
# Thin provisioning through LIO on a small pool (64 MiB file: 63 extents of 1 MiB --
# its journal is in small.pool.journal --; vaaid's default soft threshold 80 % = 51
# extents):
#  - the Logical Block Provisioning log page (0Ch) and mode page (1Ch/02h);
#  - crossing the soft threshold: the next command gets UNIT ATTENTION 06h/38h/07h
#    (INFORMATION 10h), once;
#  - "stun": a write that needs space the pool does not have gets DATA PROTECT
#    27h/07h (SPACE ALLOCATION FAILED WRITE PROTECT), while reads and overwrites of
#    written blocks keep working;
#  - dd through the sd driver gets ENOSPC while the pool is full, and not after;
#  - "resume": the host's UNMAP (blkdiscard) gives the space back and the same
#    write succeeds, without restarting anything; full again, `vaaictl pool grow`
#    (online) makes the refused write succeed too, and the LUN reports MODE
#    PARAMETERS CHANGED (the threshold count of mode page 1Ch/02h moved).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
"$VAAICTL" pool create small "$STATE/small.pool" 64M >/dev/null || die "vaaictl pool create small"
[ -f "$STATE/small.pool.journal" ] || die "pool create made no journal file small.pool.journal"
read -r sg sd < <(lone_lun thin0 small $((256 << 20)) 50014050aa1d030)
[ -n "$sg" ] && [ -n "$sd" ] || die "thin0 did not appear"
tur() { sg_raw -v "$sg" 00 00 00 00 00 00 2>&1 || true; }
tur_good() { # tur_good WHEN: TEST UNIT READY returns GOOD (no unit attention, no other error)
	local out rc=0
	out=$(sg_raw -v "$sg" 00 00 00 00 00 00 2>&1) || rc=$?
	[ $rc -eq 0 ] || die "TEST UNIT READY $1: not GOOD (sg_raw exit $rc): $out"
}
wr() { # wr MIB_OFFSET MIBS: direct writes of 1 MiB blocks through sg (sense kept in $out)
	sg_dd if=/dev/urandom of="$sg" bs=512 bpt=2048 seek=$(($1 * 2048)) count=$(($2 * 2048)) \
		oflag=sgio 2>&1
}

# log page 0Ch: available 63, used 0 (in extents: THRESHOLD EXPONENT = 1 MiB)
logs=$(sg_logs -p 0xc "$sg")
grep -qi "available LBA mapping threshold resource count: 63" <<<"$logs" || die "log page 0Ch: $logs"
grep -qi "used LBA mapping threshold resource count: 0" <<<"$logs" || die "log page 0Ch: $logs"
# mode page 1Ch/02h: threshold descriptor enabled, count 51
mp=$(sg_modes -6 -d -r -p 0x1c,0x02 "$sg" | od -An -tx1 -v | tr -s ' \n' ' ')
read -r -a b <<<"$mp"
[ "${b[4]}" = 5c ] && [ "${b[5]}" = 02 ] || die "mode page 1Ch/02h not returned: $mp"
[ "${b[20]}" = 81 ] && [ "${b[21]}" = 02 ] && [ "${b[27]}" = 33 ] || die "threshold descriptor: $mp"

# 50 extents: below the threshold
out=$(wr 0 50) || die "writing 50 MiB failed: $out"
tur_good "below the threshold"
# the 51st: the next command reports the threshold, once
out=$(wr 50 1) || die "writing the 51st MiB failed: $out"
t1=$(tur)
grep -qi "thin provisioning soft threshold reached" <<<"$t1" || die "no UA 38h/07h: $t1"
# VALID=1, INFORMATION = offset of the threshold descriptor in mode page 1Ch/02h (SBC-4
# 4.7.3.7.6)
grep -qi "info fld=0x10 " <<<"$t1" || die "UA 38h/07h without INFORMATION 10h: $t1"
tur_good "after the threshold UA was reported (it must come once)"

# fill the rest (63 extents), then a write into new space is refused: 27h/07h
out=$(wr 51 12) || die "filling the pool failed: $out"
rc=0; out=$(wr 100 1) || rc=$?
[ $rc -ne 0 ] || die "a write past the pool's space succeeded"
grep -qi "space allocation failed write protect" <<<"$out" || die "not 27h/07h: $out"
# an application writing through the Linux sd driver sees ENOSPC (the block layer
# maps 27h/07h to BLK_STS_NOSPC)
ddw() { dd if=/dev/urandom of="$sd" bs=1M seek="$1" count=1 oflag=direct 2>&1; }
rc=0; out=$(ddw 101) || rc=$?
[ $rc -ne 0 ] && grep -qi "no space left on device" <<<"$out" || die "dd into new space on a full pool: not ENOSPC: $out"
# what needs no space keeps working: read, overwrite of written blocks
sg_dd if="$sg" of=/dev/null bs=512 bpt=2048 count=20480 >/dev/null 2>&1 || die "read while out of space"
out=$(wr 10 2) || die "overwrite while out of space failed: $out"
"$VAAICTL" status | grep "small" >/dev/null || die "vaaictl status lacks pool small"

# resume: the host unmaps 20 MiB (blkdiscard through the sd driver: UNMAP), the
# refused write now succeeds
blkdiscard -o $((20 << 20)) -l $((20 << 20)) "$sd" || die "blkdiscard failed"
out=$(wr 100 1) || die "the write still fails after UNMAP: $out"
logs=$(sg_logs -p 0xc "$sg")
grep -qi "used LBA mapping threshold resource count: 44" <<<"$logs" || die "log page after UNMAP: $logs"
out=$(ddw 101) || die "dd still gets an error after UNMAP: $out"
# stunned again (fill the 18 free extents), then resume by growing the pool online
out=$(wr 130 18) || die "refilling the pool failed: $out"
rc=0; out=$(wr 160 1) || rc=$?
[ $rc -ne 0 ] && grep -qi "space allocation failed write protect" <<<"$out" || die "not refused when full again: $out"
"$VAAICTL" pool grow small 96M >/dev/null || die "vaaictl pool grow small 96M failed"
# the grow moved the threshold in mode page 1Ch/02h: MODE PARAMETERS CHANGED (SBC-4 6.5.7)
t3=$(tur)
grep -qi "mode parameters changed" <<<"$t3" || die "no UA 2Ah/01h after the pool grow: $t3"
out=$(wr 160 1) || die "the write still fails after vaaictl pool grow: $out"
logs=$(sg_logs -p 0xc "$sg")
grep -qi "available LBA mapping threshold resource count: 31" <<<"$logs" || die "log page after grow: $logs"
grep -qi "used LBA mapping threshold resource count: 64" <<<"$logs" || die "log page after grow: $logs"
# The LUN's command counters (issue 25: vaaictl stats, include/vaaid/lun_stats.h):
# what went through the block layer (dd, blkdiscard) is split and merged by the
# kernel, so bytes are exact and command counts are only bounded: 86 MiB written
# (sg_dd's and dd's successful writes), 20 MiB unmapped, the threshold's unit
# attention posted (once per crossing), at least the 3 refused writes answered out of space.
st=$("$VAAICTL" --json stats small/thin0) || die "vaaictl stats small/thin0 failed: $st"
python3 - "$st" <<'PY' || die "vaaictl stats: counters other than the commands sent: $st"
import json, sys
a = json.loads(sys.argv[1])
assert a["ok"] and len(a["luns"]) == 1, "one LUN"
s = a["luns"][0]["stats"]
c = s["commands"]
MiB = 1 << 20
assert c["write"]["bytes"] == 86 * MiB, ("write bytes", c["write"]["bytes"])
assert c["write"]["failed"] >= 3, ("write failed", c["write"]["failed"])
assert c["unmap"]["bytes"] == 20 * MiB and c["unmap"]["failed"] == 0, ("unmap", c["unmap"])
assert s["unmap"]["bytes"] == 20 * MiB, ("unmap bytes", s["unmap"])
assert s["out_of_space"] >= 3, ("out_of_space", s["out_of_space"])
assert s["unit_attentions"]["threshold"] >= 1, ("threshold UA", s["unit_attentions"])  # crossed again after the UNMAP
assert s["unit_attentions"]["mode_changed"] >= 1, ("mode UA", s["unit_attentions"])
assert s["inflight"] == 0, ("inflight", s["inflight"])
p = [x for x in a["pools"] if x["name"] == "small"]
assert len(p) == 1 and p[0]["luns"] == 1, "pool small with its LUN"
assert p[0]["lun_sum"]["commands"]["write"]["bytes"] == 86 * MiB, "the pool's sum"
assert p[0]["pool"]["counters"]["journal_commits"] > 0, "journal commits"
print("stats: write %d MiB (%d failed), unmap %d MiB in %d command(s), out of space %d, UAs %s"
      % (c["write"]["bytes"] // MiB, c["write"]["failed"], c["unmap"]["bytes"] // MiB,
         c["unmap"]["ok"], s["out_of_space"], s["unit_attentions"]))
PY
"$VAAICTL" stats small >/dev/null || die "vaaictl stats small (the table) failed"
log "thin ok: threshold UA once, 27h/07h (dd: ENOSPC) when full, reads/overwrites kept, resume after UNMAP and after pool grow; vaaictl stats counts them"
