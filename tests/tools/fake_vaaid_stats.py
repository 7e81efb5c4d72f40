#!/usr/bin/env python3
"""A stand-in for vaaid's control socket answering `stats` (tests/tools/vaaictl_top.sh):
every answer has LUN ds1 of pool default with counters grown by a fixed step since
the previous one (1000 WRITEs of 4 KiB, 50 COMPARE AND WRITE + 2 failed, 10 EXTENDED
COPY, 20 WRITE SAME, 5 UNMAP, each GOOD one 500 us). Usage: fake_vaaid_stats.py SOCKET"""
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
    st = {"commands": cmds}
    ans = {"ok": True,
           "luns": [{"dev": "ds1", "pool": "default", "volume": "ds1", "uio": 0, "stats": st}],
           "pools": [{"name": "default", "luns": 1, "lun_sum": st,
                      "pool": {"capacity": 100 << 30, "used": 25 << 30}}]}
    c.sendall(json.dumps(ans).encode() + b"\n")
    c.close()
