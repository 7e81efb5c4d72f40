#!/bin/bash
# A real Prometheus server scrapes vaaid's endpoint (issue 25): Debian's
# prometheus (in the guest image, scripts/vm/packages), started by PID with its
# own port (127.0.0.1:19090) and storage directory, scraping every second the
# endpoint guest-start-services configures (127.0.0.1:9612) and evaluating the
# project's alert rules (docs/prometheus/vaaid-alerts.yml). Checked over its
# HTTP API (PromQL):
#  - a known sequence sent with sg3_utils (3 COMPARE AND WRITE of which 1
#    miscompares and 1 WRITE SAME with UNMAP on vol0, 1 refused EXTENDED COPY
#    on vol1) moves the scraped counters by exactly that (the values of the
#    first scrape taken wholly after the sequence minus those of one before);
#  - those values and a sum by pool equal `vaaictl stats --json` (counters the
#    kernel's own reads cannot move);
#  - the refused copy fires the VaaidXcopyRefused alert for vol1.
# Prometheus is stopped by its PID on every path (the EXIT trap).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null || die "prometheus is not in the guest image (scripts/vm/packages)"
mapfile -t L < <(/vaaid/tests/vm/setup-luns.sh 2 2G) # (the size the other tests give vol0, vol1)
read -r _ sg0 _ _ <<<"${L[0]}"
read -r _ sg1 _ _ <<<"${L[1]}"
work=$(mktemp -d)
prom=""
stop_prom() {
	[ -n "$prom" ] || return 0
	kill -TERM "$prom" 2>/dev/null || true
	for _ in $(seq 1 200); do kill -0 "$prom" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$prom" 2>/dev/null || true
	wait "$prom" 2>/dev/null || true
	prom=""
}
trap 'stop_prom; rm -rf "$work"' EXIT

cp /vaaid/docs/prometheus/vaaid-alerts.yml "$work/"
cat >"$work/prometheus.yml" <<'EOF'
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - vaaid-alerts.yml
scrape_configs:
  - job_name: vaaid
    static_configs:
      - targets: ['127.0.0.1:9612']
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
	--web.listen-address=127.0.0.1:19090 --log.level=warn >"$OUT/prometheus.log" 2>&1 &
prom=$!
log "prometheus started (pid $prom)"

# promql EXPR [TIME]: the value of an instant query (at TIME, seconds since the
# epoch, else now) with one sample; nothing when it has none; exit 1 on more.
promql() {
	python3 - "$@" <<'PY'
import json, sys, urllib.parse, urllib.request
q = {"query": sys.argv[1]}
if len(sys.argv) > 2:
    q["time"] = sys.argv[2]
a = json.load(urllib.request.urlopen("http://127.0.0.1:19090/api/v1/query?" + urllib.parse.urlencode(q), timeout=30))
assert a["status"] == "success", a
r = a["data"]["result"]
if len(r) > 1:
    sys.exit("promql: %d samples for %s" % (len(r), sys.argv[1]))
print(r[0]["value"][1] if r else "")
PY
}
# scrape_after T0: waits (up to 120 s) for a scrape of vaaid that started after
# T0 and prints its time (every sample of one scrape carries that time).
scrape_after() {
	local t
	for _ in $(seq 1 240); do
		t=$(promql 'timestamp(up{job="vaaid"})') || return 1
		[ -n "$t" ] && python3 -c "import sys; sys.exit(float(sys.argv[1]) <= float(sys.argv[2]))" "$t" "$1" && { echo "$t"; return 0; }
		sleep 0.5
	done
	return 1
}

# the server is up and has scraped vaaid (TCG: Prometheus takes a while to start)
for i in $(seq 1 240); do
	kill -0 "$prom" 2>/dev/null || { tail -n 20 "$OUT/prometheus.log" >&2; die "prometheus exited"; }
	[ "$(promql 'up{job="vaaid"}' 2>/dev/null || true)" = 1 ] && break
	[ "$i" -lt 240 ] || die "prometheus did not scrape vaaid within 120 s (up != 1)"
	sleep 0.5
done
log "prometheus scrapes vaaid (up == 1)"

V0='pool="default",volume="vol0"'
V1='pool="default",volume="vol1"'
QUERIES=(
	"vaaid_caw_miscompares_total{$V0}"
	"vaaid_commands_total{$V0,kind=\"caw\",result=\"ok\"}"
	"vaaid_commands_total{$V0,kind=\"caw\",result=\"failed\"}"
	"vaaid_write_same_unmap_total{$V0}"
	"vaaid_commands_total{$V1,kind=\"xcopy\",result=\"failed\"}"
	"vaaid_command_latency_seconds_count{$V1,kind=\"xcopy\",result=\"failed\"}"
	"sum by (pool) (vaaid_commands_total{pool=\"default\",kind=\"caw\"})"
)
snapshot() { # snapshot FILE: each query's value, one a line, at the first scrape after now
	local t0 t; t0=$(date +%s.%N)
	t=$(scrape_after "$t0") || die "no scrape of vaaid after $t0 within 120 s"
	: >"$1"
	for q in "${QUERIES[@]}"; do
		v=$(promql "$q" "$t") || die "PromQL $q"
		[ -n "$v" ] || die "PromQL $q: no sample"
		echo "$v" >>"$1"
	done
}
# the COMPARE AND WRITEs' block holds zeros (before the first snapshot)
sg_dd if=/dev/zero of="$sg0" bs=512 seek=110000 count=1 2>/dev/null || die "zeroing LBA 110000"
snapshot "$work/before"

blk() { printf '%-512s' "$1"; }
caw() { # caw OLD NEW: 0 written, 14 miscompare
	{ if [ "$1" = zero ]; then head -c 512 /dev/zero; else blk "$1"; fi; blk "$2"; } >"$work/caw"
	local rc=0
	sg_compare_and_write --in="$work/caw" --lba=110000 --num=1 "$sg0" 2>/dev/null || rc=$?
	echo $rc
}
[ "$(caw zero a)" = 0 ] || die "CAW 1"
[ "$(caw zero b)" = 14 ] || die "CAW 2 did not miscompare"
[ "$(caw a b)" = 0 ] || die "CAW 3"
sg_write_same --16 --unmap --lba=210000 --num=2048 "$sg0" || die "WRITE SAME of zeros with UNMAP"
rc=0; sg_raw -s 1 -i /dev/zero "$sg1" 83 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 >/dev/null 2>&1 || rc=$?
[ $rc -ne 0 ] || die "an EXTENDED COPY with a one-byte parameter list was not refused"
snapshot "$work/after"
"$VAAICTL" --json stats default >"$work/stats" || die "vaaictl stats: $(cat "$work/stats")"

python3 - "$work/before" "$work/after" "$work/stats" <<'PY' || die "Prometheus' values are not the commands sent / not vaaictl stats'"
import json, sys
b = [float(x) for x in open(sys.argv[1])]
a = [float(x) for x in open(sys.argv[2])]
s = json.load(open(sys.argv[3]))
names = ["vol0 caw miscompares", "vol0 caw ok", "vol0 caw failed", "vol0 write_same unmap bit",
         "vol1 xcopy failed", "vol1 xcopy failed latency count", "pool caw commands (sum by pool)"]
want = [1, 2, 1, 1, 1, 1, 3]
for n, x, y, w in zip(names, b, a, want):
    assert y - x == w, "%s: %s -> %s, expected +%s" % (n, x, y, w)
def st(vol):
    return [l for l in s["luns"] if l["volume"] == vol][0]["stats"]
v0, v1 = st("vol0"), st("vol1")
pool = [p for p in s["pools"] if p["name"] == "default"][0]["lun_sum"]["commands"]["caw"]
json_vals = [v0["caw"]["miscompares"], v0["commands"]["caw"]["ok"], v0["commands"]["caw"]["failed"],
             v0["write_same"]["unmap_bit"], v1["commands"]["xcopy"]["failed"],
             v1["commands"]["xcopy"]["latency_failed"]["count"], pool["ok"] + pool["failed"]]
for n, y, j in zip(names, a, json_vals):
    assert y == j, "%s: Prometheus %s, vaaictl stats %s" % (n, y, j)
print("ok")
PY
log "PromQL over the scraped samples: the sequence's exact differences, equal to vaaictl stats"

# the alert rules run on the real samples: the refused copy fires VaaidXcopyRefused for vol1
python3 - <<'PY' || die "VaaidXcopyRefused did not fire for vol1"
import json, time, urllib.request
deadline = time.time() + 60
while True:
    a = json.load(urllib.request.urlopen("http://127.0.0.1:19090/api/v1/alerts", timeout=30))
    fired = [x for x in a["data"]["alerts"] if x["labels"].get("alertname") == "VaaidXcopyRefused"
             and x["labels"].get("volume") == "vol1" and x["state"] == "firing"]
    if fired:
        break
    assert time.time() < deadline, a
    time.sleep(0.5)
print("ok")
PY
log "the alert rules: VaaidXcopyRefused fires for vol1"
stop_prom
log "prometheus stopped"
