#!/usr/bin/env python3
"""A stand-in for vaaid's control socket answering `stats` (tests/tools/vaaictl_top.sh):
every answer has LUN ds1 of pool default with counters grown by a fixed step since
the previous one (1000 WRITEs of 4 KiB, 50 COMPARE AND WRITE + 2 failed, 10 EXTENDED
COPY, 20 WRITE SAME, 5 UNMAP, each GOOD one 500 us; the pool shared 2 x 1048473 bytes
and copied 1048473 to ds1, deallocated 1048473 for WRITE SAME and 1023 for UNMAP).
Also tests/tools/vaaictl_stats.sh. Usage: fake_vaaid_stats.py SOCKET"""
import json, os, socket, sys

path = sys.argv[1]
try:
    os.unlink(path)
except FileNotFoundError:
    pass
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(8)
n = 0
kinds = ["read", "write", "verify", "sync", "xcopy", "caw", "write_same", "unmap",
         "get_lba_status", "other"]
step = {"write": (1000, 0), "caw": (50, 2), "xcopy": (10, 0), "write_same": (20, 0),
        "unmap": (5, 0)}
while True:
    c, _ = srv.accept()
    line = c.makefile().readline().strip()
    if line != "stats":
        c.sendall(b'{"ok":false,"error":"only stats here"}\n')
        c.close()
        continue
    n += 1
    cmds = {}
    for k in kinds:
        ok, failed = step.get(k, (0, 0))
        cmds[k] = {"ok": ok * n, "failed": failed * n,
                   "bytes": ok * n * 4096 if k == "write" else 0,
                   "latency_ok": {"count": ok * n, "sum_ns": ok * n * 500000},
                   "latency_failed": {"count": failed * n, "sum_ns": failed * n * 1000}}
    # what the pool did (vaaictl stats' table, tests/tools/vaaictl_stats.sh): sizes whose
    # text is the longest ("1023.9 KiB") at the first answer
    st = {"commands": cmds,
          "xcopy": {"src_bytes": 0, "dst_bytes": 3 * 1048473 * n,
                    "shared_bytes": 2 * 1048473 * n, "copied_bytes": 1048473 * n},
          "write_same": {"deallocated_bytes": 1048473 * n},
          "unmap": {"deallocated_bytes": 1023 * n}}
    ans = {"ok": True,
           "luns": [{"dev": "ds1", "pool": "default", "volume": "ds1", "uio": 0, "stats": st}],
           "pools": [{"name": "default", "luns": 1, "lun_sum": st,
                      "pool": {"capacity": 100 << 30, "used": 25 << 30}}]}
    c.sendall(json.dumps(ans).encode() + b"\n")
    c.close()
