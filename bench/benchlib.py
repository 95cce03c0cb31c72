"""benchlib.py -- what the bench items share: where things are, the scratch directory, running
and timing programs, reading traces and logs, writing a section (bench/bench.py runs the items)."""
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
PY = "/usr/bin/python3"
MIB = 1 << 20
GIB = 1 << 30

SB = os.environ.get("SB_BIN") or os.path.join(ROOT, "stagebench")
HELPERS = os.environ.get("SB_HELPERS") or os.path.join(ROOT, "build", "helpers")
EATMEM = os.path.join(HELPERS, "eatmem")
MPROF = shutil.which("python3-mprof") or shutil.which("mprof")
QUICK = False
WORK = None          # per-run scratch directory
BASE = None          # scratch root; demo checkpoints kept there between runs


def log(msg):
    sys.stderr.write("bench: %s\n" % msg)
    sys.stderr.flush()


def rel(path):
    """A path as the reader should type it: relative to the repository root."""
    for base, name in ((WORK, "$WORK"), (BASE, "$BENCH_WORK"), (HELPERS, "$SB_HELPERS"), (ROOT, ".")):
        if base and (path == base or path.startswith(base + "/")):
            return name + path[len(base):]
    return path


def shell(argv):
    out = []
    for a in argv:
        if a == SB:
            a = "stagebench"
        elif a == PY:
            a = "python3"
        elif a.startswith("/"):
            a = rel(a)
        elif "=/" in a:
            k, v = a.split("=", 1)
            a = k + "=" + rel(v)
        out.append(a if a and all(c.isalnum() or c in "-_=./:,%$+" for c in a) else "'%s'" % a)
    return " ".join(out).replace(MPROF or "\0", "python3-mprof")


# ---- CPU time of one process (not its children) ----

def cpu_ns(pid):
    """utime+stime of PID's threads in ns: sum_exec_runtime from
    /proc/PID/task/*/schedstat (ns resolution); stat fields 14+15 are the
    same time in 10 ms ticks, returned too as a cross-check."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # fields 14 and 15 of stat(5)
    return total, ticks * 1e9 / os.sysconf("SC_CLK_TCK")


def read_trace(path):
    """Records of a trace (.jsonl.zst through zstd -dc, or plain)."""
    if path.endswith(".zst"):
        text = subprocess.run(["zstd", "-dcq", path], check=True, capture_output=True).stdout
    else:
        with open(path, "rb") as f:
            text = f.read()
    recs = []
    for line in text.splitlines():
        if line.strip():
            try:
                recs.append(json.loads(line))
            except ValueError:
                pass
    return recs


def read_log(path):
    """eatmem log=FILE lines: [(mono, what, bytes)]."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 3:
                out.append((float(p[0]), p[1], int(p[2])))
    return out


def read_mprof(path):
    """mprof .dat MEM lines: [(epoch seconds, bytes)]."""
    out = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[0] == "MEM":
                out.append((float(p[2]), float(p[1]) * MIB))
    return out


def wait_file(path, timeout):
    end = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > end:
            raise RuntimeError("timed out waiting for " + path)
        time.sleep(0.005)


def us(x):
    return "%.1f" % (x / 1e3)


def mib(x):
    return "%.1f" % (x / MIB)


def verdict(ok, gap):
    return "**met**" if ok else "**not met**: " + gap


def section(n, title, body):
    head = "## %d. %s\n\n_Run %s on `%s`, stagebench %s%s._\n\n" % (
        n, title, time.strftime("%Y-%m-%d %H:%M %Z"), platform.node() or "?",
        commit(), " (quick: fewer repetitions)" if QUICK else "")
    path = os.path.join(RESULTS, "item-%d.md" % n)
    with open(path, "w") as f:
        f.write(head + body.rstrip() + "\n")
    log("wrote " + rel(path))


_commit = None


def commit():
    global _commit
    if _commit is None:
        try:
            c = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                               capture_output=True, text=True).stdout.strip()
            d = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
            _commit = (c or "unknown") + ("-dirty" if d else "")
        except OSError:
            _commit = "unknown"
    return _commit


def machine_header():
    u = os.uname()
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = swap = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
            elif line.startswith("SwapTotal:"):
                swap = int(line.split()[1]) * 1024
    zv = subprocess.run(["zstd", "--version"], capture_output=True, text=True).stdout.strip().strip("* ")
    mv = subprocess.run([PY, "-c", "import memory_profiler as m; print(m.__version__)"],
                        capture_output=True, text=True).stdout.strip() or "?"
    tv = subprocess.run([PY, "-c", "import torch; print(torch.__version__)"],
                        capture_output=True, text=True).stdout.strip() or "?"
    return ["# stagebench benchmarks", "",
            "Generated by `make bench` (`bench/run.sh` → `bench/bench.py`); each section says when "
            "it was last measured (`bench/run.sh N` re-measures section N only). Comparisons are "
            "ratios measured side by side in one run: this machine is shared and noisy, absolute "
            "figures move between runs. In the commands, `stagebench` is the binary `make bench` "
            "built, `$SB_HELPERS/eatmem` the test helper (tests/helpers/eatmem.c), `$BENCH_WORK` "
            "the scratch directory (default /tmp/stagebench-bench; demo checkpoints are kept "
            "there) and `$WORK` one run's directory in it.", "",
            "| | |", "|---|---|",
            "| machine | `%s %s %s` |" % (u.sysname, u.release, u.machine),
            "| CPU | %s, %d cores |" % (cpu, os.cpu_count() or 0),
            "| memory | %.1f GiB (MemTotal), swap %.1f GiB |" % (mem / GIB, swap / GIB),
            "| assembled | %s |" % time.strftime("%Y-%m-%d %H:%M %Z"),
            "| stagebench commit | %s |" % commit(),
            "| software | %s; memory_profiler (mprof) %s; Python %s; torch %s |" % (
                zv.split(",")[0], mv, platform.python_version(), tv), ""]
