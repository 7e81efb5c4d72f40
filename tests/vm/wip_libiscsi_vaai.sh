#!/bin/bash
# NOT run by run-all.sh yet (not named t_*.sh): the VAAI suites still fail (issues 4 and 5);
# run it by hand: scripts/vm/run -- /vaaid/tests/vm/run-all.sh wip_libiscsi_vaai.sh
# libiscsi iscsi-test-cu --dataloss for the VAAI commands (EXTENDED COPY,
# RECEIVE COPY RESULTS, WRITE SAME, UNMAP, GET LBA STATUS) over SG_IO and iSCSI.
# 0 failed required; skips are listed (see docs/conformance.md).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
# ReceiveCopyResults checks "no copy held" first: it gets its own LUN (vol1), since
# the ExtendedCopy suite leaves list identifiers held on vol0 and TCMU gives no I_T
# nexus to scope held data by (docs/xcopy.md).
rc=0
SKIPS_NAME=vaai SUITES="SCSI.ExtendedCopy SCSI.WriteSame10 SCSI.WriteSame16 SCSI.Unmap SCSI.GetLBAStatus" \
	bash "$VMDIR/t_libiscsi.sh" || rc=1
SKIPS_NAME=vaai-rcr LUN_INDEX=1 SUITES="SCSI.ReceiveCopyResults" bash "$VMDIR/t_libiscsi.sh" || rc=1
exit $rc
