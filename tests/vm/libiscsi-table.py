#!/usr/bin/env python3
"""Markdown tables for docs/conformance.md from the libiscsi logs that the guest
tests leave in build/vm-out (run on the host or in the guest):
  libiscsi-table.py DIR [SUITE...]
For each block size, one row per suite: vaaid over SG_IO and iSCSI (logs
libiscsi-KIND-BLOCK-SUITE.log, from t_libiscsi_vaai.sh / t_caw.sh) next to LIO
fileio (libiscsi-fileio-KIND-BLOCK-SUITE.log, from conformance-fileio.sh), each
as passed / failed / skipped, with "+N conflict" for failures listed in
libiscsi-known-conflicts.txt (counted by libiscsi-summary.py). "-" = no log."""
import os, re, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
d = sys.argv[1] if len(sys.argv) > 1 else "build/vm-out"
suites = sys.argv[2:] or ["SCSI.ExtendedCopy", "SCSI.ReceiveCopyResults", "SCSI.WriteSame10",
                          "SCSI.WriteSame16", "SCSI.Unmap", "SCSI.GetLBAStatus",
                          "SCSI.ReadCapacity16", "SCSI.Inquiry", "SCSI.CompareAndWrite"]
known = os.path.join(here, "libiscsi-known-conflicts.txt")

def cell(prefix, kind, blk, suite):
    f = os.path.join(d, f"libiscsi-{prefix}{kind}-{blk}-{suite}.log")
    if not os.path.exists(f):
        return "-"
    label = f"{kind}-{blk}"
    args = [sys.executable, os.path.join(here, "libiscsi-summary.py"), label]
    if not prefix:
        args.append(known)
    with open(f) as fh:
        out = subprocess.run(args, stdin=fh, capture_output=True, text=True).stdout
    m = re.search(r"passed=(\d+) failed=(\d+) skipped=(\d+) conflicts=(\d+)", out)
    if not m:
        return "?"
    p, fl, s, c = m.groups()
    return f"{p} / {fl} / {s}" + (f" (+{c} known)" if c != "0" else "")

for blk in ("512", "4096"):
    print(f"\n{blk}-byte blocks:\n")
    print("| suite | vaaid SG_IO | vaaid iSCSI | LIO fileio SG_IO | LIO fileio iSCSI |")
    print("|---|---|---|---|---|")
    for s in suites:
        print(f"| {s} | " + " | ".join(cell(p, k, blk, s) for p in ("", "fileio-")
                                        for k in ("sgio", "iscsi")) + " |")
