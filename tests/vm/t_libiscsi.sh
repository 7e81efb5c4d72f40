#!/bin/bash
# libiscsi iscsi-test-cu --dataloss over SG_IO (/dev/sgX) and over iSCSI, for
# the suites the engine issue covers. 0 failed required; every [SKIPPED] is
# listed (libiscsi counts skips as passes; we do not) and kept in
# $OUT/libiscsi-skips.txt for docs/conformance.md.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
SUITES=${SUITES:-"SCSI.Inquiry SCSI.ReadCapacity10 SCSI.ReadCapacity16 SCSI.TestUnitReady SCSI.ModeSense6
SCSI.ReportSupportedOpcodes SCSI.Read10 SCSI.Read12 SCSI.Read16 SCSI.Write10 SCSI.Write12
SCSI.Write16 SCSI.Verify10 SCSI.Verify16 SCSI.WriteVerify10 SCSI.WriteVerify16 SCSI.Mandatory"}
# LUN_INDEX (default 0): which LUN of setup-luns to test (COPY STATUS data is held
# per LUN, so a suite that needs a LUN no earlier copy used can have its own)
LI=${LUN_INDEX:-0}
# BLOCK (default 512): the LUNs' block size (setup-luns' BLOCK); KNOWN: a file of
# known conflicts for libiscsi-summary.py (reported as CONFLICT, not failed);
# LOGTAG: inserted in the log names ($OUT/libiscsi$LOGTAG-KIND-BLOCK-SUITE.log)
BLK=${BLOCK:-512}
mapfile -t L < <(/vaaid/tests/vm/setup-luns.sh $((LI + 1)) 2G "$BLK")
read -r _ sg _ url <<<"${L[$LI]}"
[ -n "$url" ] || die "setup-luns failed"
fail=0
SKIPS="$OUT/libiscsi-skips-${SKIPS_NAME:-basic}.txt"
: > "$SKIPS"
for target in "$sg" "$url"; do
	kind=sgio; [ "$target" = "$url" ] && kind=iscsi
	for s in $SUITES; do
		log=$OUT/libiscsi${LOGTAG:-}-$kind-$BLK-$s.log
		iscsi-test-cu -V --dataloss --test="$s" "$target" > "$log" 2>&1
		sum=$(python3 "$(dirname "$0")/libiscsi-summary.py" "$kind-$BLK" ${KNOWN:+"$KNOWN"} < "$log")
		rc=$?
		echo "$sum" | grep -v "passed=" | tee -a "$SKIPS" >&2
		echo "$sum" | tail -1 >&2
		[ $rc -eq 0 ] || fail=1
	done
done
[ $fail -eq 0 ] || die "libiscsi: failures (logs in build/vm-out/libiscsi-*.log)"
