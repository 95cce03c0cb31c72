#!/bin/sh
# shared.sh -- pages that forked processes share count once in the tree's footprint: a
# process holding 256 MiB forks a chain of 4 copies (as multiprocessing's "fork" start
# method and DataLoader workers do; each copy is also a child between fork and exec),
# then each copy writes to 32 MiB of what it shares. Needs SB_BIN and SB_HELPERS.
set -u
SB=${SB_BIN:?SB_BIN not set}
E=${SB_HELPERS:?SB_HELPERS not set}/eatmem
PY=/usr/bin/python3
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
. "$(dirname "$0")/handshake.inc"
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fail=1; }

# q TRACE EXPR: a python expression over the flushed part of TRACE (samples, events,
# at(stage): the footprints of the samples from that stage event on).
q() {
	zstdcat "$1" 2>/dev/null | PYTHONPATH="$HERE" $PY -c '
import flushed, sys
samples, events = flushed.load(sys.stdin)
def at(stage):
    return [s["footprint"] for s in flushed.from_stage(samples, events, stage)]
print(eval(sys.argv[1]))' "$2"
}

MiB=1048576
# held: the root alone with its 256 MiB; forked: 4 copies sharing it (nothing written);
# written: each copy has written to 32 MiB of it (truth: held + 4 x 32 MiB).
"$SB" record -q -o "$T/fork.zst" --interval 20ms -- "$E" alloc=256M stage=held \
	wait="$T/held.go" fork fork fork fork stage=forked wait="$T/forked.go" \
	fork dirty=32M fork dirty=32M fork dirty=32M fork dirty=32M stage=written \
	wait="$T/written.go" &
rec=$!
wait_for trace_has "$T/fork.zst" '"kind":"stage".*"stage":"held"'
wait_for at_least 1 q "$T/fork.zst" 'len(at("held"))'
held=$(q "$T/fork.zst" 'at("held")[0]')
: >"$T/held.go"
# forked: 5 processes, 256 MiB shared; wait until a sample after the event shows 5 processes
wait_for trace_has "$T/fork.zst" '"kind":"stage".*"stage":"forked"'
wait_for at_least 3 q "$T/fork.zst" 'len(at("forked"))'
forked=$(q "$T/fork.zst" 'max(at("forked"))')
: >"$T/forked.go"
want=$((held + 4 * 32 * MiB))
# written: the last copy wrote after its fork; a sample reads it once the meter looked
# again (within its cost budget): wait for it, then no sample may have read more.
wait_for trace_has "$T/fork.zst" '"kind":"stage".*"stage":"written"'
close_enough() { q "$T/fork.zst" "int(any(f >= 0.95 * $want for f in at('written')))" | grep -qx 1; }
wait_for close_enough
: >"$T/written.go"
wait "$rec"
rc=$?
[ -n "${SB_KEEP:-}" ] && cp "$T/fork.zst" "$SB_KEEP"
r=$(q "$T/fork.zst" "round(max(s['footprint'] for s in samples) / $want, 3)")
f=$($PY -c "print(round($forked / $held, 3))")
if [ "$rc" = 0 ] && $PY -c "import sys; sys.exit(not (0.95 <= $f <= 1.05))"; then
	ok "4 forked copies: footprint $f of the root's alone"
else
	bad "4 forked copies: rc=$rc footprint $forked is $f of the root's alone ($held)"
fi
if $PY -c "import sys; sys.exit(not ($r <= 1.05))"; then
	ok "copies writing 4 x 32 MiB: highest footprint $r of held + 128 MiB"
else
	bad "copies writing 4 x 32 MiB: highest footprint $r of held + 128 MiB ($want)"
fi
# the forked window's exact peak (read at its end, when 9 copies were alive, 4 of them
# having written) counts shared pages once
p=$(q "$T/fork.zst" "round([e['bytes'] for e in events if e['kind'] == 'peak' and e['stage'] == 'forked'][0] / $want, 3)")
if $PY -c "import sys; sys.exit(not ($p <= 1.05))"; then
	ok "the forked stage's peak is $p of held + 128 MiB"
else
	bad "the forked stage's peak is $p of held + 128 MiB"
fi
# the written window ends as the copies exit one by one (each leaving its share to the
# others): its peak still counts shared pages once
p=$(q "$T/fork.zst" "round([e['bytes'] for e in events if e['kind'] == 'peak' and e['stage'] == 'written'][0] / $want, 3)")
if $PY -c "import sys; sys.exit(not (0.95 <= $p <= 1.05))"; then
	ok "the written stage's peak, read as the copies exit, is $p of held + 128 MiB"
else
	bad "the written stage's peak, read as the copies exit, is $p of held + 128 MiB"
fi
# The same through Python's multiprocessing (the "fork" start method, as DataLoader workers):
# a 256 MiB parent, a pool of 4 idle workers that exit at the end. The footprint stays near
# the parent's 256 MiB (5 x without sharing), and so does the run's kernel peak, read after
# the workers have left (each exit hands its share back to the parent). The truth is the
# kernel's, read by the parent itself while the workers wait: the footprint's, the sum of
# smaps_rollup Pss_Anon + Pss_Shmem over the five (each page once); the kernel peak's, whose
# metric is rss (file pages too, docs/memory.md), that sum plus the most file pages one of
# them maps (RssFile), or the parent's VmRSS alone before it forked, the larger.
cat >"$T/pool.py" <<'PY'
import multiprocessing as mp, os, sys, time
from sharers import pss
def work(flag):
    while not os.path.exists(flag):
        time.sleep(0.01)
def status(pid, field):
    with open("/proc/%d/status" % pid) as f:
        return next(int(l.split()[1]) << 10 for l in f if l.startswith(field + ":"))
if __name__ == "__main__":
    held = bytearray(256 << 20)
    for i in range(0, len(held), 4096):
        held[i] = 1
    peak = status(os.getpid(), "VmRSS")
    foot = 0
    with mp.get_context("fork").Pool(4) as pool:
        done = pool.map_async(work, [sys.argv[1]] * 4)
        pids = [os.getpid()] + [w.pid for w in mp.active_children()]
        while not os.path.exists(sys.argv[1]):
            try:
                anon = sum(pss(pid) for pid in pids)
                peak = max(peak, anon + max(status(pid, "RssFile") for pid in pids))
            except OSError:
                break
            foot = max(foot, anon)
            time.sleep(0.01)
        done.get()
    with open(sys.argv[2], "w") as f:
        f.write("%d %d\n" % (foot, peak))
PY
PYTHONPATH="$HERE:$HERE/../../probe" "$SB" record -q -o "$T/pool.zst" --interval 20ms -- $PY "$T/pool.py" "$T/pool.go" "$T/pool.truth" &
rec=$!
five() { q "$T/pool.zst" "int(any(s.get('procs', 0) >= 5 for s in samples))" | grep -qx 1; }
wait_for five
: >"$T/pool.go"
wait "$rec"
rc=$?
read -r tfoot tpeak 2>/dev/null <"$T/pool.truth" || tfoot=0 tpeak=0
r=$(q "$T/pool.zst" "round(max(s['footprint'] for s in samples) / max($tfoot, 1), 3)")
p=$(q "$T/pool.zst" "round(max(e['bytes'] for e in events if e['kind'] == 'peak') / max($tpeak, 1), 3)")
if [ "$rc" = 0 ] && $PY -c "import sys; sys.exit(not (0.95 <= $r <= 1.05 and 0.95 <= $p <= 1.05))"; then
	ok "multiprocessing pool of 4: highest footprint $r of the Pss sum, kernel peak $p of the truth"
else
	bad "multiprocessing pool of 4: rc=$rc highest footprint $r of the Pss sum ($tfoot), kernel peak $p of the truth ($tpeak)"
fi
exit $fail
