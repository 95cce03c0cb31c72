#!/bin/sh
# sharers.sh -- shared pages count once under the churn worker pools make: shared memory
# (MAP_SHARED anonymous, a /dev/shm file, a memfd) written by forked workers after the
# meter has seen them, 16 idle forks of a 1 GiB parent, 400 short-lived forked workers, fork
# and exec of short commands. Each is compared with the truth its workload reads at the same
# point (tests/e2e/sharers.py: the sum of smaps_rollup Pss_Anon + Pss_Shmem over its live
# processes): every sample taken while the tree holds still within 5 %, the stage window's
# kernel peak within 10 % of the largest true total in it, on either reader: the run's own
# memory cgroup (STAGEBENCH_CGROUP=1) and the per-process reading (STAGEBENCH_CGROUP=0);
# with STAGEBENCH_CGROUP unset, both, one after the other. SB_BURN=N runs N CPU-bound
# processes beside it. Needs SB_BIN. SB_EXPECT_CGROUP=1: fail, not skip, where no cgroup
# can be made (below).
set -u
SB=${SB_BIN:?SB_BIN not set}
if [ -z "${STAGEBENCH_CGROUP:-}" ]; then
	echo "  reader: the run's own memory cgroup (STAGEBENCH_CGROUP=1)"
	STAGEBENCH_CGROUP=1 "$0"
	a=$?
	echo "  reader: per process (STAGEBENCH_CGROUP=0)"
	STAGEBENCH_CGROUP=0 "$0"
	exit $((a | $?))
fi
PY=/usr/bin/python3
HERE=$(cd "$(dirname "$0")" && pwd)
W="$HERE/sharers.py"
export PYTHONPATH="$HERE/../../probe"
T=$(mktemp -d)
burners=""
cleanup() {
	for b in $burners; do kill "$b" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
fail=0
# Where the whole-tree reader cannot be had (a chroot without the cgroup file system, no
# memory controller, a read-only cgroupfs) the recorder says so and its run is skipped,
# naming where ($SB_CONTEXT, else the user and the cgroup); the per-process one runs.
# SB_EXPECT_CGROUP=1 says a cgroup should be had here (make test-vm sets it in the guest's
# login sessions): none fails.
export STAGEBENCH_CGROUP
ctx=${SB_CONTEXT:-uid $(id -u) in $(tail -n 1 /proc/self/cgroup)}
if [ "$STAGEBENCH_CGROUP" = 1 ] &&
	"$SB" record -o "$T/probe.zst" -- true 2>&1 | grep -q "no memory cgroup of the run's own"; then
	if [ "${SB_EXPECT_CGROUP:-}" = 1 ]; then
		echo "  FAIL sharers.sh ($ctx): no memory cgroup could be made, and SB_EXPECT_CGROUP=1 says one should"
		exit 1
	fi
	echo "  SKIP sharers.sh ($ctx): no memory cgroup can be made here (the recorder's warning)"
	exit 0
fi
. "$HERE/handshake.inc"
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fail=1; }

i=0
while [ "$i" -lt "${SB_BURN:-0}" ]; do
	$PY -c 'while True: pass' &
	burners="$burners $!"
	i=$((i + 1))
done

# q TRACE EXPR: a python expression over the flushed part of TRACE: samples, events,
# after(note) (samples after the mark NOTE), stage_t(name), peak(stage), upto (the time of
# the newest sample then, from $T/upto when it exists).
q() {
	zstdcat "$1" 2>/dev/null | UPTO="$(cat "$T/upto" 2>/dev/null)" PYTHONPATH="$HERE" $PY -c '
import flushed, os, sys
samples, events = flushed.load(sys.stdin)
upto = float(os.environ["UPTO"] or "inf")
def mark_t(note):
    return [e["t"] for e in events if e["kind"] == "mark" and e.get("note") == note][0]
def stage_t(name):
    return [e["t"] for e in events if e["kind"] == "stage" and e["stage"] == name][0]
def after(note):
    t = mark_t(note)
    return [s for s in samples if t < s["t"] <= upto]
def peak(stage):
    return [e["bytes"] for e in events if e["kind"] == "peak" and e["stage"] == stage][0]
print(eval(sys.argv[1]))' "$2"
}
has_mark() { trace_has "$1" "\"kind\":\"mark\".*\"note\":\"$2\""; }
# newest TRACE: the time of the newest sample flushed so far, into $T/upto
newest() { rm -f "$T/upto"; q "$1" 'samples[-1]["t"]' >"$T/upto.tmp" && mv "$T/upto.tmp" "$T/upto"; }
# within TRACE NAME NOTE: every sample after mark NOTE (up to $T/upto) within 5 % of the
# truth; the peak of stage NAME within 10 % of it
within() {
	truth=$(cut -d' ' -f2 "$T/truth")
	r=$(q "$1" "[round(s['footprint'] / $truth, 3) for s in after('$3')]")
	n=$(q "$1" "len(after('$3'))")
	worst=$(q "$1" "max(abs(s['footprint'] / $truth - 1) for s in after('$3'))")
	if [ "$n" -ge 3 ] && $PY -c "import sys; sys.exit(not ($worst <= 0.05))"; then
		ok "$4: $n samples held within 5 % of the Pss sum ($truth): $r"
	else
		bad "$4: $n samples held against the Pss sum $truth: $r"
	fi
	p=$(q "$1" "round(peak('$2') / $truth, 3)")
	if $PY -c "import sys; sys.exit(not (0.9 <= $p <= 1.1))"; then
		ok "$4: the $2 window's peak is $p of the largest true total"
	else
		bad "$4: the $2 window's peak is $p of the largest true total ($truth)"
	fi
}

# Shared memory written by 4 workers after the meter read them (5 processes seen).
for kind in anon devshm memfd; do
	rm -f "$T"/truth "$T"/write "$T"/end "$T"/upto
	"$SB" record -q -o "$T/$kind.zst" --interval 20ms -- $PY "$W" shm "$T" "$kind" &
	rec=$!
	five() { q "$T/$kind.zst" "int(any(s['t'] > stage_t('forked') and s.get('procs', 0) >= 5 for s in samples))" | grep -qx 1; }
	wait_for trace_has "$T/$kind.zst" '"kind":"stage".*"stage":"forked"'
	wait_for five
	: >"$T/write"
	wait_for has_mark "$T/$kind.zst" written
	wait_for at_least 3 q "$T/$kind.zst" "len(after('written'))"
	newest "$T/$kind.zst"
	: >"$T/end"
	wait "$rec" || bad "shm $kind: the recorder failed"
	within "$T/$kind.zst" forked written "256 MiB $kind written by 4 workers"
done

# 16 idle forks of a 1 GiB parent.
rm -f "$T"/truth "$T"/end "$T"/upto
"$SB" record -q -o "$T/idle.zst" --interval 20ms -- $PY "$W" idle "$T" 16 &
rec=$!
wait_for has_mark "$T/idle.zst" held
wait_for at_least 3 q "$T/idle.zst" "len(after('held'))"
newest "$T/idle.zst"
: >"$T/end"
wait "$rec" || bad "idle forks: the recorder failed"
within "$T/idle.zst" forked held "16 idle forks of 1 GiB"

# 400 short-lived forked workers (4 alive, 20 ms each), then 100 fork + exec: every sample
# in the window between the least and the largest truth read in it (5 % either way), its
# peak within 10 % of the largest.
for mode in churn:400 exec:100; do
	m=${mode%%:*}
	rm -f "$T"/truth "$T"/upto
	"$SB" record -q -o "$T/$m.zst" --interval 20ms -- $PY "$W" "$m" "$T" "${mode#*:}"
	rc=$?
	lo=$(cut -d' ' -f1 "$T/truth")
	hi=$(cut -d' ' -f2 "$T/truth")
	inw="[s['footprint'] for s in samples if stage_t('$m') < s['t'] <= stage_t('after')]"
	r=$(q "$T/$m.zst" "(round(min($inw) / $lo, 3), round(max($inw) / $hi, 3), len($inw))")
	if [ "$rc" = 0 ] && $PY -c "import sys; a, b, n = $r; sys.exit(not (a >= 0.95 and b <= 1.05 and n >= 3))"; then
		ok "$m: samples (least of the least truth, most of the largest, count) $r"
	else
		bad "$m: rc=$rc samples (least of the least truth $lo, most of the largest $hi, count) $r"
	fi
	p=$(q "$T/$m.zst" "round(peak('$m') / $hi, 3)")
	if $PY -c "import sys; sys.exit(not (0.9 <= $p <= 1.1))"; then
		ok "$m: the window's peak is $p of the largest true total"
	else
		bad "$m: the window's peak is $p of the largest true total ($hi)"
	fi
done
exit $fail
