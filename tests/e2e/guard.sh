#!/bin/sh
# guard.sh -- stagebench guard on real processes: admission timeout, whole-tree
# stops, bystanders, exit codes, its own SIGINT.  Needs SB_BIN and SB_HELPERS.
set -u
SB=${SB_BIN:?SB_BIN not set}
E=${SB_HELPERS:?SB_HELPERS not set}/eatmem
PY=/usr/bin/python3
T=$(mktemp -d)
bystander=
trap 'rm -rf "$T"; [ -n "$bystander" ] && kill "$bystander" 2>/dev/null' EXIT
fail=0
. "$(dirname "$0")/handshake.inc"
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fail=1; }

# A process started by the test, outside any guard: it must survive everything.
sleep 300 &
bystander=$!

# 1. never room to start: exit 4 after the start timeout, with wait/timeout events
"$SB" guard --wait-free 100 --start-timeout 1s --poll 100ms -o "$T/wait.zst" -- true 2>"$T/wait.err"
rc=$?
r=$(zstdcat "$T/wait.zst" | $PY -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin]
acts = [r["action"] for r in recs if r.get("kind") == "guard"]
end = recs[-1]
print(acts[0] == "wait" and acts[-1] == "timeout" and "available_pct" in recs[1]
      and end["type"] == "end" and end["exit"] == 4 and end["stopped_by"] == "guard")')
if [ "$rc" = 4 ] && [ "$r" = True ] && grep -q "waiting: available .*need 100%" "$T/wait.err"; then
	ok "no room: exit 4, wait and timeout logged"
else
	bad "no room: rc=$rc trace=$r $(cat "$T/wait.err")"
fi

# 2. a footprint cap breach stops the whole group, grandchild included
"$SB" guard --max-footprint 100M --grace 1s -o "$T/cap.zst" -- \
	"$E" fork ready="$T/gc.pid" alloc=300M sleep=20s 2>"$T/cap.err"
rc=$?
gc=$(cat "$T/gc.pid" 2>/dev/null)
r=$(zstdcat "$T/cap.zst" | $PY -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin]
stop = [r for r in recs if r.get("kind") == "guard" and r["action"] == "stop"]
end = recs[-1]
print(len(stop) == 1 and stop[0]["footprint"] > 100 * 2**20 and end["stopped_by"] == "guard"
      and "over the cap" in end["reason"] and end["exit"] == 3)')
if [ "$rc" = 3 ] && [ -n "$gc" ] && ! kill -0 "$gc" 2>/dev/null && [ "$r" = True ] &&
	grep -q "stagebench: guard: stopping: footprint .* over the cap 100 MB" "$T/cap.err"; then
	ok "cap breach: exit 3, grandchild $gc gone, stop logged"
else
	bad "cap breach: rc=$rc gc=$gc trace=$r $(cat "$T/cap.err")"
fi

# 2b. the footprint behind a stop is a sample of the trace (the guard judges what it records),
# here while it grows at 200 MB/s, sampled every second apart from the guard's polls
"$SB" record -q --max-footprint 100M --grace 1s --interval 1s -o "$T/ramp.zst" -- \
	"$E" ramp=600M/200M sleep=20s 2>"$T/ramp.err"
rc=$?
r=$(zstdcat "$T/ramp.zst" | $PY -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin]
stop = [r for r in recs if r.get("kind") == "guard" and r["action"] == "stop"]
fps = [r["footprint"] for r in recs if r["type"] == "sample" and "footprint" in r
       and r["t"] <= stop[0]["t"]] if stop else []
print(len(stop) == 1 and stop[0]["footprint"] > 100 * 2**20 and stop[0]["footprint"] in fps)')
if [ "$rc" = 3 ] && [ "$r" = True ]; then
	ok "the footprint a stop names is a sample in the trace"
else
	bad "ramp stop: rc=$rc trace=$r $(cat "$T/ramp.err")"
fi

# 3. a descendant that left the group (setsid) is stopped too
"$SB" guard -q --max-footprint 100M --grace 1s -- \
	"$E" fork setsid ready="$T/ss.pid" alloc=300M sleep=20s
rc=$?
ss=$(cat "$T/ss.pid" 2>/dev/null)
if [ "$rc" = 3 ] && [ -n "$ss" ] && ! kill -0 "$ss" 2>/dev/null; then
	ok "setsid'ed descendant stopped"
else
	bad "setsid'ed descendant: rc=$rc pid=$ss alive=$(kill -0 "$ss" 2>/dev/null && echo yes)"
fi

# 4. exit codes and signals pass through; a missing command is 127
"$SB" guard -q -- "$E" exit=5; rc=$?
[ "$rc" = 5 ] && ok "exit 5 passes through" || bad "exit 5 gave $rc"
"$SB" guard -q -- "$E" kill=TERM; rc=$?
[ "$rc" = 143 ] && ok "death by SIGTERM is 143" || bad "SIGTERM gave $rc"
"$SB" guard -q -- stagebench-no-such-command 2>/dev/null; rc=$?
[ "$rc" = 127 ] && ok "missing command: 127" || bad "missing command gave $rc"

# 5. the guard's own SIGINT stops the command: exit 130
"$SB" guard -q --grace 1s -- "$E" ready="$T/int.pid" sleep=20s &
g=$!
wait_for test -s "$T/int.pid"
kill -INT "$g"
wait "$g"
rc=$?
c=$(cat "$T/int.pid")
if [ "$rc" = 130 ] && ! kill -0 "$c" 2>/dev/null; then
	ok "guard's SIGINT: command stopped, exit 130"
else
	bad "guard's SIGINT: rc=$rc child alive=$(kill -0 "$c" 2>/dev/null && echo yes)"
fi

# 6. --busy: a matching process blocks the start; our own command line does not. --busy
# looks at every process of the machine, so the names carry this shell's pid: a second copy
# of the suite running at the same time (a fresh root's, say) never matches them.
sleep "299.$$" &
busy=$!
# until it has exec'd, the process is a copy of this shell, which --busy would not match
wait_for grep -q "299\\.$$" "/proc/$busy/cmdline"
"$SB" guard -q --busy "^sleep 299\\.$$\$" --start-timeout 500ms --poll 100ms -- true
rc=$?
kill "$busy"; wait "$busy" 2>/dev/null
[ "$rc" = 4 ] && ok "busy process blocks the start" || bad "busy process: rc=$rc"
sh -c "\"$SB\" guard -q --busy 'marker-7d1f-$$' --start-timeout 500ms -- true # marker-7d1f-$$"
rc=$?
[ "$rc" = 0 ] && ok "own ancestors never count as busy" || bad "own ancestors: rc=$rc"

# 7. SIGPIPE: a closed log pipe (its reader gone before the guard writes) does not make the
# guard fail open: the cap breach still stops the command; a `kill -PIPE` of the guard stops
# the tree like SIGINT/TERM/HUP (exit 141, an end record in the trace).
$PY -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
rc = subprocess.call(sys.argv[1:], stdout=w, stderr=w)
print(rc)' "$SB" guard --max-footprint 100M --grace 1s -- \
	"$E" ready="$T/pipe.pid" alloc=300M sleep=20s >"$T/pipe.rc"
rc=$(cat "$T/pipe.rc")
c=$(cat "$T/pipe.pid" 2>/dev/null)
if [ "$rc" = 3 ] && [ -n "$c" ] && ! kill -0 "$c" 2>/dev/null; then
	ok "closed stderr pipe: the cap still stops the command"
else
	bad "closed stderr pipe: rc=$rc child alive=$(kill -0 "$c" 2>/dev/null && echo yes)"
	[ -n "$c" ] && kill -KILL "$c" 2>/dev/null
fi
"$SB" guard -q --grace 1s -o "$T/pipe.zst" -- "$E" ready="$T/kpipe.pid" sleep=20s &
g=$!
wait_for test -s "$T/kpipe.pid"
kill -PIPE "$g"
wait "$g"
rc=$?
c=$(cat "$T/kpipe.pid")
if [ "$rc" = 141 ] && ! kill -0 "$c" 2>/dev/null && trace_has "$T/pipe.zst" '"type": ?"end".*"stopped_by": ?"signal"'; then
	ok "guard's SIGPIPE: command stopped, exit 141, end record"
else
	bad "guard's SIGPIPE: rc=$rc child alive=$(kill -0 "$c" 2>/dev/null && echo yes)"
	kill -KILL "$c" 2>/dev/null
fi

# The bystander saw all of it and lives.
if kill -0 "$bystander" 2>/dev/null; then ok "bystander survived"; else bad "bystander was killed"; fi

exit $fail
