#!/bin/bash
# vaaictl stats counts exactly the commands sent (issue 25): through LIO and the
# TCMU ring, a known sequence sent with sg3_utils (SG_IO: one command each, no
# block layer splitting or merging) on two co-visible LUNs, and the difference of
# `vaaictl stats --json` before and after it, per LUN:
#   vol0: 4 WRITEs of 1 MiB (sg_dd); 5 COMPARE AND WRITE of which 2 miscompare;
#         WRITE SAME(16) of zeros with UNMAP (1 MiB) and of a pattern (8 KiB);
#         an UNMAP of one descriptor (1 MiB); GET LBA STATUS; the source of the
#         copies below (4 MiB)
#   vol1: 2 EXTENDED COPYs from vol0 (sg_xcopy bpt=4096: 2 MiB each) and one
#         refused (sg_raw: a one-byte parameter list); the destination of 4 MiB
# and the pool's sum of its LUNs moves by the sum of both. (The LUNs may exist
# from earlier tests: counters are since a LUN came up, so differences are
# compared. The kernel reads the disks by itself, so READ and "other" are not.)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mapfile -t L < <(/vaaid/tests/vm/setup-luns.sh 2 2G) # (the size the other tests give vol0, vol1)
read -r _ sg0 _ _ <<<"${L[0]}"
read -r _ sg1 _ _ <<<"${L[1]}"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# the block the COMPARE AND WRITEs start from holds zeros, whatever earlier tests
# wrote there (before the first snapshot: not in the differences)
sg_dd if=/dev/zero of="$sg0" bs=512 seek=100000 count=1 2>/dev/null || die "zeroing LBA 100000"
"$VAAICTL" --json stats default >"$work/before" || die "vaaictl stats (before): $(cat "$work/before")"

sg_dd if=/dev/urandom of="$sg0" bs=512 bpt=2048 count=8192 oflag=sgio 2>/dev/null || die "sg_dd write"
blk() { printf '%-512s' "$1"; }
caw() { # caw LBA OLD NEW: 0 written, 14 miscompare
	{ if [ "$2" = zero ]; then head -c 512 /dev/zero; else blk "$2"; fi; blk "$3"; } >"$work/caw"
	local rc=0
	sg_compare_and_write --in="$work/caw" --lba="$1" --num=1 "$sg0" 2>/dev/null || rc=$?
	echo $rc
}
[ "$(caw 100000 zero a)" = 0 ] || die "CAW 1"
[ "$(caw 100000 a b)" = 0 ] || die "CAW 2"
[ "$(caw 100000 a c)" = 14 ] || die "CAW 3 did not miscompare"
[ "$(caw 100000 b c)" = 0 ] || die "CAW 4"
[ "$(caw 100000 zero d)" = 14 ] || die "CAW 5 did not miscompare"
sg_write_same --16 --unmap --lba=200000 --num=2048 "$sg0" || die "WRITE SAME of zeros with UNMAP"
blk pattern >"$work/pat"
sg_write_same --16 --in="$work/pat" --lba=300000 --num=16 "$sg0" || die "WRITE SAME of a pattern"
sg_unmap --lba=400000 --num=2048 "$sg0" || die "UNMAP"
sg_get_lba_status "$sg0" >/dev/null || die "GET LBA STATUS"
sg_xcopy if="$sg0" of="$sg1" bs=512 bpt=4096 count=8192 || die "sg_xcopy"
# refused: a parameter list of one byte (shorter than its header, SPC-4 6.4.3)
rc=0; sg_raw -s 1 -i /dev/zero "$sg1" 83 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 >/dev/null 2>&1 || rc=$?
[ $rc -ne 0 ] || die "an EXTENDED COPY with a one-byte parameter list was not refused"

"$VAAICTL" --json stats default >"$work/after" || die "vaaictl stats (after): $(cat "$work/after")"
python3 - "$work/before" "$work/after" <<'PY' || die "vaaictl stats: the differences are not the commands sent"
import json, sys
b, a = (json.load(open(f)) for f in sys.argv[1:3])
MiB = 1 << 20

def lun(ans, vol):
    x = [l for l in ans["luns"] if l["volume"] == vol]
    assert len(x) == 1, ("no single LUN of", vol)
    return x[0]["stats"]

def diff(x, y):  # y - x, recursively (lists element by element)
    if isinstance(y, dict):
        return {k: diff(x.get(k, 0) if isinstance(x, dict) else 0, v) for k, v in y.items()}
    if isinstance(y, list):
        return [diff(x[i] if isinstance(x, list) and i < len(x) else 0, v) for i, v in enumerate(y)]
    return y - x

def want(d, path, value):
    v = d
    for k in path.split("."):
        v = v[k]
    assert v == value, "%s: %s, expected %s" % (path, v, value)

d0 = diff(lun(b, "vol0"), lun(a, "vol0"))
d1 = diff(lun(b, "vol1"), lun(a, "vol1"))
for path, value in [("commands.write.ok", 4), ("commands.write.failed", 0),
                    ("commands.write.bytes", 4 * MiB),
                    ("commands.caw.ok", 3), ("commands.caw.failed", 2),
                    ("commands.caw.bytes", 3 * 512), ("caw.miscompares", 2),
                    ("commands.caw.latency_ok.count", 3), ("commands.caw.latency_failed.count", 2),
                    ("commands.write_same.ok", 2), ("commands.write_same.failed", 0),
                    ("commands.write_same.bytes", MiB + 16 * 512),
                    ("write_same.zero", 1), ("write_same.pattern", 1), ("write_same.unmap_bit", 1),
                    ("write_same.zero_bytes", MiB), ("write_same.pattern_bytes", 16 * 512),
                    ("commands.unmap.ok", 1), ("commands.unmap.bytes", MiB),
                    ("unmap.descriptors", 1), ("unmap.bytes", MiB),
                    ("commands.get_lba_status.ok", 1),
                    ("commands.xcopy.ok", 0), ("xcopy.src_bytes", 4 * MiB), ("xcopy.dst_bytes", 0),
                    ("out_of_space", 0)]:
    want(d0, path, value)
for path, value in [("commands.xcopy.ok", 2), ("commands.xcopy.failed", 1),
                    ("commands.xcopy.bytes", 4 * MiB), ("xcopy.dst_bytes", 4 * MiB),
                    ("xcopy.src_bytes", 0), ("commands.write.ok", 0), ("commands.caw.ok", 0),
                    ("commands.xcopy.latency_failed.count", 1)]:
    want(d1, path, value)
p = [x for x in a["pools"] if x["name"] == "default"]
pb = [x for x in b["pools"] if x["name"] == "default"]
ds = diff(pb[0]["lun_sum"], p[0]["lun_sum"])
for path, value in [("commands.caw.ok", 3), ("commands.xcopy.ok", 2), ("commands.xcopy.failed", 1),
                    ("xcopy.src_bytes", 4 * MiB), ("xcopy.dst_bytes", 4 * MiB),
                    ("commands.write.bytes", 4 * MiB)]:
    want(ds, path, value)
print("ok")
PY
# The same counters through the Prometheus endpoint ([metrics] listen =
# 127.0.0.1:9612, scripts/vm/guest-start-services): equal to vaaictl stats'
# (the ones the kernel's own reads cannot move in between)
python3 - "$work/after" <<'PY' || die "the Prometheus endpoint disagrees with vaaictl stats"
import json, re, sys, urllib.request
a = json.load(open(sys.argv[1]))
r = urllib.request.urlopen("http://127.0.0.1:9612/metrics", timeout=30)
assert r.status == 200 and r.headers["Content-Type"].startswith("text/plain; version=0.0.4"), r.headers
text = r.read().decode()
def sample(name, vol, extra=""):
    m = re.search(r'^%s\{pool="default",volume="%s",naa="[0-9a-f]{32}"%s\} (\S+)$'
                  % (re.escape(name), vol, re.escape(extra)), text, re.M)
    assert m, ("no sample", name, vol, extra)
    return float(m.group(1))
for vol in ("vol0", "vol1"):
    st = [l for l in a["luns"] if l["volume"] == vol][0]["stats"]
    c = st["commands"]
    checks = [(("vaaid_caw_miscompares_total", vol), st["caw"]["miscompares"]),
              (("vaaid_commands_total", vol, ',kind="caw",result="ok"'), c["caw"]["ok"]),
              (("vaaid_commands_total", vol, ',kind="xcopy",result="failed"'), c["xcopy"]["failed"]),
              (("vaaid_command_bytes_total", vol, ',kind="xcopy"'), c["xcopy"]["bytes"]),
              (("vaaid_xcopy_bytes_total", vol, ',side="source"'), st["xcopy"]["src_bytes"]),
              (("vaaid_xcopy_bytes_total", vol, ',side="destination"'), st["xcopy"]["dst_bytes"]),
              (("vaaid_write_same_total", vol, ',data="zero"'), st["write_same"]["zero"]),
              (("vaaid_unmap_bytes_total", vol), st["unmap"]["bytes"]),
              (("vaaid_command_latency_seconds_count", vol, ',kind="caw",result="failed"'),
               c["caw"]["latency_failed"]["count"])]
    for args, want in checks:
        got = sample(*args)
        assert got == want, (args, got, want)
assert re.search(r'^vaaid_pool_luns\{pool="default"\} [1-9]', text, re.M), "pool gauge"
print("ok")
PY
log "vaaictl stats: every primitive's commands, failures and bytes counted exactly (vol0, vol1, the pool's sum); the Prometheus endpoint agrees"
