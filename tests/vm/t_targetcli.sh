#!/bin/bash
# targetcli: user:vaai listed, help create shows the cfgstring format, create /
# ls / delete / re-create with the data and the identity intact, bad
# cfgstrings refused with a message saying what is wrong; LIO's default 64 KiB
# command limit is named in vaaid's log with the fix (hw_max_sectors=8192),
# which the re-create applies (VPD B0 MAXIMUM TRANSFER LENGTH 8192 blocks).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tc() { targetcli "$@" 2>&1; }
# (grep reads whole outputs: "cmd | grep -q" under pipefail fails at random when
# grep exits first and cmd gets SIGPIPE)
grep -q "user:vaai" <<<"$(tc ls /backstores)" || die "targetcli ls /backstores does not show user:vaai"
grep -q "<pool>/<volume>" <<<"$(tc /backstores/user:vaai help create)" || die "help create lacks the description"
out=$(tc /backstores/user:vaai create name=bad1 size=10M cfgstring=nopool/x || true)
grep -q "unknown pool 'nopool'" <<<"$out" || die "unknown pool not refused: $out"
out=$(tc /backstores/user:vaai create name=bad2 size=10M cfgstring=default || true)
grep -q "must be <pool>/<volume>" <<<"$out" || die "malformed cfgstring not refused: $out"
out=$(tc /backstores/user:vaai create name=bad3 size=10M cfgstring=default/a:b || true)
grep -q "illegal volume name" <<<"$out" || die "illegal name not refused: $out"
out=$(tc /backstores/user:vaai create name=ds1 size=100M cfgstring=default/tcds1)
grep -q ds1 <<<"$(tc ls /backstores/user:vaai)" || die "ds1 not listed after create: $out"
# LIO's default hw_max_sectors (128: 64 KiB commands) is named in the log with the fix
warn='commands of at most 64 KiB \(hw_max_sectors 128 x 512 bytes\).*hw_max_sectors=8192'
grep -qE "$warn" "$OUT/vaaid.log" || die "no advice about the 64 KiB command limit in vaaid.log"
nwarn=$(grep -cE "$warn" "$OUT/vaaid.log")
tc /loopback create naa.50014050aa1d0101 >/dev/null
tc /loopback/naa.50014050aa1d0101/luns create /backstores/user:vaai/ds1 >/dev/null
find_sg() { # the first VAAID disk's sg name (no "| head": SIGPIPE under pipefail)
	for d in /sys/bus/scsi/devices/*; do
		[ "$(cat "$d/vendor" 2>/dev/null | tr -d ' ')" = VAAID ] || continue
		ls "$d/scsi_generic" 2>/dev/null && return 0
	done
}
sleep 1
sg=/dev/$(find_sg); [ "$sg" != /dev/ ] || die "no disk for ds1"
sg_turs "$sg" >/dev/null 2>&1 || true
pat=$(mktemp); back=$(mktemp); trap 'rm -f "$pat" "$back"' EXIT
head -c 1048576 /dev/urandom > "$pat"
sg_dd if="$pat" of="$sg" bs=512 count=2048 oflag=sgio >/dev/null 2>&1 || die "write to ds1"
serial=$(sg_vpd -p 0x80 -r "$sg" | tail -c +5 | tr -d '\0')
tc /loopback delete naa.50014050aa1d0101 >/dev/null
tc /backstores/user:vaai delete ds1 >/dev/null
grep -q ds1 <<<"$(tc ls /backstores/user:vaai)" && die "ds1 still listed after delete"
# re-created as advised: 4 MiB commands (VPD B0), and no advice this time
tc /backstores/user:vaai create name=ds1 size=100M cfgstring=default/tcds1 hw_max_sectors=8192 >/dev/null
[ "$(grep -cE "$warn" "$OUT/vaaid.log")" = "$nwarn" ] || die "the command-size advice repeated for hw_max_sectors=8192"
tc /loopback create naa.50014050aa1d0101 >/dev/null
tc /loopback/naa.50014050aa1d0101/luns create /backstores/user:vaai/ds1 >/dev/null
sleep 1
sg=/dev/$(find_sg)
sg_turs "$sg" >/dev/null 2>&1 || true
sg_dd if="$sg" of="$back" bs=512 count=2048 >/dev/null 2>&1 || die "read back ds1"
cmp "$pat" "$back" || die "data changed across delete + create"
serial2=$(sg_vpd -p 0x80 -r "$sg" | tail -c +5 | tr -d '\0')
grep -qE 'Maximum transfer length: 8192 blocks' <<<"$(sg_vpd -p bl "$sg")" ||
	die "VPD B0 after hw_max_sectors=8192: $(sg_vpd -p bl "$sg" | grep -i 'maximum transfer')"

[ "$serial" = "$serial2" ] || die "serial changed: $serial -> $serial2"
grep -q tcds1 <<<"$("$VAAICTL" volume list)" || die "vaaictl volume list lacks tcds1"
tc /loopback delete naa.50014050aa1d0101 >/dev/null
tc /backstores/user:vaai delete ds1 >/dev/null
log "targetcli ok (serial $serial kept)"
