"""items_traces.py -- BENCHMARKS.md items 3 (analyzer throughput) and 4 (guard reaction)."""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import benchlib as B
from benchlib import *  # noqa: F401,F403 (the shared helpers and constants)


# ---- 3. analyzer throughput ----

STAGES = ["setup", "preprocess", "camera", "structure", "shape_512", "shape_1024",
          "texture", "decode", "export"]


def synth_trace(path, n=360000, interval=0.01):
    """One hour at 10 ms: stagebench/1 records, 9 stages with releases, loads and peaks."""
    import random
    rnd = random.Random(7)
    per = n // len(STAGES)
    out = []
    out.append(json.dumps({"type": "start", "format": "stagebench/1", "utc": "2026-01-01T00:00:00+00:00",
                           "interval": interval, "mode": "staged", "seed": 7,
                           "command": ["python3", "demo/pipeline.py"],
                           "host": {"os": "Debian GNU/Linux 12", "kernel": "6.1", "machine": "x86_64",
                                    "cpus": 2, "memory": 25276510208, "swap": 0},
                           "meter": {"backend": "linux", "footprint": "RssAnon + RssShmem"}}))
    fp = 300 * MIB
    stage_peak = 0
    window_from = 0.0  # as the recorder: a window starts at its stage event or its last release
    for i in range(n):
        t = (i + 1) * interval + rnd.random() * 0.0005
        k = i // per
        if i % per == 0 and k < len(STAGES):
            if k:
                out.append('{"type":"event","kind":"peak","t":%.4f,"stage":"%s","metric":"rss",'
                           '"bytes":%d,"from":%.4f}' % (t, STAGES[k - 1], stage_peak + 4096,
                                                        window_from))
                out.append('{"type":"event","kind":"release","t":%.4f,"name":"model_%d",'
                           '"stage":"%s","nbytes":%d}' % (t + 0.001, k - 1, STAGES[k], 512 * MIB))
            out.append('{"type":"event","kind":"stage","t":%.4f,"stage":"%s"}' % (t, STAGES[k]))
            window_from = t + 0.001 if k else t
            out.append('{"type":"event","kind":"load","t":%.4f,"name":"model_%d","stage":"%s",'
                       '"nbytes":%d,"seconds":%.3f}' % (t + 2.0, k, STAGES[k], (k + 1) * 256 * MIB, 1.5))
            stage_peak = 0
        fp = max(100 * MIB, fp + rnd.randint(-4 * MIB, 4 * MIB + 1024))
        stage_peak = max(stage_peak, fp)
        out.append('{"type":"sample","t":%.4f,"footprint":%d,"rss":%d,"swapped":0,"swap_used":0,'
                   '"swap_total":0,"level":%.6f,"procs":3}' % (t, fp, fp + 30 * MIB,
                                                                80 - fp / 25276510208 * 100))
    out.append('{"type":"event","kind":"peak","t":%.4f,"stage":"%s","metric":"rss","bytes":%d,'
               '"from":%.4f}' % (n * interval + 0.01, STAGES[-1], stage_peak + 4096, window_from))
    out.append('{"type":"end","exit":0,"wall":%.3f,"cpu":7000.0}' % (n * interval + 0.02))
    plain = path[:-4]
    with open(plain, "w") as f:
        f.write("\n".join(out) + "\n")
    subprocess.run(["zstd", "-q", "-f", "-3", plain, "-o", path], check=True)
    return plain


def best_of(argv, reps, **kw):
    best = None
    for _ in range(reps):
        t = time.monotonic()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, **kw)
        d = time.monotonic() - t
        best = d if best is None else min(best, d)
    return best


PYLOOP = "import json, sys\nn = 0\nfor line in open(sys.argv[1], 'rb'):\n    json.loads(line)\n    n += 1\n"


def item3():
    reps = 2 if B.QUICK else 5
    zst = os.path.join(B.WORK, "synthetic-1h-10ms.trace.jsonl.zst")
    log("3: writing a 360,000-sample synthetic trace")
    plain = synth_trace(zst)
    nlines = sum(1 for _ in open(plain, "rb"))
    an = json.loads(subprocess.run([SB, "analyze", "--json", zst], check=True,
                                   capture_output=True, text=True).stdout)["runs"][0]
    assert an["samples"] == 360000, an["samples"]
    assert len(an["stages"]) >= 9, [s["name"] for s in an["stages"]]
    subprocess.run(["cat", plain, zst], check=True, stdout=subprocess.DEVNULL)  # warm the page cache
    cases = [
        ("stagebench analyze (.zst)", [SB, "analyze", zst]),
        ("stagebench analyze --json (.zst)", [SB, "analyze", "--json", zst]),
        ("stagebench analyze (plain .jsonl)", [SB, "analyze", plain]),
        ("zstd -dc > /dev/null", ["zstd", "-dcq", zst]),
        ("python3 json.loads loop (plain .jsonl)", [PY, "-c", PYLOOP, plain]),
    ]
    times = {}
    for name, argv in cases:
        log("3: %s, best of %d" % (name, reps))
        times[name] = best_of(argv, reps)
    rows = ["| %s | `%s` | %.3f s | %.2f M lines/s |" % (n, shell(a) if n[0] != "p" else
            "python3 -c '<json.loads loop>' " + rel(plain), times[n], nlines / times[n] / 1e6)
            for n, a in cases]
    a = times["stagebench analyze (.zst)"]
    z = times["zstd -dc > /dev/null"]
    p = times["python3 json.loads loop (plain .jsonl)"]
    body = ["The trace: %d lines (360,000 samples at 10 ms = one hour, 9 stages with stage, "
            "release, load and peak events), %.1f MiB as zstd (level 3), %.1f MiB plain; written "
            "by `bench/items_traces.py` (`synth_trace`). Wall time, best of %d, files in the page cache. "
            "The Python loop is `for line in open(f, 'rb'): json.loads(line)`." % (
                nlines, os.path.getsize(zst) / MIB, os.path.getsize(plain) / MIB, reps), "",
            "| what | command | best | throughput |", "|---|---|---|---|"] + rows
    body += ["",
             "- analyze / plain decompression: %.1f× the time of `zstd -dc`" % (a / z),
             "- Python `json.loads` loop / analyze: %.1f× (analyze is %.1f× faster)" % (p / a, p / a),
             "", "Target: analyzer under 0.5 s for 360,000 samples, at least 10× faster than "
             "the Python loop and within 3× of `zstd -dc`: " +
             verdict(a < 0.5 and p / a >= 10 and a / z <= 3,
                     "%.3f s, %.1f× the Python loop's speed, %.1f× zstd's time" % (a, p / a, a / z)) +
             " (%.3f s, %.1f× faster than Python, %.1f× zstd's time)." % (a, p / a, a / z)]
    body += [""] + long_trace(reps) + [""] + hash_rate()
    section(3, "Analyzer throughput", "\n".join(body))


RUN_RSS = """import os, subprocess, sys, time
t = time.monotonic()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
print(time.monotonic() - t, ru.ru_maxrss * 1024, status)
"""


def run_rss(argv):
    """Wall seconds and peak resident memory (bytes) of one run. Started from a small
    process: on Linux a child's peak memory counts from its parent's at the fork, and
    this one holds the synthetic traces it wrote (an upper bound where GNU time is missing)."""
    if sys.platform.startswith("linux") and os.access("/usr/bin/time", os.X_OK):
        # GNU time: a process of 2 MB, so the figure is the command's own
        r = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + argv, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall, kib = r.stderr.strip().splitlines()[-1].split()
        return float(wall), int(kib) * 1024
    out = subprocess.run([PY, "-c", RUN_RSS] + argv, check=True, capture_output=True,
                         text=True).stdout.split()
    if int(out[2]):
        raise RuntimeError("%s failed (%s)" % (shell(argv), out[2]))
    return float(out[0]), int(out[1])


def long_trace(reps):
    """Ten hours at 10 ms (3.6 million samples): analyze's memory and time against zstd -dc."""
    zst = os.path.join(B.WORK, "synthetic-10h-10ms.trace.jsonl.zst")
    log("3: writing a 3,600,000-sample synthetic trace")
    # in a process of its own: a child's peak memory on Linux starts from its parent's
    # (fork, exec), and building 3.6M lines takes the generator's over 1.5 GB
    subprocess.run([PY, "-c", "import os, sys; sys.path.insert(0, %r); import items_traces; "
                    "os.unlink(items_traces.synth_trace(%r, n=3600000))" % (os.path.join(ROOT, "bench"), zst)],
                   check=True)  # the plain text is 0.5 GB: only the .zst is kept
    subprocess.run(["cat", zst], check=True, stdout=subprocess.DEVNULL)
    best = {}
    for name, argv in (("analyze", [SB, "analyze", zst]), ("zstd", ["zstd", "-dcq", zst])):
        log("3: %s on 3.6M samples, best of %d" % (name, reps))
        runs = [run_rss(argv) for _ in range(reps)]
        best[name] = (min(r[0] for r in runs), max(r[1] for r in runs))
    a, z = best["analyze"], best["zstd"]
    ok = a[1] < 50 * MIB and a[0] <= 1.3 * z[0]
    return ["Ten hours at 10 ms, 3,600,000 samples (%.1f MiB as zstd), same generator: "
            "`stagebench analyze` %.3f s and %.1f MiB peak resident memory, `zstd -dcq` %.3f s "
            "and %.1f MiB (best time and largest memory of %d runs)." % (
                os.path.getsize(zst) / MIB, a[0], a[1] / MIB, z[0], z[1] / MIB, reps), "",
            "Target (analysis in memory bounded by stages and runs, not samples): under 50 MB and "
            "within 1.3× of `zstd -dc`: " + verdict(ok, "%.1f MiB, %.1f× zstd's time" % (
                a[1] / MIB, a[0] / z[0])) + " (%.1f MiB, %.1f× zstd's time)." % (a[1] / MIB, a[0] / z[0])]


def hash_rate():
    """SHA-256 of latents (platform/sha256.h, through the platform's library): GiB/s over 1 GiB."""
    build = os.path.dirname(os.path.realpath(SB))
    exe = os.path.join(build, "hash_rate")
    osdir = "darwin" if sys.platform == "darwin" else "linux"
    argv = ["cc", "-D_GNU_SOURCE", "-I" + ROOT, "-O2", "-o", exe, os.path.join(ROOT, "bench/hash_rate.c"),
            os.path.join(build, "platform/sha256.o"), os.path.join(build, "platform", osdir, "sha256.o"),
            os.path.join(build, "common/util.o")] + (["-ldl"] if osdir == "linux" else [])
    subprocess.run(argv, check=True)
    log("3: sha256 of 1 GiB, best of 3")
    out = subprocess.run([exe, "1024"], check=True, capture_output=True, text=True).stdout.split()
    secs, rate, lib = float(out[2]), float(out[4]), " ".join(out[6:])
    return ["Latent fingerprints: SHA-256 of 1 GiB in memory through `sha256_hex()` "
            "(`bench/hash_rate.c`, best of 3): **%.2f s, %.2f GiB/s** with %s." % (secs, rate, lib)]


# ---- 4. guard reaction ----

def item4():
    trials = 6 if B.QUICK else 20
    thr = GIB
    reacts, rcs, argv0 = [], [], None
    for i in range(trials):
        logf = os.path.join(B.WORK, "guard-%d.log" % i)
        if os.path.exists(logf):
            os.unlink(logf)
        argv = [SB, "guard", "-q", "--max-footprint", "1G", "--",
                EATMEM, "log=" + logf, "ramp=1536M/1G", "sleep=5"]
        argv0 = argv0 or argv
        r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        rcs.append(r.returncode)
        ev = read_log(logf)
        cross = [t for t, w, b in ev if w == "ramp" and b >= thr]
        term = [t for t, w, _ in ev if w == "sigterm"]
        if cross and term:
            reacts.append(term[0] - cross[0])
            log("4: trial %d: %.0f ms (exit %d)" % (i + 1, reacts[-1] * 1e3, r.returncode))
        else:
            log("4: trial %d: no crossing/SIGTERM in the log (exit %d) %s" % (i + 1, r.returncode, r.stderr[-300:]))
    body = ["Command (×%d):" % trials, "", "    " + shell(argv0), "",
            "The helper ramps to 1.5 GiB at 1 GiB/s in 16 MiB steps and logs the CLOCK_MONOTONIC "
            "instant each step is touched; the crossing instant is the end of the step that "
            "brings its allocation to 1 GiB (its footprint is then over the cap by its few "
            "hundred KiB of baseline). Its SIGTERM handler logs the instant the signal arrives. "
            "Reaction = SIGTERM receipt − crossing. The guard polls the footprint every "
            "`--poll` (default 250 ms).", ""]
    if reacts:
        med, worst = statistics.median(reacts), max(reacts)
        body += ["| trials with both instants | median | mean | best | worst | guard exits |",
                 "|---|---|---|---|---|---|",
                 "| %d/%d | %.0f ms | %.0f ms | %.0f ms | %.0f ms | %s |" % (
                     len(reacts), trials, med * 1e3, statistics.mean(reacts) * 1e3,
                     min(reacts) * 1e3, worst * 1e3,
                     ", ".join("%d×%d" % (rcs.count(c), c) for c in sorted(set(rcs))))]
        ok = med <= 0.3 and len(reacts) == trials
        gap = "median %.0f ms" % (med * 1e3) if med > 0.3 else "%d trials not stopped" % (trials - len(reacts))
        body += ["", "Target: guard median ≤ 0.3 s: " + verdict(ok, gap) +
                 " (median %.0f ms, worst %.0f ms)." % (med * 1e3, worst * 1e3)]
    else:
        body += ["No trial logged both instants: **not met** (the guard never stopped the helper)."]
    section(4, "Guard reaction", "\n".join(body))
