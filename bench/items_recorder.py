"""items_recorder.py -- BENCHMARKS.md items 1 (recorder cost per sample) and 2 (peak capture)."""
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


# ---- 1. recorder cost per sample ----

def workload(nprocs, flag, staged=False, mem="40M"):
    """eatmem holding memory until FLAG exists; nprocs > 1: a chain of forks,
    every process holding its own allocation (each parent waits for its child);
    staged: a stage event first, so a stage window is open the whole run."""
    steps = (["stage=run"] if staged else []) + ["alloc=" + mem]
    for _ in range(nprocs - 1):
        steps += ["fork", "alloc=4M"]
    return [EATMEM] + steps + ["wait=" + flag]


def cost_run(tool, interval, nprocs, dur, tag, staged=False):
    flag = os.path.join(B.WORK, "go-" + tag)
    if os.path.exists(flag):
        os.unlink(flag)
    if tool == "stagebench":
        out = os.path.join(B.WORK, "cost-%s.trace.jsonl.zst" % tag)
        argv = [SB, "record", "-q", "--interval", "%gms" % (interval * 1e3), "-o", out, "--"]
    else:
        out = os.path.join(B.WORK, "cost-%s.dat" % tag)
        argv = [MPROF, "run", "--include-children", "-T", "%g" % interval, "-o", out]
    argv += workload(nprocs, flag, staged)
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t0m, t0w = time.monotonic(), time.time()
    time.sleep(2.0)                     # past start-up: the steady-state window opens
    a_ns, _ = cpu_ns(p.pid)
    am, aw = time.monotonic(), time.time()
    time.sleep(dur - 2.0)
    b_ns, b_ticks = cpu_ns(p.pid)        # just before the workload ends
    bm, bw = time.monotonic(), time.time()
    open(flag, "w").close()
    _, err = p.communicate(timeout=60)
    if p.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (shell(argv), p.returncode, err.decode()[-500:]))
    if tool == "stagebench":
        ts = [r["t"] for r in read_trace(out) if r.get("type") == "sample"]
        win = [t for t in ts if am - t0m <= t <= bm - t0m]
    else:
        ts = [t for t, _ in read_mprof(out)]
        win = [t for t in ts if aw <= t <= bw]
    return {"argv": argv, "samples": len(ts), "cpu": b_ns, "ticks": b_ticks,
            "win_samples": len(win), "win_cpu": b_ns - a_ns}


WAKE = "import time\nn = int(1 / %g * 3)\nt = time.process_time()\nfor _ in range(n):\n    time.sleep(%g)\nprint((time.process_time() - t) / n * 1e9)\n"


def wake_floor(interval):
    """CPU ns of one sleep+wakeup of an idle process (Python's time.sleep) on this machine."""
    r = subprocess.run([PY, "-c", WAKE % (interval, interval)], check=True, capture_output=True, text=True)
    return float(r.stdout)


def c_floor(interval, nprocs):
    """CPU ns per wakeup of bench/wake_floor.c: sleep, then one pread of each of nprocs
    kept /proc/PID/statm (idle children), nothing else: the least a sample of a tree
    that reads each of its processes costs on this machine."""
    exe = os.path.join(os.path.dirname(os.path.realpath(SB)), "wake_floor")
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(ROOT, "bench/wake_floor.c")], check=True)
    count = max(8, int(6 / interval))
    r = subprocess.run([exe, "%g" % interval, str(count), str(nprocs)], check=True,
                       capture_output=True, text=True)
    return float(r.stdout) * 1e3


def item1_targets(worst, worst_open, ok_ratio, at20, cfloor, mprof20):
    """Item 1's closing lines: what a sample reads, and its two targets judged."""
    body = []
    ok_cost = max(worst, worst_open) <= 25e3
    gaps = []
    if not ok_cost:
        gaps.append("stagebench costs up to %s µs per sample without a stage and %s µs with a "
                    "stage open (target 25)" % (us(worst), us(worst_open)))
    if not ok_ratio:
        gaps.append("some configuration is less than 8× cheaper than mprof (table above)")
    body += ["", "What a sample reads: /proc/loadavg, and per process one pread of its kept "
             "/proc/PID/statm; /proc/PID/status (VmHWM with the footprint) only when statm moved "
             "or a reading answered 30 samples and is a second old; the children files and the "
             "thread counts (fstat of /proc/PID/task) only while pids are being handed out "
             "anywhere on the machine (the last pid in /proc/loadavg moved within a second); "
             "smaps_rollup of sharing processes (every process of these chains shares what its "
             "parents allocated) when one appears, and again within 1/20 of a core once one "
             "faulted or a new child of a sharer lowered the others' shares, the look for "
             "faults (schedstat, stat) waiting as long after one that found none. "
             "A stage window costs nothing extra: the window's peak is read from status at its "
             "boundaries, and a process that exits inside a window gives its peak through "
             "wait4's ru_maxrss. The floor line above is what this machine charges for a wakeup "
             "alone: the 25 µs target is below it here."]
    body += ["", "Target (1 and 20 processes): ≤ 25 µs CPU per sample and ≥ 8× cheaper than mprof: " +
             (verdict(True, "") + " (worst: %s µs per sample)." % us(max(worst, worst_open))
              if ok_cost and ok_ratio else verdict(False, "; ".join(gaps)) + ".")]
    low = [(iv, lab, r) for iv, lab, r in at20 if r < 20]
    below = [iv for iv in (0.5, 0.01) if cfloor[(iv, 20)] > mprof20[iv] / 20]
    body += ["", "Target (process trees): ≥ 20× less recorder CPU per sample than mprof at 20 "
             "processes, 0.5 s and 10 ms (steady): " +
             (verdict(True, "") + " (lowest %.1f×)." % min(r for _, _, r in at20) if not low else
              verdict(False, "; ".join("%s at %g s: %.1f×" % (lab, iv, r) for iv, lab, r in low))
              + "." + ("" if not below else " At %s the target is below the floor above: no "
                       "recorder that reads each process could meet it on this machine." %
                       " and ".join("%g s" % iv for iv in below)))]
    return body


def item1():
    dur = 6.0 if B.QUICK else 12.0
    rows, ratios, cmds, worst, worst_open = [], [], [], 0.0, 0.0
    ok_ratio = True
    at20 = []  # (interval, mprof over stagebench, steady) at 20 processes: the 20x target
    mprof_steady20 = []  # (interval, mprof's steady ns per sample) at 20 processes
    tools = (("stagebench", False, "stagebench"), ("stagebench", True, "stagebench, stage open"),
             ("mprof", False, "mprof"))
    for interval in (0.5, 0.01):
        for nprocs in (1, 20, 100):
            res = {}
            for tool, staged, label in tools:
                tag = "%s%s-%g-%d" % (tool, "-open" if staged else "", interval, nprocs)
                log("1: %s, interval %gs, %d process(es), %gs" % (label, interval, nprocs, dur))
                r = cost_run(tool, interval, nprocs, dur, tag, staged)
                res[label] = r
                per = r["cpu"] / max(r["samples"], 1)
                steady = r["win_cpu"] / max(r["win_samples"], 1)
                rows.append("| %s | %g s | %d | %d | %.3f | %.2f | %s | %s |" % (
                    label, interval, nprocs, r["samples"], r["cpu"] / 1e9, r["ticks"] / 1e9,
                    us(per), us(steady)))
                if label == "stagebench" and nprocs <= 20:  # the 25 µs / 8× target's scope
                    worst = max(worst, per, steady)
                elif staged and nprocs <= 20:
                    worst_open = max(worst_open, per, steady)
                if interval == 0.5 and nprocs == 1 and label != "stagebench, stage open":
                    cmds.append(shell(r["argv"]))
            mp = res["mprof"]
            mp_all = mp["cpu"] / mp["samples"]
            mp_st = mp["win_cpu"] / max(mp["win_samples"], 1)
            if nprocs == 20:
                mprof_steady20.append((interval, mp_st))
            cells = []
            for label in ("stagebench", "stagebench, stage open"):
                sb = res[label]
                r_all = mp_all / (sb["cpu"] / sb["samples"])
                r_st = mp_st / (sb["win_cpu"] / max(sb["win_samples"], 1))
                ok_ratio = ok_ratio and (nprocs > 20 or min(r_all, r_st) >= 8)
                if nprocs == 20:
                    at20.append((interval, label, r_st))
                cells += ["%.1f×" % r_all, "%.1f×" % r_st]
            ratios.append("| %g s | %d | %s |" % (interval, nprocs, " | ".join(cells)))
    floor = [(iv, wake_floor(iv)) for iv in (0.5, 0.01)]
    log("1: the least a sample can cost (bench/wake_floor.c), best of 3")
    cfloor = {(iv, n): min(c_floor(iv, n) for _ in range(3)) for iv in (0.5, 0.01) for n in (0, 20)}
    mprof20 = {iv: m for iv, m in mprof_steady20}
    body = ["Commands (shown for 0.5 s and 1 process; \"stage open\" puts `stage=run` first, so "
            "a stage window is open the whole run as in a real pipeline; the 20- and 100-process "
            "workloads insert `fork alloc=4M` 19 or 99 times before `wait=`, a chain of processes "
            "each holding its own memory; 10 ms changes `--interval`/`-T`):", ""]
    body += ["    " + c for c in cmds]
    body += ["",
             "The workload holds its memory until the bench creates the flag file, %g s after the "
             "start. CPU = the recorder process's own user+system time (its threads' "
             "`sum_exec_runtime` from `/proc/PID/task/*/schedstat`, ns resolution; the `stat` "
             "fields 14+15 column is the same time in 10 ms ticks), read just before the workload "
             "ends; children (the workload) are not counted. For mprof the recorder is its own "
             "python3 process. Samples = `sample` records in the trace / `MEM` lines in the .dat. "
             "\"All\" divides all CPU by all samples (start-up included: mprof's Python start "
             "costs ~0.1-0.2 s); \"steady\" counts only CPU and samples from 2 s after the start to "
             "the end." % dur, "",
             "| recorder | interval | processes | samples | CPU s | stat 14+15 s | µs/sample (all) | µs/sample (steady) |",
             "|---|---|---|---|---|---|---|---|"] + rows
    body += ["", "The floor on this machine: an idle process that only sleeps and wakes up "
             "(`time.sleep` in a loop, %s) costs %s of CPU per wakeup, before reading "
             "anything." % (", ".join("%g s" % iv for iv, _ in floor),
                            " and ".join("%s µs" % us(f) for _, f in floor))]
    body += ["", "The least a sample of 20 processes can cost here: a C process that sleeps, wakes "
             "and reads the kept /proc/PID/statm of 20 idle children, one pread each, and does "
             "nothing else (`bench/wake_floor.c`, best of 3) costs %s; waking alone costs %s. "
             "A twentieth of mprof's steady cost at 20 processes is %s." % (
                 " and ".join("%s µs at %g s" % (us(cfloor[(iv, 20)]), iv) for iv in (0.5, 0.01)),
                 " and ".join("%s µs at %g s" % (us(cfloor[(iv, 0)]), iv) for iv in (0.5, 0.01)),
                 " and ".join("%s µs at %g s" % (us(mprof20[iv] / 20), iv) for iv in (0.5, 0.01)))]
    body += ["", "mprof's CPU per sample over stagebench's (same configuration, run back to back):", "",
             "| interval | processes | no stage: all | no stage: steady | stage open: all | stage open: steady |",
             "|---|---|---|---|---|---|"] + ratios
    body += item1_targets(worst, worst_open, ok_ratio, at20, cfloor, mprof20)
    section(1, "Recorder cost per sample", "\n".join(body))


# ---- 2. peak capture ----

def spike_steps(hold_ms, n):
    """Each spike alone in a stage; the sleep before it is drawn from 400-900 ms
    (seeded) so the spikes fall at every phase of the 0.5 s sample clock."""
    import random
    rnd = random.Random(hold_ms)
    steps = ["alloc=50M"]
    for i in range(n):
        steps += ["stage=spike%d" % (i + 1), "sleep=%dms" % rnd.randint(400, 900),
                  "spike=200M/%dms" % hold_ms, "sleep=600ms"]
    return steps + ["stage=done", "sleep=100ms"]


def spikes_of(logf):
    ev = read_log(logf)
    held = [t for t, w, _ in ev if w == "spike-held"]
    freed = [t for t, w, _ in ev if w == "spike-freed"]
    alloc = [t for t, w, _ in ev if w == "alloc"]
    return list(zip(held, freed)), (alloc[0] if alloc else None)


def touch_of(logf):
    ev = read_log(logf)
    return [b[0] - a[0] for a, b in zip(ev, ev[1:]) if a[1] == "spike-touch" and b[1] == "spike-held"]


def item2():
    n = 4 if B.QUICK else 10
    rows, cmds = [], []
    touch = []
    kernel_exact = True
    sampled_caught = mprof_missed = 0
    for hold in (20, 50, 200):
        # stagebench at its default interval (0.5 s)
        logf = os.path.join(B.WORK, "spike-sb-%d.log" % hold)
        trace = os.path.join(B.WORK, "spike-%d.trace.jsonl.zst" % hold)
        for f in (logf,):
            if os.path.exists(f):
                os.unlink(f)
        argv = [SB, "record", "-q", "-o", trace, "--", EATMEM, "log=" + logf] + spike_steps(hold, n)
        log("2: stagebench, %d spikes held %d ms" % (n, hold))
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        touch += touch_of(logf)
        an = json.loads(subprocess.run([SB, "analyze", "--json", trace], check=True,
                                       capture_output=True, text=True).stdout)["runs"][0]
        recs = read_trace(trace)
        first_stage = min(r["t"] for r in recs if r.get("kind") == "stage" and r.get("stage") == "spike1")
        samp = [r for r in recs if r.get("type") == "sample" and r["t"] >= first_stage]
        base_fp = min(r["footprint"] for r in samp)
        base_rss = min(r["rss"] for r in samp)
        truth_fp, truth_rss = base_fp + 200 * MIB, base_rss + 200 * MIB
        s_frac, k_err = [], []
        for st in an["stages"]:
            if not st["name"].startswith("spike"):
                continue
            s_frac.append((st["peak_footprint_bytes"] - base_fp) / (200 * MIB))
            kp = [k for k in st["kernel_peaks"] if k["metric"] == "rss"]
            k_err.append(kp[0]["bytes"] - truth_rss if kp else None)
        caught = sum(1 for f in s_frac if f >= 0.9)
        sampled_caught += caught
        kerr_abs = [abs(e) for e in k_err if e is not None]
        kmax = max(kerr_abs) if kerr_abs else None
        if kmax is None or len(kerr_abs) < len(k_err) or kmax > MIB:
            kernel_exact = False
        rows.append("| %d ms | stagebench sampled (0.5 s) | %d/%d | %.0f%% | %s MiB |" % (
            hold, caught, len(s_frac), 100 * statistics.mean(s_frac), mib(truth_fp)))
        rows.append("| %d ms | stagebench kernel `peak` | %d/%d | %s | %s MiB (rss) |" % (
            hold, len(kerr_abs), len(k_err),
            "max error %.0f KiB" % (kmax / 1024) if kmax is not None else "none",
            mib(truth_rss)))
        if hold == 20:
            cmds.append(shell(argv))
        # mprof at 0.1 s on the same workload
        logf = os.path.join(B.WORK, "spike-mp-%d.log" % hold)
        dat = os.path.join(B.WORK, "spike-%d.dat" % hold)
        if os.path.exists(logf):
            os.unlink(logf)
        argv = [MPROF, "run", "--include-children", "-T", "0.1", "-o", dat,
                EATMEM, "log=" + logf] + spike_steps(hold, n)
        log("2: mprof 0.1 s, %d spikes held %d ms" % (n, hold))
        off = time.time() - time.monotonic()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        mem = read_mprof(dat)
        spikes, alloc_t = spikes_of(logf)
        touch += touch_of(logf)
        after = [b for t, b in mem if t >= alloc_t + off + 0.05]
        base = min(after)
        m_frac = []
        for h, fr in spikes:
            w = [b for t, b in mem if h + off - 0.5 <= t <= fr + off + 0.5]
            m_frac.append(((max(w) if w else base) - base) / (200 * MIB))
        mc = sum(1 for f in m_frac if f >= 0.9)
        mprof_missed += len(m_frac) - mc
        rows.append("| %d ms | mprof 0.1 s | %d/%d | %.0f%% | %s MiB (rss) |" % (
            hold, mc, len(m_frac), 100 * statistics.mean(m_frac), mib(base + 200 * MIB)))
        if hold == 20:
            cmds.append(shell(argv))
    body = ["Commands (20 ms shown; 50 and 200 ms change the `spike=` steps):", ""]
    body += ["    " + c for c in cmds]
    body += ["",
             "Each run holds 50 MiB and makes %d spikes of 200 MiB, each alone in its own stage "
             "(0.4-0.9 s before it, 0.6 s after it). Touching the 200 MiB takes %.0f ms "
             "(median, from the helper's log) before the hold begins. Truth = the baseline (lowest value of the same metric "
             "after the 50 MiB are held) + 200 MiB. \"Caught\" = a stage's (or, for mprof, the "
             "spike's ±0.5 s) peak shows at least 90%% of the spike; \"seen\" = the mean share of "
             "the 200 MiB the peak shows. The kernel `peak` event measures RSS (VmHWM, reset "
             "per stage through clear_refs), the sampled peak the footprint (RssAnon+RssShmem), "
             "mprof RSS; each against its own truth." % (n, 1e3 * statistics.median(touch) if touch else 0), "",
             "| spike held | capture | caught | seen / error | truth |",
             "|---|---|---|---|---|"] + rows
    ok = kernel_exact
    gap = "" if ok else "a kernel peak is missing or off by more than 1 MiB (table above)"
    body += ["",
             "Target: spike peaks exact (kernel) where mprof misses them: " + verdict(ok, gap) +
             " (mprof missed %d of %d spikes; stagebench's 0.5 s samples caught %d of %d)." % (
                 mprof_missed, 3 * n, sampled_caught, 3 * n)]
    section(2, "Peak capture", "\n".join(body))
