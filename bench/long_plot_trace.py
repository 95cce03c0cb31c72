#!/usr/bin/python3
"""long_plot_trace.py -- the long trace of BENCHMARKS.md section 9 (long traces plotted)

Usage: bench/long_plot_trace.py OUT.trace.jsonl.zst [SAMPLES] [STAGES]

Writes a stagebench/1 trace of SAMPLES samples (default 1,200,000) at 10 ms with
STAGES stage events (default 100,000) evenly spread, a footprint that wanders
between 100 MiB and 2 GiB, and one sample of 9 GiB at two thirds of the run
(the spike a plot must draw), compressed by zstd -3 as it is written (the plain
text never sits in memory or on disk). Seeded: the same arguments give the same
bytes.
"""
import json
import random
import subprocess
import sys

MIB = 1 << 20


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) > 1 else 2
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1200000
    nstages = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
    rnd = random.Random(29)
    z = subprocess.Popen(["zstd", "-q", "-f", "-3", "-o", out], stdin=subprocess.PIPE)
    w = z.stdin
    start = {"type": "start", "format": "stagebench/1", "utc": "2026-01-01T00:00:00+00:00",
             "interval": 0.01, "mode": "staged", "seed": 29, "command": ["python3", "long.py"],
             "host": {"os": "Debian GNU/Linux 12", "kernel": "6.1", "machine": "x86_64",
                      "cpus": 2, "memory": 25276510208, "swap": 0},
             "meter": {"backend": "linux", "footprint": "RssAnon + RssShmem"}}
    w.write((json.dumps(start) + "\n").encode())
    per = max(1, n // nstages)
    spike = n * 2 // 3
    fp = 300 * MIB
    buf = []
    for i in range(n):
        t = (i + 1) * 0.01
        if i % per == 0 and i // per < nstages:
            buf.append('{"type":"event","kind":"stage","t":%.3f,"stage":"s%d"}' % (t, (i // per) % 50))
        fp = min(2048 * MIB, max(100 * MIB, fp + rnd.randint(-4 * MIB, 4 * MIB)))
        v = 9 * 1024 * MIB if i == spike else fp
        buf.append('{"type":"sample","t":%.3f,"footprint":%d,"rss":%d,"swap_used":0,"procs":1}'
                   % (t, v, v + 30 * MIB))
        if len(buf) >= 20000:
            w.write(("\n".join(buf) + "\n").encode())
            buf = []
    buf.append('{"type":"end","exit":0,"wall":%.3f,"cpu":1.0}' % (n * 0.01 + 0.01))
    w.write(("\n".join(buf) + "\n").encode())
    w.close()
    return z.wait()


if __name__ == "__main__":
    sys.exit(main())
