#!/bin/bash
# ALUA through the real LIO (docs/ceph.md "ALUA"): vaaid restarted with
# [alua] group = 1, peers = 2 answers, through tcm_loop and target_core_user,
# standard INQUIRY TPGS=1 (implicit), VPD 83h with the relative target port
# and target port group designators (1), REPORT TARGET PORT GROUPS with group
# 1 active/optimized and no other group: the LUN's pool is a file, which no
# other gateway can serve, so peers are not reported for it (src/daemon/
# lun_policy.c vd_backstore_alua; two groups of one RBD pool through LIO are
# t_alua_gateways.sh's) (LIO passes MAINTENANCE IN to TCMU:
# passthrough_parse_cdb), and REPORT SUPPORTED OPERATION CODES listing it.
# Without [alua] (the daemon as the other tests run it): TPGS=0 and RTPG refused.
# The daemon is put back as it was on every path.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# without [alua]: nothing claimed
mapfile -t L < <(/vaaid/tests/vm/setup-luns.sh 1 64M)
read -r _ sg _ _ <<<"${L[0]}"
inq=$(sg_inq "$sg")
grep -qE "(^|[[:space:]])TPGS=0" <<<"$inq" || die "without [alua]: $inq"
if sg_rtpg "$sg" >/dev/null 2>&1; then die "without [alua]: REPORT TARGET PORT GROUPS answered"; fi
lio_clear

orig=$(cat "$VAAID_CONFIG_PATHFILE" 2>/dev/null || true)
restore() {
	lio_clear || true
	stop_vaaid || true
	if [ -n "$orig" ]; then echo "$orig" >"$VAAID_CONFIG_PATHFILE"; else rm -f "$VAAID_CONFIG_PATHFILE"; fi
	start_vaaid || true
}
trap restore EXIT
conf=/run/vaaid-alua.conf
{ [ -n "$orig" ] && cat "$orig"; printf '\n[alua]\ngroup = 1\npeers = 2\n'; } >"$conf"
stop_vaaid
echo "$conf" >"$VAAID_CONFIG_PATHFILE"
start_vaaid

mapfile -t L < <(/vaaid/tests/vm/setup-luns.sh 1 64M)
read -r _ sg _ _ <<<"${L[0]}"
inq=$(sg_inq "$sg")
grep -qE "(^|[[:space:]])TPGS=1" <<<"$inq" || die "standard INQUIRY: no TPGS=1: $inq"
vpd=$(sg_vpd -p 0x83 "$sg")
grep -qi "Relative target port" <<<"$vpd" || die "VPD 83h: no relative target port designator: $vpd"
grep -qi "Target port group" <<<"$vpd" || die "VPD 83h: no target port group designator: $vpd"
raw=$(sg_rtpg -r "$sg" | od -An -tx1 -v | tr -s ' \n' ' ')
read -r -a b <<<"$raw"
# RETURN DATA LENGTH 12 (one group of 12 bytes: peers = 2 is not reported for a
# file pool's LUN); group 1 state 0 (active/optimized), one port with the group's id
[ "${b[3]:-}" = 0c ] || die "RTPG: RETURN DATA LENGTH (one group expected for a file pool): $raw"
[ "${b[4]}" = 00 ] && [ "${b[7]}" = 01 ] && [ "${b[15]}" = 01 ] || die "RTPG: group 1: $raw"
[ "${#b[@]}" -eq 16 ] || die "RTPG: more than one group for a file pool: $raw"
rtpg=$(sg_rtpg -d "$sg" 2>&1) || die "sg_rtpg -d: $rtpg"
ops=$(sg_opcodes "$sg")
grep -qi "Report target port groups" <<<"$ops" || die "RSOC does not list REPORT TARGET PORT GROUPS: $ops"
log "ALUA through LIO ok: TPGS=1, VPD 83h port designators, RTPG: $(tr -s '\n' ' ' <<<"$rtpg")"
