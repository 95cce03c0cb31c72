#!/usr/bin/python3
"""peers.py -- stagebench beside the other memory tools, on the same workloads, in one run.

Usage: SB_BIN=... bench/peers.py [OUT.md]   (after scripts/peers-venv.sh; not in `make test`)
Workloads: bench/peers/forked.py (1 GiB parent, 4 forked workers: about 1 GiB in use),
bench/peers/spike.py (100 MiB, a 200 MiB spike held 50 ms: true peak about 300 MiB), and the
demo pipeline (eager, --size default). Tools: none (the baseline), stagebench record,
memray run --follow-fork, scalene run, mprof run --include-children, /usr/bin/time -v. For each:
wall and CPU time of the whole tree (wait4 of the tool's process, children included), the
peak the tool reports, whether it saw the spike. Prints a Markdown table (and writes OUT.md).
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SB = os.environ.get("SB_BIN") or os.path.join(ROOT, "stagebench")
VENV = subprocess.run([os.path.join(ROOT, "scripts", "peers-venv.sh"), "--path"],
                      capture_output=True, text=True).stdout.strip()
VPY = os.path.join(VENV, "bin", "python")
PY = "/usr/bin/python3"
MIB = 1 << 20


def run(argv, env=None, cwd=None):
    """wall s, CPU s (user+sys of the tree), exit code"""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    return time.monotonic() - t0, ru.ru_utime + ru.ru_stime, p.returncode, err


def stagebench(cmd, work):
    out = os.path.join(work, "sb.trace.jsonl.zst")
    w, c, rc, _ = run([SB, "record", "-q", "--interval", "100ms", "-o", out, "--"] + cmd)
    txt = subprocess.run(["zstdcat", out], capture_output=True, text=True).stdout
    recs = [json.loads(l) for l in txt.splitlines() if l.strip()]
    fp = max((r.get("footprint", 0) for r in recs if r["type"] == "sample"), default=0)
    pk = max((r.get("bytes") or 0 for r in recs if r["type"] == "event" and r.get("kind") == "peak"),
             default=0)
    return w, c, rc, "%.0f MiB (samples), %.0f MiB (kernel peaks)" % (fp / MIB, pk / MIB), max(fp, pk)


def memray(cmd, work):
    out = os.path.join(work, "m.bin")
    w, c, rc, _ = run([VPY, "-m", "memray", "run", "--follow-fork", "-q", "-o", out] + cmd[1:])
    peaks = []
    for f in sorted(glob.glob(out + "*")):
        js = os.path.join(work, os.path.basename(f) + ".json")
        subprocess.run([VPY, "-m", "memray", "stats", "--json", "-o", js, "-f", f],
                       capture_output=True)
        try:
            with open(js) as fh:
                peaks.append(json.load(fh)["metadata"]["peak_memory"])
        except (OSError, KeyError, ValueError):
            pass
    if not peaks:
        return w, c, rc, "no report", 0
    return w, c, rc, "%.0f MiB (largest of %d process reports, heap only)" % (
        max(peaks) / MIB, len(peaks)), max(peaks)


def scalene(cmd, work):
    out = os.path.join(work, "s.json")
    w, c, rc, _ = run([VPY, "-m", "scalene", "run", "-o", out, cmd[1], "---"] + cmd[2:])
    try:
        with open(out) as fh:
            mb = json.load(fh).get("max_footprint_mb", 0)
    except (OSError, ValueError):
        return w, c, rc, "no report", 0
    return w, c, rc, "%.0f MiB (max_footprint_mb)" % mb, mb * MIB


def mprof(cmd, work):
    out = os.path.join(work, "p.dat")
    w, c, rc, _ = run([VPY, "-m", "mprof", "run", "--include-children", "-T", "0.1", "-o", out]
                      + cmd[1:])
    best = 0.0
    try:
        with open(out) as fh:
            for l in fh:
                if l.startswith("MEM "):
                    best = max(best, float(l.split()[1]))
    except OSError:
        return w, c, rc, "no report", 0
    return w, c, rc, "%.0f MiB (RSS summed over the tree, 0.1 s)" % best, best * MIB


def gnutime(cmd, work):
    w, c, rc, err = run(["/usr/bin/time", "-v"] + cmd)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    kb = int(m.group(1)) if m else 0
    return w, c, rc, "%.0f MiB (largest single process's max RSS)" % (kb / 1024), kb * 1024


TOOLS = [("stagebench record", stagebench), ("memray --follow-fork", memray), ("scalene", scalene),
         ("mprof --include-children", mprof), ("/usr/bin/time -v", gnutime)]


def main():
    work = tempfile.mkdtemp(prefix="peers-")
    cache = os.path.join(work, "cache")
    demo = [PY, os.path.join(ROOT, "demo", "pipeline.py"), "--seed", "7", "--size", "default",
            "--out", os.path.join(work, "demo-out"), "--cache", cache, "--steps", "4"]
    subprocess.run([PY, os.path.join(ROOT, "demo", "pipeline.py"), "--prepare", "--size", "default",
                    "--cache", cache], check=True, capture_output=True)
    loads = [("forked workers (truth about 1 GiB)", [PY, os.path.join(ROOT, "bench", "peers", "forked.py")], None),
             ("50 ms spike (truth about 300 MiB)", [PY, os.path.join(ROOT, "bench", "peers", "spike.py")], 300),
             ("demo, eager", demo, None)]
    rows = ["| workload | tool | wall s | CPU s | wall × | CPU × | peak reported | spike seen |",
            "|---|---|---|---|---|---|---|---|"]
    for name, cmd, spike in loads:
        run(cmd)  # once first: files read, caches filled, as for every tool after it
        bw, bc, brc, _ = run(cmd)
        rows.append("| %s | none | %.2f | %.2f | 1.00 | 1.00 | | |" % (name, bw, bc))
        for k, (tool, fn) in enumerate(TOOLS):
            sub = tempfile.mkdtemp(prefix="t%d-" % k, dir=work)
            w, c, rc, said, peak = fn(cmd, sub)
            seen = "" if spike is None else ("yes" if peak >= 250 * MIB else "no")
            rows.append("| %s | %s | %.2f | %.2f | %.2f | %.2f | %s%s | %s |" % (
                name, tool, w, c, w / bw, c / bc if bc else 0, said,
                "" if rc == 0 else " (exit %d)" % rc, seen))
            print(rows[-1], flush=True)
    text = "\n".join(rows) + "\n"
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
