#!/bin/bash
# RECONFIG_DEVICE through configfs (the kernel asks vaaid over netlink and waits for
# its answer): growing attrib/dev_size grows the volume, the LUN reports CAPACITY
# DATA HAS CHANGED (UA 06h/2Ah/09h) and the new capacity, data kept; shrinking,
# changing attrib/dev_config and turning emulate_write_cache on are refused (the
# configfs write fails) with nothing changed. Its own volume (grow0): the other
# tests' volumes keep their 2 GiB.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
d=$C/core/user_1/grow0
read -r sg _ < <(lone_lun grow0 default $((64 << 20)) 50014050aa1d020)
[ -n "$sg" ] || die "grow0 did not appear"
cap() { sg_readcap -l "$sg" | sed -n 's/.*Number of logical blocks=\([0-9]*\).*/\1/p'; }
[ "$(cap)" = 131072 ] || die "grow0 capacity $(cap), expected 131072 blocks"
pat=$(mktemp); back=$(mktemp); trap 'rm -f "$pat" "$back"' EXIT
head -c 1048576 /dev/urandom > "$pat"
sg_dd if="$pat" of="$sg" bs=512 count=2048 oflag=sgio >/dev/null 2>&1 || die "write"

# grow 64 MiB -> 128 MiB
echo $((128 << 20)) > "$d/attrib/dev_size" || die "growing dev_size was refused"
tur=$(sg_raw -v "$sg" 00 00 00 00 00 00 2>&1 || true)
grep -qi "capacity data has changed" <<<"$tur" || die "no CAPACITY DATA HAS CHANGED after the grow: $tur"
sg_turs "$sg" >/dev/null 2>&1 || die "a second UA after the grow"
[ "$(cap)" = 262144 ] || die "capacity after the grow: $(cap) blocks, expected 262144"
grep -q "grow0.*128.0 MiB" <<<"$("$VAAICTL" volume list)" || die "vaaictl: $("$VAAICTL" volume list)"

# refused: shrink, another cfgstring, write cache on
echo $((32 << 20)) > "$d/attrib/dev_size" 2>/dev/null && die "shrinking dev_size was accepted"
[ "$(cap)" = 262144 ] || die "capacity changed by a refused shrink: $(cap)"
grep -q "shrinking default/grow0" "$OUT/vaaid.log" || die "no log line naming the refused shrink"
echo -n "vaai/default/other" > "$d/attrib/dev_config" 2>/dev/null && die "a new cfgstring was accepted"
echo 1 > "$d/attrib/emulate_write_cache" 2>/dev/null && die "write cache on was accepted"
grep -q "write cache is refused" "$OUT/vaaid.log" || die "no log line for the refused write cache"
sg_dd if="$sg" of="$back" bs=512 count=2048 >/dev/null 2>&1 || die "read back"
cmp "$pat" "$back" || die "data changed by the reconfigurations"
log "reconfig ok: grown to 128 MiB with UA 2Ah/09h; shrink, cfgstring, write cache refused"
