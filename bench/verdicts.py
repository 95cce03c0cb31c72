"""verdicts.py -- bench item: do `check`'s verdicts hold on this noisy machine?

An A/A harness: the demo pipeline (small size, eager and staged, 2 runs each) is
recorded into N_DIRS run directories of the same commit, one after another, and
each directory is checked against the next (N_DIRS - 1 pairs): every regression
there is a false one. An injected-regression harness: N_INJ directories each from
two pipeline files that differ only in their adapter -- one holds 300 MiB more
while the shape_512 stage runs, one makes the shape_1024 stage 50 % slower (it sleeps
half of the stage's own time after it) -- recorded between A/A directories k and k+1
and checked against both: a detection is a regression row of that stage, a false
one any row of another stage. For comparison the rule before the noise model (allowed =
max(threshold, the baseline's spread, floor), no pooled noise, no shift) is
applied to the same runs' peak footprint and stage time from `analyze --json`.
"""
import json
import os
import statistics
import subprocess
import time

HEAVY = '''"""heavy_adapter -- the demo adapter, plus 300 MiB held during sample_shape_slat(512)."""
import functools
import time

import adapter


def _heavy(cascade):
    cls = cascade.Cascade1024Pipeline
    orig = cls.sample_shape_slat

    @functools.wraps(orig)
    def sample_shape_slat(self, cond, init, resolution=512):
        if resolution != 512:
            return orig(self, cond, init, resolution=resolution)
        import torch
        extra = torch.ones(300 << 20, dtype=torch.uint8)  # every page written
        try:
            result = orig(self, cond, init, resolution=resolution)
            time.sleep(0.2)
            return result
        finally:
            del extra
    cls.sample_shape_slat = sample_shape_slat


def install(probe):
    probe.when_imported("cascade", _heavy)
    adapter.install(probe)
'''

SLOW = '''"""slow_adapter -- the demo adapter, with the shape_1024 stage 50 % slower.

Hooked after the demo adapter's, so this wrapper encloses the probe's stage wrapper: the
time it measures is the stage's own (its staged loads included), and the sleep after it
falls in the shape_1024 window (which ends at the next stage event)."""
import functools
import time

import adapter


def _slow(cascade):
    cls = cascade.Cascade1024Pipeline
    orig = cls.sample_shape_slat

    @functools.wraps(orig)
    def sample_shape_slat(self, cond, init, resolution=512):
        t = time.monotonic()
        result = orig(self, cond, init, resolution=resolution)
        if resolution == 1024:
            time.sleep(0.5 * (time.monotonic() - t))
        return result
    cls.sample_shape_slat = sample_shape_slat


def install(probe):
    adapter.install(probe)
    probe.when_imported("cascade", _slow)
'''

N_DIRS = 11
N_INJ = 5     # injected directories of each kind, each checked against 2 A/A ones
SIZE = "small"
# Sampler steps per flow model: at size small and the demo's 4 steps every stage lasts under
# 0.2 s, below check's 0.5 s floor for times, where no time change is ever judged; 2000 steps
# make each of the four flow stages last about 2 s (a pipeline's stages last seconds or more)
# without changing any model's memory.
STEPS = 2000
INJECTED = {"heavy": ("shape_512", "memory"), "slow": ("shape_1024", "time")}
MEMORY = ("peak footprint", "kernel peak (rss)", "kernel peak (footprint)", "swap rise")
TIME = ("stage time", "load time")


def pipelines(root, work):
    """base.json, heavy.json, slow.json in WORK/pl: the demo's file, paths made absolute."""
    pl = os.path.join(work, "pl")
    os.makedirs(pl, exist_ok=True)
    demo = os.path.join(root, "demo")
    with open(os.path.join(demo, "pipeline.json")) as f:
        p = json.loads(f.read().replace("{pipeline_dir}", demo))
    files = {}
    for name, text in (("base", None), ("heavy", HEAVY), ("slow", SLOW)):
        q = dict(p)
        if text:
            with open(os.path.join(pl, name + "_adapter.py"), "w") as f:
                f.write(text)
            q["adapter"] = name + "_adapter"
            q["pythonpath"] = [pl] + list(p["pythonpath"])
        files[name] = os.path.join(pl, name + ".json")
        with open(files[name], "w") as f:
            json.dump(q, f, indent=1)
    return files


LOADS = []  # the 1-minute load average as each directory's recording began


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def record(sb, root, pipeline, out, cache, log):
    load = loadavg()
    if load is not None:
        LOADS.append(load)
    argv = [sb, "compare", "eager", "staged", "--reps", "2", "--size", SIZE, "--seed", "7",
            "--set", "steps=%d" % STEPS, "--pipeline", pipeline, "--out", out, "--cache", cache,
            "-q"]
    r = subprocess.run(argv, capture_output=True, text=True,
                       env=dict(os.environ, STAGEBENCH_HOME=root))
    if r.returncode not in (0, 1):
        raise RuntimeError("compare into %s exited %d: %s" % (out, r.returncode, r.stderr[-600:]))
    return argv


def check(sb, base, cand):
    r = subprocess.run([sb, "check", "--format", "json", "--baseline", base, cand],
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError("check %s %s exited %d: %s" % (base, cand, r.returncode, r.stderr[-600:]))
    return json.loads(r.stdout)


def stage_values(sb, d):
    """{(mode, stage, metric): [values]} for peak footprint and stage time, completed stages."""
    traces = sorted(os.path.join(d, f) for f in os.listdir(d) if ".trace.jsonl" in f)
    runs = json.loads(subprocess.run([sb, "analyze", "--json"] + traces, check=True,
                                     capture_output=True, text=True).stdout)["runs"]
    out = {}
    for run in runs:
        for st in run["stages"]:
            if not st["completed"]:
                continue
            key = (run["mode"], st["name"])
            if st["peak_footprint_bytes"] is not None:
                out.setdefault(key + ("peak footprint",), []).append(st["peak_footprint_bytes"])
            out.setdefault(key + ("stage time",), []).append(st["seconds"])
    return out


def old_rule(base, cand):
    """Regressions [(mode, stage, metric)] under the rule before the noise model."""
    found = []
    for key, b in base.items():
        c = cand.get(key)
        if len(b) < 2 or not c:
            continue
        timed = key[2] == "stage time"
        floor = 0.5 if timed else 64 << 20
        allowed = max(max(b) * (0.10 if timed else 0.05), max(b) - min(b), floor)
        if min(c) > max(b) + allowed:
            found.append(key)
    return found


def rows(report, kind):
    return [(x["mode"], x["stage"], x.get("metric") or x.get("metrics")) for x in report[kind]]


def too_noisy(report):
    return [x for x in report["not_judged"] if x.get("why", "").startswith("too noisy")]


def run(sb, root, work, cache, log, shell):
    """Record (or, with BENCH_VERDICTS_REUSE=DIR, reuse a kept earlier run's directories),
    then check. The injected directories are recorded between A/A directories k and k+1
    (k < N_INJ), and checked against both: baseline and candidate close in time, as a user
    records a baseline and a candidate on one afternoon."""
    reuse = os.environ.get("BENCH_VERDICTS_REUSE")
    if reuse:
        work = reuse
    files = pipelines(root, work)
    dirs, inj = [], {name: [] for name in INJECTED}
    argv = None
    for i in range(N_DIRS):
        d = os.path.join(work, "aa-%02d" % i)
        log("verdicts: A/A directory %d of %d" % (i + 1, N_DIRS))
        argv = [sb, "compare", "eager", "staged", "--reps", "2", "--size", SIZE, "--seed", "7",
                "--set", "steps=%d" % STEPS, "--pipeline", files["base"], "--out", d,
                "--cache", cache, "-q"]
        if not reuse:
            record(sb, root, files["base"], d, cache, log)
        dirs.append(d)
        for name in INJECTED:
            if i >= N_INJ:
                continue
            d = os.path.join(work, "%s-%02d" % (name, i))
            log("verdicts: injected %s %d of %d" % (name, i + 1, N_INJ))
            if not reuse:
                record(sb, root, files[name], d, cache, log)
            inj[name].append(d)
    alld = dirs + [d for v in inj.values() for d in v]
    starts = [os.path.getmtime(os.path.join(dirs[0], f)) for f in os.listdir(dirs[0])
              if f.endswith(".log")]
    wall = max(os.path.getmtime(os.path.join(d, "runs.json")) for d in alld) - min(starts)
    values = {d: stage_values(sb, d) for d in alld}

    drift = []  # A/A: a stage's time ratio between neighbouring directories
    for i in range(N_DIRS - 1):
        b, c = values[dirs[i]], values[dirs[i + 1]]
        for key, v in b.items():
            if key[2] == "stage time" and c.get(key) and statistics.median(v) >= 0.1:
                drift.append(statistics.median(c[key]) / statistics.median(v))
    aa = []
    for i in range(N_DIRS - 1):
        rep = check(sb, dirs[i], dirs[i + 1])
        aa.append((rows(rep, "regressions"), too_noisy(rep), old_rule(values[dirs[i]], values[dirs[i + 1]])))
    det = {}
    for name, (stage, kind) in INJECTED.items():
        metrics = MEMORY if kind == "memory" else TIME
        res = []
        for k, cand in enumerate(inj[name]):
            for base in (dirs[k], dirs[k + 1]):
                rep = check(sb, base, cand)
                regs = rows(rep, "regressions")
                hit = {m for (mode, st, m) in regs if st == stage and m in metrics}
                modes = {mode for (mode, st, m) in regs if st == stage and m in metrics}
                other = [r for r in regs if r[1] != stage]
                old = old_rule(values[base], values[cand])
                ratio = {}
                for mode in ("eager", "staged"):
                    b = values[base].get((mode, stage, "stage time"))
                    c = values[cand].get((mode, stage, "stage time"))
                    if b and c:
                        ratio[mode] = statistics.median(c) / statistics.median(b)
                res.append((hit, modes, other, old, too_noisy(rep), ratio))
        det[name] = res
    return argv, files, wall, aa, det, sorted(drift)


def render(argv, files, wall, aa, det, drift, shell):
    npairs = len(aa)
    false_rows = sum(len(r[0]) for r in aa)
    false_pairs = sum(1 for r in aa if r[0])
    noisy = sum(len(r[1]) for r in aa)
    old_rows = sum(len(r[2]) for r in aa)
    old_pairs = sum(1 for r in aa if r[2])
    body = ["Does `check` call a regression where there is none, and does it find one that is "
            "there? The demo pipeline at size %s with %d sampler steps per flow model (each flow "
            "stage lasts about 2 s; at the demo's 4 steps every stage is under check's 0.5 s "
            "floor for times), eager and staged, 2 runs each per directory "
            "(%d directories of the same commit, and %d of each injected regression recorded "
            "between A/A directories k and k+1; %.0f s of recording in all), one directory "
            "after another on this shared 2-core machine, with whatever else ran on it "
            "meanwhile. Each directory:" % (SIZE, STEPS, N_DIRS, N_INJ, wall), "",
            "    " + shell(argv).replace(files["base"], "$WORK/pl/base.json"), ""]
    if LOADS:
        ls = sorted(LOADS)
        body += ["How busy the machine was: the 1-minute load average as each directory's "
                 "recording began was %.1f to %.1f (median %.1f, %d directories; 2 cores)." % (
                     ls[0], ls[-1], ls[len(ls) // 2], len(ls)), ""]
    body += [
            "Injected: `heavy.json` and `slow.json` differ from `base.json` only in their "
            "adapter (bench/verdicts.py writes both): one holds 300 MiB more while shape_512 "
            "runs, one sleeps half of the shape_1024 stage's own time after it (shape_1024 50 % "
            "slower). Each "
            "injected directory k is checked (`stagebench check --format json --baseline "
            "$WORK/aa-K $WORK/heavy-K`) against A/A directories k and k+1, the ones recorded "
            "just before and after it.", "",
            "\"Old rule\": the rule before the noise model (allowed = max(threshold, the "
            "baseline's own spread, floor)), applied to the same runs' peak footprint and stage "
            "time.", "",
            "| harness | comparisons | regressions (rows) | comparisons with one | \"too noisy\" rows | old rule: rows | old rule: comparisons with one |",
            "|---|---|---|---|---|---|---|",
            "| A/A (false regressions) | %d | %d | %d | %d | %d | %d |" % (
                npairs, false_rows, false_pairs, noisy, old_rows, old_pairs)]
    verdicts = []
    for name, res in det.items():
        n = len(res)
        hits = sum(1 for r in res if r[0])
        both = sum(1 for r in res if r[1] >= {"eager", "staged"})
        other = sum(len(r[2]) for r in res)
        old_hit = sum(1 for r in res if any(k[1] == INJECTED[name][0]
                                            for k in r[3]))
        metrics = sorted(set().union(*(r[0] for r in res))) if res else []
        body.append("| injected: %s (%s) | %d | flagged in %d of %d (both modes in %d) | "
                    "%d rows in other stages | %d | old rule flagged it in %d | |" % (
                        name, "300 MiB more in shape_512" if name == "heavy" else "shape_1024 50 % slower",
                        n, hits, n, both, other, sum(len(r[4]) for r in res), old_hit))
        verdicts.append((name, hits, n, other, metrics))
    body += [""]
    for name, hits, n, other, metrics in verdicts:
        body.append("- %s: flagged by %s." % (name, ", ".join(metrics) or "nothing"))
        stage = INJECTED[name][0]
        rs = [r[5] for r in det[name] if r[5]]
        if rs:
            body.append("  %s's stage time, median of the injected runs over median of the "
                        "baseline runs, per comparison: %s." % (stage, "; ".join(
                            ", ".join("%s %.2f" % kv for kv in sorted(r.items())) for r in rs)))
    if drift:
        q = lambda f: drift[min(len(drift) - 1, int(f * len(drift)))]
        body += ["", "How much the machine itself moved stage times between neighbouring A/A "
                 "directories (same code; median over a directory's runs, stages of 0.1 s or "
                 "more, %d stage pairs): ratio 10th percentile %.2f, median %.2f, 90th "
                 "percentile %.2f. A change smaller than that drift cannot be told from it with "
                 "2 runs a side; `check` then says nothing or \"too noisy\"." % (
                     len(drift), q(0.1), q(0.5), q(0.9))]
    ok = false_rows == 0 and all(h == n and o == 0 for _, h, n, o, _ in verdicts)
    gaps = []
    if false_rows:
        gaps.append("%d false regression rows in %d of %d A/A comparisons" % (false_rows, false_pairs, npairs))
    for name, h, n, o, _ in verdicts:
        if h < n:
            gaps.append("%s flagged in %d of %d" % (name, h, n))
        if o:
            gaps.append("%s: %d rows in other stages" % (name, o))
    body += ["", "Target: 0 false regressions in the A/A pairs, every injected regression "
             "flagged, in its stage only: " + ("**met**" if ok else "**not met**: " + "; ".join(gaps)) + "."]
    return "\n".join(body)
