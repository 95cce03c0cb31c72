#!/usr/bin/python3
"""bench.py -- the measurements behind BENCHMARKS.md (run by bench/run.sh, see there).

Usage: SB_BIN=... SB_HELPERS=... bench/bench.py [--quick] [ITEM...]
Items 1..7 and 12 (default: all; 8 to 11 are measured by hand and kept). Each item writes bench/results/item-N.md; then
BENCHMARKS.md is assembled from the machine header and every item-N.md there,
so a partial run (`bench/run.sh 3`) refreshes one section and keeps the rest.
Standard library only; zstd, gnuplot and python3-mprof are external programs.
"""
import os
import re
import shutil
import sys
import tempfile
import time

import benchlib as B
from benchlib import EATMEM, MPROF, RESULTS, ROOT, SB, log, machine_header
from items_demo import item5, item6, item7, item12
from items_recorder import item1, item2
from items_traces import item3, item4


def sections(path):
    """BENCHMARKS.md's item sections by number ('## N. ...' up to the next one), or {}."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return {}
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"## (\d+)\. ", line)
        if m:
            cur = int(m.group(1))
            out[cur] = []
        if cur is not None:
            out[cur].append(line)
    return {k: "\n".join(v).rstrip() for k, v in out.items()}


def main(argv):
    items = []
    for a in argv:
        if a == "--quick":
            B.QUICK = True
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        elif a.isdigit() and (1 <= int(a) <= 7 or int(a) == 12):
            items.append(int(a))
        else:
            sys.stderr.write("usage: bench/run.sh [--quick] [ITEM...]   (items 1-7 and 12; "
                             "8-11 are measured by hand)\n")
            return 2
    items = items or [1, 2, 3, 4, 5, 6, 7, 12]
    for prog, what in ((SB, "SB_BIN"), (EATMEM, "SB_HELPERS/eatmem")):
        if not os.access(prog, os.X_OK):
            sys.stderr.write("bench: %s is not executable (%s); run 'make bench'\n" % (prog, what))
            return 3
    if not MPROF and (1 in items or 2 in items):
        sys.stderr.write("bench: python3-mprof not found (Debian: python3-memory-profiler)\n")
        return 3
    os.makedirs(RESULTS, exist_ok=True)
    B.BASE = os.environ.get("BENCH_WORK") or os.path.join(tempfile.gettempdir(), "stagebench-bench")
    os.makedirs(B.BASE, exist_ok=True)
    B.WORK = tempfile.mkdtemp(prefix="run-", dir=B.BASE)
    log("scratch " + B.WORK)
    fns = {1: item1, 2: item2, 3: item3, 4: item4, 5: item5, 6: item6, 7: item7, 12: item12}
    failed = []
    for i in items:
        t = time.monotonic()
        try:
            fns[i]()
        except Exception as e:  # keep going: one broken item must not lose the others
            import traceback
            traceback.print_exc()
            failed.append(i)
            log("item %d failed: %s" % (i, e))
        log("item %d: %.0f s" % (i, time.monotonic() - t))
    doc = machine_header()
    # An item not run now keeps its section as BENCHMARKS.md has it (items 8 to 11 are
    # measured by hand and edited there); its item-N.md is brought in step with it.
    kept = sections(os.path.join(ROOT, "BENCHMARKS.md"))
    for i in range(1, 13):
        p = os.path.join(RESULTS, "item-%d.md" % i)
        if i not in items and i in kept:
            with open(p, "w") as f:
                f.write(kept[i] + "\n")
        if os.path.exists(p):
            with open(p) as f:
                doc += [f.read().rstrip(), ""]
        elif i in fns:
            doc += ["## %d. (not measured yet: `bench/run.sh %d`)" % (i, i), ""]
    with open(os.path.join(ROOT, "BENCHMARKS.md"), "w") as f:
        f.write("\n".join(doc))
    log("wrote BENCHMARKS.md")
    if not os.environ.get("BENCH_KEEP"):
        shutil.rmtree(B.WORK, ignore_errors=True)
    return 3 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
