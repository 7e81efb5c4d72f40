#!/usr/bin/env python3
"""The Prometheus endpoint under data-path load, in the LIO guest (issue 25).

How this file works: one module, three commands, sharing the scraper (one timed
GET /metrics), the fio launcher (randrw 4k, direct, libaio, iodepth 32, one job
per disk, JSON result) and the disks' completion counters (/sys/block/X/stat).

  round LABEL DISK...   (tests/vm/bench-guest-scrape.sh, once per round and daemon)
      Three blocks side by side: K scrapes with the data path idle; fio for
      RUNTIME s while a scraper GETs /metrics every GAP s (the loaded scrapes);
      fio for RUNTIME s without scraping. Appends its times to RESULTS.
  report          (after the rounds) prints, per LABEL (" daemon=LABEL" added
      when the label is not empty):
        scrape_size bytes=B lines=L
        scrape_latency luns=N idle_p99_ms=A loaded_p99_ms=B ratio=R
        scrape_cost fio_iops_noscrape=X fio_iops_scraping=Y ratio=Z ...
      (p99: the nearest-rank percentile of every scrape of the label's rounds;
      IOPS: the median of its rounds' fio runs). Times are printed, never asserted.

  abuse DISK      (tests/vm/t_metrics_abuse.sh)
      fio on DISK; after a few seconds, for ABUSE s: more connections than the
      endpoint's 16, clients that send half a request and wait, malformed
      requests, and GETs of /metrics in a loop; meanwhile the disk's completed
      I/O count is sampled. Fails (exit 1) when the count stood still for more
      than STALL s (default 2), when fio's longest completion latency reached
      5 s, when fio failed, or when a plain GET /metrics is not served within
      RECOVER s after the abuse. Prints what it measured on stderr.

Environment: METRICS (default 127.0.0.1:9612), and the knobs named above.
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

HOST, PORT = os.environ.get("METRICS", "127.0.0.1:9612").rsplit(":", 1)
PORT = int(PORT)
RECOVER = 15.0  # s after the abuse for the endpoint to serve again (its idle timeout is 10 s)


def log(msg):
    print("[metrics_load] " + msg, file=sys.stderr, flush=True)


def scrape(timeout=30.0):
    """One GET /metrics on a new connection: (seconds, status, body)."""
    t0 = time.monotonic()
    s = socket.create_connection((HOST, PORT), timeout=timeout)
    try:
        s.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        chunks = []
        while True:
            c = s.recv(1 << 16)
            if not c:
                break
            chunks.append(c)
    finally:
        s.close()
    dt = time.monotonic() - t0
    raw = b"".join(chunks)
    head, _, body = raw.partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    return dt, status, body


def fio_start(disks, runtime, extra=()):
    """fio randrw 4k, iodepth 32, one job per disk, for runtime s (JSON on stdout)."""
    cmd = ["fio", "--output-format=json", "--group_reporting", "--direct=1",
           "--ioengine=libaio", "--iodepth=32", "--bs=4k", "--rw=randrw",
           "--size=" + os.environ.get("AREA", "64M"), "--time_based",
           "--runtime=%d" % runtime, "--randrepeat=0", "--norandommap", *extra]
    for i, d in enumerate(disks):
        cmd += ["--name=d%d" % i, "--filename=" + d]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def fio_result(p):
    """(IOPS read+write, longest completion latency in s) of a finished fio."""
    out, err = p.communicate()
    if p.returncode != 0:
        raise RuntimeError("fio failed (%d): %s" % (p.returncode, err.strip()[-400:]))
    j = json.loads(out[out.index("{"):])["jobs"][0]
    if j["error"]:
        raise RuntimeError("fio error %d" % j["error"])
    iops = j["read"]["iops"] + j["write"]["iops"]
    cmax = max(j["read"]["clat_ns"]["max"], j["write"]["clat_ns"]["max"]) / 1e9
    return iops, cmax


def completed(disks):
    """Reads + writes the disks completed (the block layer's count)."""
    n = 0
    for d in disks:
        with open("/sys/block/%s/stat" % os.path.basename(d)) as f:
            v = f.read().split()
        n += int(v[0]) + int(v[4])
    return n


def p99(xs):
    """The nearest-rank 99th percentile."""
    s = sorted(xs)
    return s[max(0, -(-99 * len(s) // 100) - 1)]


def scrape_ok():
    dt, status, body = scrape()
    if status != 200 or b"vaaid_commands_total" not in body:
        raise RuntimeError("GET /metrics: status %d, %d bytes" % (status, len(body)))
    return dt, body


# ---- bench

def bench_round(label, disks):
    """One round of the three blocks; its measurements appended to RESULTS (JSON lines)."""
    k = int(os.environ.get("K", "40"))
    runtime = int(os.environ.get("RUNTIME", "20"))
    gap = float(os.environ.get("GAP", "0.1"))
    _, body = scrape_ok()
    r = {"label": label, "luns": len(disks), "bytes": len(body), "lines": body.count(b"\n")}
    t = []
    for _ in range(k):
        t.append(scrape_ok()[0])
        time.sleep(gap)
    r["idle"] = t
    p = fio_start(disks, runtime)
    time.sleep(2)  # fio at full depth
    t = []
    while p.poll() is None:
        dt = scrape_ok()[0]
        if p.poll() is None:  # a scrape that ended after fio did is not a loaded one
            t.append(dt)
        time.sleep(gap)
    r["loaded"] = t
    r["iops_scraping"], r["clat_max_scraping"] = fio_result(p)
    r["iops_noscrape"], r["clat_max_noscrape"] = fio_result(fio_start(disks, runtime))
    log("%s: idle %d scrapes p50 %.1f ms max %.1f ms; loaded %d scrapes p50 %.1f ms max %.1f ms; "
        "fio %.0f IOPS scraping (clat max %.0f ms), %.0f alone (clat max %.0f ms)"
        % (label or "round", len(r["idle"]), statistics.median(r["idle"]) * 1e3,
           max(r["idle"]) * 1e3, len(t), statistics.median(t) * 1e3, max(t) * 1e3,
           r["iops_scraping"], r["clat_max_scraping"] * 1e3, r["iops_noscrape"],
           r["clat_max_noscrape"] * 1e3))
    with open(os.environ.get("RESULTS", "/tmp/scrape-results.jsonl"), "a") as f:
        f.write(json.dumps(r) + "\n")
    return 0


def bench_report():
    """The benchmark's lines, per label in the order first seen: every scrape of its
    rounds for the p99s, the median of its rounds' fio runs for the IOPS."""
    rows = [json.loads(x) for x in open(os.environ.get("RESULTS", "/tmp/scrape-results.jsonl"))]
    labels = list(dict.fromkeys(r["label"] for r in rows))
    for lab in labels:
        rs = [r for r in rows if r["label"] == lab]
        tag = " daemon=%s" % lab if lab else ""
        idle = [x for r in rs for x in r["idle"]]
        loaded = [x for r in rs for x in r["loaded"]]
        print("scrape_size bytes=%d lines=%d%s" % (rs[0]["bytes"], rs[0]["lines"], tag))
        a, l = p99(idle), p99(loaded)
        print("scrape_latency luns=%d idle_p99_ms=%.1f loaded_p99_ms=%.1f ratio=%.2f%s"
              % (rs[0]["luns"], a * 1e3, l * 1e3, l / a, tag))
        x = statistics.median(r["iops_noscrape"] for r in rs)
        y = statistics.median(r["iops_scraping"] for r in rs)
        print("scrape_cost fio_iops_noscrape=%.0f fio_iops_scraping=%.0f ratio=%.3f "
              "clat_max_ms_noscrape=%.0f clat_max_ms_scraping=%.0f scrapes_idle=%d scrapes_loaded=%d "
              "rounds=%d%s"
              % (x, y, y / x, max(r["clat_max_noscrape"] for r in rs) * 1e3,
                 max(r["clat_max_scraping"] for r in rs) * 1e3, len(idle), len(loaded), len(rs), tag))
    return 0


# ---- abuse

def abusers(stop, counts):
    """Threads that attack the endpoint until stop is set; counts[name] += 1 per attack."""
    def conn():
        return socket.create_connection((HOST, PORT), timeout=5)

    def count(name):
        with lock:
            counts[name] = counts.get(name, 0) + 1

    def flood():  # bursts of 40 connections held 1 s: more than the 16 the endpoint allows
        while not stop.is_set():
            held = []
            for _ in range(40):
                try:
                    held.append(conn())
                    count("connections opened")
                except OSError:
                    count("connections refused")
            stop.wait(1)
            for s in held:
                s.close()
            stop.wait(0.5)

    def slow():  # half a request, then nothing until the server gives up or we stop
        while not stop.is_set():
            try:
                s = conn()
                s.sendall(b"GET /metr")
                count("half requests")
                stop.wait(3)
                s.close()
            except OSError:
                count("half requests refused")
                stop.wait(0.2)

    bad = [b"\x01\x02 nonsense\r\n\r\n", b"GET /metrics HTTP/9.9\r\n\r\n",
           b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X-Big: " + b"A" * 70000 + b"\r\n\r\n",
           b"GET /" + b"m" * 100000 + b" HTTP/1.0\r\n\r\n",
           b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
           b"POST /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
           b"GET /metrics HTTP/1.1\r\n\r\n",  # 1.1 without Host
           b"\r\n\r\n\r\n", b"GET\r\n\r\n", bytes(range(256)) * 4]

    def malformed():
        i = 0
        while not stop.is_set():
            try:
                s = conn()
                s.sendall(bad[i % len(bad)])
                s.shutdown(socket.SHUT_WR)
                while s.recv(4096):
                    pass
                s.close()
                count("malformed requests")
            except OSError:
                count("malformed requests cut")
            i += 1

    def getter():  # valid GETs as fast as they are answered
        while not stop.is_set():
            try:
                _, status, _ = scrape(timeout=10)
                count("GET %d" % status)
            except OSError:
                count("GET failed")

    lock = threading.Lock()
    fns = [flood, slow, slow, malformed, malformed, getter, getter, getter]
    return [threading.Thread(target=f, daemon=True) for f in fns]


def abuse(disks):
    lead = float(os.environ.get("LEAD", "4"))
    span = float(os.environ.get("ABUSE", "15"))
    stall = float(os.environ.get("STALL", "2"))
    scrape_ok()
    p = fio_start(disks, int(lead + span + 3))
    time.sleep(lead)
    stop, counts = threading.Event(), {}
    th = abusers(stop, counts)
    c0 = last = completed(disks)
    t0 = tlast = time.monotonic()
    worst = 0.0
    for t in th:
        t.start()
    while time.monotonic() - t0 < span:  # the disk's completions, every 50 ms
        time.sleep(0.05)
        now, c = time.monotonic(), completed(disks)
        if c != last:
            last, tlast = c, now
        worst = max(worst, now - tlast)
    stop.set()
    for t in th:
        t.join(15)
    during = last - c0
    iops, cmax = fio_result(p)
    log("during %.0f s of abuse: %s" % (span, ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    log("I/O completed during the abuse: %d; longest time without a completion %.2f s (bound %.1f s);"
        " fio %.0f IOPS, longest completion latency %.2f s (bound 5 s)" % (during, worst, stall, iops, cmax))
    rc = 0
    if worst > stall:
        log("FAIL: the disk completed nothing for %.2f s during the abuse" % worst)
        rc = 1
    if cmax >= 5:
        log("FAIL: an I/O took %.2f s" % cmax)
        rc = 1
    # Served again: a slot held by an attacker's connection is freed by the
    # server's 10 s idle timeout at the latest (and libmicrohttpd counts a
    # closed connection until its listening thread cleans it up)
    t0, tries = time.monotonic(), 0
    while True:
        tries += 1
        try:
            dt, body = scrape_ok()
            break
        except (RuntimeError, OSError) as e:
            if time.monotonic() - t0 > RECOVER:
                log("FAIL: GET /metrics not served %.0f s after the abuse: %s" % (RECOVER, e))
                return 1
            time.sleep(0.5)
    log("after the abuse: GET /metrics served %d bytes in %.0f ms (attempt %d, %.1f s after the abuse)"
        % (len(body), dt * 1e3, tries, time.monotonic() - t0))
    return rc


if __name__ == "__main__":
    cmds = {"round": lambda a: bench_round(a[0], a[1:]), "report": lambda a: bench_report(),
            "abuse": abuse}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit("usage: metrics_load.py round LABEL DISK... | report | abuse DISK")
    try:
        sys.exit(cmds[sys.argv[1]](sys.argv[2:]))
    except (RuntimeError, OSError) as e:
        log("FAIL: %s" % e)
        sys.exit(1)
