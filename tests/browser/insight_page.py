#!/usr/bin/env python3
"""The partition advisor's page in a real browser (headless Chromium).

Starts the given aztable binary (in memory, port 0), records a workload over a few
seconds (inserts with ever-increasing PartitionKeys, a busy partition, point reads,
row-range, partition-range and full-table scans), then loads /_aztable/insight in
headless Chromium: the rendered DOM must hold every table, its heat strips and its
scans, and the screenshot must be a real PNG. Python standard library only.

Usage: tests/browser/insight_page.py <aztable-binary> [--screenshot out.png]
                                     [--seconds N] [--keep-serving]

Skips (exit 0) only when no Chromium is installed; .ci/run installs it.
"""

import argparse
import base64
import datetime
import hashlib
import hmac
import http.client
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Client:
    """SharedKey-signed requests over one keep-alive connection."""

    def __init__(self, port):
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def send(self, method, path, body=None):
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")
        ctype = "application/json" if body is not None else ""
        resource = "/%s/%s%s" % (ACCOUNT, ACCOUNT, urllib.parse.urlsplit(path).path)
        sts = "%s\n\n%s\n%s\n%s" % (method, ctype, date, resource)
        sig = base64.b64encode(hmac.new(base64.b64decode(KEY), sts.encode(), hashlib.sha256).digest()).decode()
        headers = {
            "x-ms-date": date,
            "x-ms-version": "2019-02-02",
            "Accept": "application/json;odata=nometadata",
            "Authorization": "SharedKey %s:%s" % (ACCOUNT, sig),
        }
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = ctype
            headers["Prefer"] = "return-no-content"
        self.conn.request(method, "/%s%s" % (ACCOUNT, path), body=data, headers=headers)
        resp = self.conn.getresponse()
        payload = resp.read()
        return resp.status, payload

    def must(self, method, path, body=None, ok=(200, 201, 204)):
        status, payload = self.send(method, path, body)
        if status not in ok:
            raise SystemExit("%s %s: %d %s" % (method, path, status, payload[:300]))
        return payload

    def query(self, table, flt):
        return self.must("GET", "/%s()?$filter=%s" % (table, urllib.parse.quote(flt)))


def start_server(binary):
    proc = subprocess.Popen(
        [binary, "--inMemoryPersistence", "--tablePort", "0", "--silent"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=dict(os.environ, AZTABLE_LOG="info,aztable::access=off"),
    )
    deadline = time.time() + 30
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(r"listening on http://[^\s]+:(\d+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
            return proc, int(m.group(1))
    proc.kill()
    raise SystemExit("the server did not report its port")


def workload(port, seconds):
    c = Client(port)
    for t in ("sensorreadings", "customers", "orders"):
        c.must("POST", "/Tables", {"TableName": t})
    for i in range(200):
        c.must("POST", "/customers", {"PartitionKey": "region%02d" % (i % 8), "RowKey": "%08x" % ((i * 2654435761) % 4294967291), "Tier": i % 3})
    stop = time.time() + seconds

    def sensors():
        cl, i = Client(port), 0
        while time.time() < stop:
            # ever-increasing PartitionKeys (timestamps): the append-only pattern
            ticks = 638500000000000000 + i * 10000
            cl.must("POST", "/sensorreadings", {"PartitionKey": "%019d" % ticks, "RowKey": "device%03d" % (i % 50), "Value": i})
            i += 1

    def orders():
        cl, i = Client(port), 0
        while time.time() < stop:
            # one busy partition, bursts every few seconds
            burst = int(time.time()) % 4 == 0
            for _ in range(5 if burst else 1):
                cl.must("POST", "/orders", {"PartitionKey": "today", "RowKey": "%010d" % i, "Amount": i})
                i += 1
            if not burst:
                time.sleep(0.01)

    def readers():
        cl, i = Client(port), 0
        while time.time() < stop:
            cl.send("GET", "/customers(PartitionKey='region%02d',RowKey='%08x')" % (i % 8, (i * 2654435761) % 4294967291))
            if i % 50 == 0:
                cl.query("customers", "Tier eq 7")  # full table scan, returns nothing
                cl.query("customers", "PartitionKey eq 'region03' and RowKey ge '8'")  # row range
                cl.query("customers", "PartitionKey ge 'region02' and PartitionKey lt 'region04' and Tier eq 1")
            i += 1

    threads = [threading.Thread(target=f) for f in (sensors, orders, readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("%s is not a PNG" % path)
    return struct.unpack(">II", head[16:24])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--screenshot")
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--keep-serving", action="store_true", help="leave the server up (for a look)")
    args = ap.parse_args()
    browser = chromium()
    if not browser:
        print("SKIP: no chromium installed (apt-get install chromium)")
        return 0
    proc, port = start_server(args.binary)
    tmp = tempfile.mkdtemp(prefix="aztable-browser-")
    try:
        workload(port, args.seconds)
        url = "http://127.0.0.1:%d/_aztable/insight" % port
        flags = [browser, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
                 "--user-data-dir=" + os.path.join(tmp, "profile")]
        dom = subprocess.run(flags + ["--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
        dom = dom.replace("&#39;", "'")
        worst, narrow = dom.find("Tier eq 7"), dom.find("PartitionKey eq 'region03'")
        checks = {
            "page title": "<h1>Partition advisor</h1>" in dom,
            "every table": all(t in dom for t in ("sensorreadings", "customers", "orders")),
            "heat strips (svg)": len(re.findall(r'<svg class="heatstrip"', dom)) >= 3,
            "append-only finding": "append-only" in dom,
            "full scan listed": "Tier eq 7" in dom,
            "scans worst first": 0 <= worst < narrow,
        }
        shot = args.screenshot or os.path.join(tmp, "insight.png")
        subprocess.run(flags + ["--screenshot=" + os.path.abspath(shot), "--window-size=1280,1600", url],
                       capture_output=True, text=True, timeout=120)
        checks["screenshot"] = os.path.exists(shot) and png_size(shot) == (1280, 1600) and os.path.getsize(shot) > 20000
        failed = [k for k, ok in checks.items() if not ok]
        for k, ok in checks.items():
            print("%s %s" % ("ok  " if ok else "FAIL", k))
        if failed:
            print(dom[:3000])
            return 1
        if args.keep_serving:
            print("serving on %s; Ctrl-C to stop" % url)
            proc.wait()
        return 0
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
