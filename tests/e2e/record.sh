#!/bin/sh
# record.sh -- stagebench record on real processes: footprint, exact stage peaks,
# process trees, kill -9 of the recorder, SIGINT.  Needs SB_BIN and SB_HELPERS.
# SB_EXPECT_CGROUP=1 or 0: which reader the spikes' first pass must have had (below);
# SB_RECORD_ONLY=spikes: the first case and the spikes only.
set -u
SB=${SB_BIN:?SB_BIN not set}
E=${SB_HELPERS:?SB_HELPERS not set}/eatmem
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
. "$(dirname "$0")/handshake.inc"
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fail=1; }

# Every line of a trace is one JSON object; print a python expression over it.
# usage: q TRACE 'python expression over recs (list of dicts)'
q() {
	zstdcat "$1" | $PY -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin if l.strip()]
samples = [r for r in recs if r["type"] == "sample"]
events = [r for r in recs if r["type"] == "event"]
end = [r for r in recs if r["type"] == "end"]
print(eval(sys.argv[1]))' "$2"
}

# 1. a command holding 300 MiB: peak footprint within 5% of 300 MiB above the idle baseline
# (the sample taken at the stage event "idle", before the allocation)
"$SB" record -q -o "$T/hold.zst" --interval 50ms -- "$E" stage=idle wait="$T/idle.go" \
	alloc=300M stage=held wait="$T/held.go" &
rec=$!
drive "$T/hold.zst" "$T" idle held
wait "$rec"
rc=$?
r=$(q "$T/hold.zst" '(max(s["footprint"] for s in samples) - [s["footprint"] for s in samples if s["t"] >= [e["t"] for e in events if e["kind"] == "stage"][0]][0]) / (300 * 2**20)')
if [ "$rc" = 0 ] && $PY -c "import sys; sys.exit(not (0.95 <= $r <= 1.05))"; then
	ok "300 MiB held: peak above baseline is $r of 300 MiB"
else
	bad "300 MiB held: rc=$rc ratio=$r"
fi

# The spikes of 2 and 2b on each reader: the run's memory cgroup (STAGEBENCH_CGROUP=1, the
# default where one can be made; the trace's "meter:" mark says it ran) and the per-process
# one (STAGEBENCH_CGROUP=0, the reader where none can be made).
spikes() {
R=$1 L=$2
export STAGEBENCH_CGROUP=$R
# 2. a 200 MiB spike held 50 ms inside a stage shows in that stage's peak at --interval 1s
# (the spike waits until the recorder has opened the window: its event is in the trace)
mkdir "$T/2$R"
"$SB" record -q -o "$T/${R}spike.zst" --interval 1s -- "$E" stage=calm stage=burst \
	wait="$T/2$R/burst.go" spike=200M/50ms stage=done &
rec=$!
drive "$T/${R}spike.zst" "$T/2$R" burst
wait "$rec"
r=$(q "$T/${R}spike.zst" '[e["bytes"] for e in events if e["kind"] == "peak" and e["stage"] == "burst"][0] >= 200 * 2**20 and [e["bytes"] for e in events if e["kind"] == "peak" and e["stage"] == "calm"][0] < 50 * 2**20')
[ "$r" = True ] && ok "$L: spike shows in the stage's exact peak" || bad "$L: spike missing from peak: $r"

# 2b. a 200 MiB spike right before the command exits, in its last stage, shows in
# that stage's peak at --interval 1s (the root's ru_maxrss from wait4: a
# zombie has no VmHWM); so does one of an orphan, reaped by the recorder, that
# exits while the command still runs. Every stage window has a peak event; one
# with nothing measured has "bytes": null (None here) and a "why".
peaks='[(e["stage"], (e["bytes"] or 0) >= 200 * 2**20) for e in events if e["kind"] == "peak"]'
mkdir "$T/2b$R"
"$SB" record -q -o "$T/${R}xspike.zst" --interval 1s -- "$E" stage=a stage=b wait="$T/2b$R/b.go" \
	spike=200M/50ms exit=0 &
rec=$!
drive "$T/${R}xspike.zst" "$T/2b$R" b
wait "$rec"
r=$(q "$T/${R}xspike.zst" "$peaks")
[ "$r" = "[('setup', False), ('a', False), ('b', True)]" ] && ok "$L: spike at exit shows in the last stage's peak" ||
	bad "$L: spike at exit missing from the last stage's peak: $r"
# The orphan is seen alive by the sample the recorder takes at its release event (in the
# trace: the orphan may spike), which it sends once its parent is gone (re-parented to the
# recorder, not in transit); the command enters stage b once the orphan is reaped.
mkdir "$T/os$R"
"$SB" record -q -o "$T/${R}ospike.zst" --interval 1s -- sh -c '
	"$1" stage=a orphan wait="$2/parent.gone" alloc=1M release=w/1M ready="$2/o.pid" \
		wait="$2/o.go" spike=200M/50ms exit=0
	: >"$2/parent.gone"
	i=0; until [ -s "$2/o.pid" ]; do i=$((i + 1)); [ $i -lt 6000 ] || exit 7; sleep 0.01; done
	i=0; while kill -0 "$(cat "$2/o.pid")" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 6000 ] || exit 7; sleep 0.01; done
	"$1" stage=b' sh "$E" "$T/os$R" &
rec=$!
wait_for trace_has "$T/${R}ospike.zst" '"kind":"release"' && : >"$T/os$R/o.go"
wait "$rec"
r=$(q "$T/${R}ospike.zst" "$peaks")
n=$(q "$T/${R}ospike.zst" 'all(("bytes" in e) and (e["bytes"] is not None or e.get("why")) for e in events if e["kind"] == "peak")')
[ "$r" = "[('setup', False), ('a', True), ('b', False)]" ] && [ "$n" = True ] &&
	ok "$L: an orphan's spike at its exit shows in the stage's peak; every window has a peak" ||
	bad "$L: an orphan's spike at its exit is missing: $r (bytes or why in every peak: $n)"
}
spikes 1 cgroup
# Which reader the first pass had: the cgroup one where this machine's cgroupfs is writable
# at its top (cgroup v1 as root) or SB_EXPECT_CGROUP=1 says so (make test-vm, in a v2
# login session); the per-process one where SB_EXPECT_CGROUP=0 says so (a read-only cgroupfs).
m=$(q "$T/1spike.zst" '"|".join(e["note"] for e in events if e["kind"] == "mark" and e.get("note", "").startswith("meter: "))')
if [ "${SB_EXPECT_CGROUP:-}" = 1 ] || { [ -z "${SB_EXPECT_CGROUP:-}" ] &&
	{ [ -w /sys/fs/cgroup/memory ] || [ -w /sys/fs/cgroup/cgroup.subtree_control ]; }; }; then
	case $m in *"|"*) bad "cgroup: more than one reader mark: $m" ;;
	"meter: cgroup-v"[12]": footprint read from the run's own memory cgroup"*) ok "cgroup: the trace's mark says the cgroup reader ran" ;;
	*) bad "cgroup: no mark of the cgroup reader${SB_CONTEXT:+ (${SB_CONTEXT})}: $m" ;; esac
elif [ "${SB_EXPECT_CGROUP:-}" = 0 ]; then
	case $m in "meter: per-process:"*) ok "cgroup asked for where none can be had: the per-process reader ran" ;;
	*) bad "cgroup asked for where none can be had: $m" ;; esac
fi
spikes 0 per-process
m=$(q "$T/0spike.zst" '"|".join(e["note"] for e in events if e["kind"] == "mark" and e.get("note", "").startswith("meter: "))')
case $m in *"|"*) bad "per-process: more than one reader mark: $m" ;;
"meter: per-process: footprint read process by process"*) ok "per-process: the trace's mark says the per-process reader ran" ;;
*) bad "per-process: no mark of the per-process reader, or more than one: $m" ;; esac
unset STAGEBENCH_CGROUP
# SB_RECORD_ONLY=spikes: stop here (make test-vm runs only these cases, under TCG)
[ "${SB_RECORD_ONLY:-}" = spikes ] && exit $fail

# 2b'. an orphan that lives and dies between two samples (no tree listing ever sees it) is
# reaped all the same: the command, waiting for it to be gone, ends (exit 0, not 7); before,
# it stayed a zombie of the recorder for the rest of the run
mkdir "$T/zo"
"$SB" record -q -o "$T/zombie.zst" --interval 1s -- sh -c '
	"$1" orphan ready="$2/z.pid" exit=0
	i=0; until [ -s "$2/z.pid" ]; do i=$((i + 1)); [ $i -lt 1000 ] || exit 7; sleep 0.01; done
	i=0; while kill -0 "$(cat "$2/z.pid")" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 1000 ] || exit 7; sleep 0.01; done' sh "$E" "$T/zo"
rc=$?
[ "$rc" = 0 ] && ok "an orphan no listing saw is reaped" || bad "an unseen orphan stayed a zombie (exit $rc)"

# 2c. a 50 ms stage between longer ones gets a sample at --interval 1s (one is
# taken at each stage event), as does every other stage: analyze finds them. Each
# stage goes on once its event is in the trace (read, and its sample taken).
mkdir "$T/2c"
"$SB" record -q -o "$T/short.zst" --interval 1s -- "$E" stage=long1 alloc=50M \
	wait="$T/2c/long1.go" stage=short alloc=100M wait="$T/2c/short.go" sleep=50ms free \
	stage=long2 wait="$T/2c/long2.go" free=all stage=last alloc=150M free &
rec=$!
drive "$T/short.zst" "$T/2c" long1 short long2
wait "$rec"
"$SB" analyze --json "$T/short.zst" >"$T/short.json" 2>"$T/short.err"
r=$($PY -c '
import json, sys
st = json.load(open(sys.argv[1]))["runs"][0]["stages"]
print([(s["name"], s["samples"] >= 1) for s in st if s["name"] != "setup"])' "$T/short.json" 2>&1)
[ "$r" = "[('long1', True), ('short', True), ('long2', True), ('last', True)]" ] &&
	ok "a 50 ms stage has a sample in its window" || bad "stage windows without a sample: $r"

# 3. a grandchild's memory is in the footprint (the sample at its stage event sees it)
mkdir "$T/3"
"$SB" record -q -o "$T/gc.zst" --interval 50ms -- "$E" fork fork alloc=300M stage=held \
	wait="$T/3/held.go" &
rec=$!
drive "$T/gc.zst" "$T/3" held
wait "$rec"
r=$(q "$T/gc.zst" 'max(s["footprint"] for s in samples) >= 290 * 2**20 and max(s.get("procs", 0) for s in samples) >= 3')
[ "$r" = True ] && ok "grandchild counted in the footprint" || bad "grandchild not counted: $r"

# 4. kill -9 of the recorder mid-run leaves a readable trace
"$SB" record -q -o "$T/k9.zst" --interval 20ms -- "$E" ready="$T/k9.pid" stage=s1 alloc=20M sleep=10s &
rec=$!
wait_for at_least 10 trace_count "$T/k9.zst" '"type":"sample"'
kill -9 "$rec"
wait "$rec" 2>/dev/null
[ -s "$T/k9.pid" ] && kill -9 "$(cat "$T/k9.pid")" 2>/dev/null
if zstdcat "$T/k9.zst" >"$T/k9.jsonl" 2>"$T/k9.err"; then
	r=$(q "$T/k9.zst" 'recs[0]["type"] == "start" and len(samples) >= 10 and not end')
	[ "$r" = True ] && ok "kill -9: every flushed record readable" || bad "kill -9 trace: $r"
else
	bad "kill -9: zstdcat failed: $(cat "$T/k9.err")"
fi

# 5. SIGINT to stagebench: the command is stopped and end is written
"$SB" record -q -o "$T/int.zst" --interval 50ms --grace 1s -- "$E" ready="$T/int.pid" sleep=20s &
rec=$!
wait_for test -s "$T/int.pid"
kill -INT "$rec"
wait "$rec"
rc=$?
child=$(cat "$T/int.pid")
r=$(q "$T/int.zst" 'end[0]["stopped_by"] == "signal" and "Interrupt" in end[0]["reason"] and end[0]["exit"] == 130')
if [ "$rc" = 130 ] && [ "$r" = True ] && ! kill -0 "$child" 2>/dev/null; then
	ok "SIGINT: command stopped, end written, exit 130"
else
	bad "SIGINT: rc=$rc end=$r child alive=$(kill -0 "$child" 2>/dev/null && echo yes)"
fi

# 6. exit codes pass through; a missing command is 127
"$SB" record -q -o "$T/e5.zst" -- "$E" exit=5; rc=$?
[ "$rc" = 5 ] && ok "exit 5 passes through" || bad "exit 5 gave $rc"
"$SB" record -q -o "$T/term.zst" -- "$E" kill=TERM; rc=$?
[ "$rc" = 143 ] && ok "death by SIGTERM is 143" || bad "SIGTERM gave $rc"
"$SB" record -q -o "$T/none.zst" -- stagebench-no-such-command 2>"$T/none.err"; rc=$?
if [ "$rc" = 127 ] && grep -q "cannot run 'stagebench-no-such-command': No such file or directory" "$T/none.err"; then
	ok "missing command: 127"
else
	bad "missing command: rc=$rc $(cat "$T/none.err")"
fi

# 7. the environment the command sees
"$SB" record -q -o "$T/env.zst" --mode staged --latents "$T/lat" --interval 200ms -- sh -c \
	'echo "$STAGEBENCH_FD $STAGEBENCH_MODE $STAGEBENCH_LATENTS $STAGEBENCH_TRACE $STAGEBENCH_INTERVAL"' >"$T/env.out"
if [ "$(cat "$T/env.out")" = "3 staged $T/lat $T/env.zst 0.2" ]; then
	ok "STAGEBENCH_* environment"
else
	bad "environment: $(cat "$T/env.out")"
fi

# 8. the peak reset and the command's own ru_maxrss: with the reset (the default) the command
# sees only the peak since its last stage started; with --no-peak-reset the whole run's, and
# the start record says where the stage peaks came from
cat >"$T/maxrss.py" <<'PY'
import os, resource, sys, time
def stage(s):
    os.write(3, ('{"kind":"stage","stage":"%s","mono":%.6f}\n' % (s, time.monotonic())).encode())
stage("big")
b = b"\1" * (200 << 20)   # every page written
del b
stage("small")
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
PY
for how in reset no-reset; do
	mkdir "$T/$how"
	opt=; [ "$how" = no-reset ] && opt=--no-peak-reset
	"$SB" record -q $opt -o "$T/$how.zst" --interval 50ms -- $PY "$T/maxrss.py" "$T/$how/small.go" \
		>"$T/$how.out" &
	rec=$!
	drive "$T/$how.zst" "$T/$how" small
	wait "$rec"
done
r=$(q "$T/no-reset.zst" 'recs[0].get("peaks") == "samples" and recs[0].get("peak_reset") is False and [e["metric"] for e in events if e["kind"] == "peak"][0] == "sampled_footprint"')
if [ "$(cat "$T/reset.out")" -lt 150 ] && [ "$(cat "$T/no-reset.out")" -ge 200 ] && [ "$r" = True ]; then
	ok "ru_maxrss sees the last window with the reset, the whole run with --no-peak-reset"
else
	bad "ru_maxrss: with the reset $(cat "$T/reset.out") MiB, without $(cat "$T/no-reset.out") MiB, start record/metric: $r"
fi

# 9. long lines on the probe pipe: a 2 MiB line is skipped with a warning naming the limit and
# the stage line after it still counts; during an endless line the samples and the guard go on
# (the guard stops the 300 MiB breach that comes after 64 MiB of the line; before, the
# recorder read that line for ever, quadratically, deaf to signals: 736 s until a KILL)
timeout -s KILL 120 "$SB" record --max-footprint 100M --grace 1s --interval 20ms -o "$T/long.zst" -- sh -c '
	head -c 2097152 /dev/zero | tr "\0" x >&3; echo >&3
	"$1" stage=after
	{ head -c 67108864 /dev/zero | tr "\0" x >&3; "$1" alloc=300M sleep=30s; } &
	yes x | tr -d "\n" >&3' sh "$E" 2>"$T/long.err"
rc=$?
r=$(q "$T/long.zst" '[e["stage"] for e in events if e["kind"] == "stage"] == ["after"] and len(samples) >= 2 and end[0]["stopped_by"] == "guard"')
if [ "$rc" = 3 ] && [ "$r" = True ] &&
	grep -q "skipping a line longer than 1048576 bytes (the limit for a line on the probe pipe)" "$T/long.err" &&
	grep -q "guard: stopping: footprint" "$T/long.err"; then
	ok "long probe lines: skipped with a warning; stage, samples and guard go on"
else
	bad "long probe lines: rc=$rc trace=$r $(cat "$T/long.err")"
fi

# 10. a full disk during a run (a 4 KiB tmpfs, mounted in a user and mount namespace): said at
# once on stderr (the command waits for that message before it goes on), the guard still
# stops a footprint breach after it, and the exit status is 3 even when the command exits 0
if unshare -rm true 2>/dev/null; then
	mkdir "$T/full"
	cat >"$T/full.sh" <<'SH'
SB=$1 E=$2 T=$3
mount -t tmpfs -o size=4k tmpfs "$T/full" || exit 9
# after the message: "$E" alloc=300M (guarded: a breach) or exit=0 (unguarded)
cmd='i=0; until grep -q "incomplete from here on" "$0"; do
	i=$((i + 1)); [ $i -lt 3000 ] || exit 7; sleep 0.02; done; exec "$@"'
"$SB" record --max-footprint 100M --grace 1s --interval 1ms -o "$T/full/g.zst" -- \
	sh -c "$cmd" "$T/full-g.err" "$E" alloc=300M sleep=20s 2>"$T/full-g.err"
echo "$?" >"$T/full-g.rc"
rm -f "$T/full/g.zst"
"$SB" record -q --interval 1ms -o "$T/full/u.zst" -- \
	sh -c "$cmd" "$T/full-u.err" "$E" exit=0 2>"$T/full-u.err"
echo "$?" >"$T/full-u.rc"
SH
	unshare -rm sh "$T/full.sh" "$SB" "$E" "$T"
	if [ "$(cat "$T/full-g.rc")" = 3 ] && [ "$(cat "$T/full-u.rc")" = 3 ] &&
		grep -q "No space left on device" "$T/full-g.err" &&
		sed -n '/incomplete from here on/,$p' "$T/full-g.err" | grep -q "guard: stopping: footprint" &&
		grep -q "incomplete from here on" "$T/full-u.err"; then
		ok "disk full: said at once, the guard still stops a breach, exit 3"
	else
		bad "disk full: guarded rc=$(cat "$T/full-g.rc") unguarded rc=$(cat "$T/full-u.rc"): $(cat "$T/full-g.err" "$T/full-u.err")"
	fi
else
	echo "  skip disk full: no user namespaces here (unshare -rm)"
fi

exit $fail
