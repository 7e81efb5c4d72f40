#!/bin/bash
# Linux sd sees vaaid LUNs: INQUIRY, VPD pages, READ CAPACITY(16) (512e), per-volume identity.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mapfile -t L < <(/vaaid/tests/vm/setup-luns.sh 2 2G)
[ ${#L[@]} -eq 2 ] || die "setup-luns printed ${#L[@]} lines"
read -r _ sg0 sd0 _ <<<"${L[0]}"
read -r _ sg1 _ _ <<<"${L[1]}"
inq=$(sg_inq "$sg0")
grep -q "Vendor identification: VAAID" <<<"$inq" || die "vendor: $inq"
grep -q "Product identification: VAAID THIN LUN" <<<"$inq" || die "product: $inq"
# 3PC=1: EXTENDED COPY is supported (SPC-4 6.6.2, standard INQUIRY byte 5 bit 3);
# sg_inq prints "... TPGS=0  3PC=1  Protect=0 ..."
tpc=$(grep -oE "(^|[[:space:]])3PC=[0-9]+" <<<"$inq" | tr -d '[:space:]') || die "sg_inq shows no 3PC field: $inq"
[ "$tpc" = "3PC=1" ] || die "standard INQUIRY: $tpc, expected 3PC=1 (vaaid serves EXTENDED COPY): $inq"
vpd=$(sg_vpd -p 0x83 "$sg0")
# the LU's NAA designator is IEEE Registered Extended (SPC-4 7.8.6.6.5): 16 bytes whose
# first nibble (NAA) is 6; sg_vpd prints the designator on the line after its type:
#   designator type: NAA,  code set: Binary
#     0x6001405f860edce125302edf4aa7a634
naa=$(grep -A1 "designator type: NAA" <<<"$vpd" | grep -oE "^[[:space:]]+0x[0-9a-f]+$" | tr -d '[:space:]') ||
	die "no NAA designator: $vpd"
[[ $naa =~ ^0x6[0-9a-f]{31}$ ]] || die "the NAA designator is not NAA 6 (16 bytes): '$naa': $vpd"
grep -q "vendor id: VAAID" <<<"$vpd" || die "no T10 vendor designator: $vpd"
s0=$(sg_vpd -p 0x80 -r "$sg0" | tail -c +5 | tr -d '\0')
s1=$(sg_vpd -p 0x80 -r "$sg1" | tail -c +5 | tr -d '\0')
[ -n "$s0" ] && [ "$s0" != "$s1" ] || die "unit serials '$s0' '$s1' must differ"
# (grep reads whole outputs: "cmd | grep -q" under pipefail fails when grep exits
# early and cmd gets SIGPIPE)
b0=$(sg_vpd -p 0xb0 "$sg0")
grep -q "Optimal transfer length granularity: 8" <<<"$b0" || die "VPD B0: $b0"
grep -q "Maximum compare and write length: 128 blocks" <<<"$b0" || die "VPD B0 CAW length: $b0"
b1=$(sg_vpd -p 0xb1 "$sg0")
grep -qi "non-rotating" <<<"$b1" || die "VPD B1: $b1"
sg_vpd -p 0xb2 "$sg0" >/dev/null || die "VPD B2 missing"
cap=$(sg_readcap -l "$sg0")
grep -q "Logical block length=512 bytes" <<<"$cap" || die "readcap: $cap"
grep -q "Logical blocks per physical block exponent=3" <<<"$cap" || die "readcap: $cap"
grep -q "Number of logical blocks=4194304" <<<"$cap" || die "readcap: $cap"
[ "$(cat /sys/block/${sd0#/dev/}/queue/physical_block_size)" = 4096 ] || die "sd physical block size"
# write cache off (WCE=0): the sd driver reads the caching mode page
# the caching mode page (MODE SENSE(6), DBD=1: 4-byte header, then the page; WCE is
# bit 2 of the page's byte 2, SBC-4 7.5.5)
page=$(sg_modes -6 -d -r -p 0x08 "$sg0" | od -An -tx1 -v | tr -s ' \n' ' ')
read -r -a pb <<<"$page"
[ "${pb[4]:-}" = 08 ] || die "caching mode page not returned: $page"
[ $((0x${pb[6]} & 0x04)) -eq 0 ] || die "WCE=1 in the caching mode page: $page"
grep -q "write through" "/sys/block/${sd0#/dev/}/device/scsi_disk/"*/cache_type || die "cache_type is not write through"
log "identity ok: $tpc, NAA $naa, serials $s0 / $s1"
