#!/bin/sh
# status.sh -- the live status line of record and compare, in a real terminal (tmux): shown
# with the run, stage, footprint, peak, swap rise, available memory and elapsed time while a
# command runs, cleared when it ends, never sharing a line with a message; absent under
# NO_COLOR, with -q and when stderr is a pipe. The commands hold (eatmem wait=FILE) until the
# test has looked; the test waits on what the recorder writes, not on time.
# Needs SB_BIN, SB_HELPERS and tmux (scripts/deps.sh test).
set -u
SB=${SB_BIN:?SB_BIN not set}
E=${SB_HELPERS:?SB_HELPERS not set}/eatmem
if ! command -v tmux >/dev/null 2>&1; then
	echo "  FAIL tmux is missing: install it (scripts/deps.sh test)"
	exit 1
fi
T=$(mktemp -d)
SOCK=$T/tmux.sock
trap 'tmux -S "$SOCK" kill-server 2>/dev/null; [ -n "${KEEP_TMP:-}" ] || rm -rf "$T"' EXIT
fail=0
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fail=1; }
wait_for() { i=0; until "$@"; do [ $i -ge 2000 ] && return 1; sleep 0.01; i=$((i + 1)); done; }
# term NAME COMMAND: run COMMAND in a fresh 150x30 terminal; it stays open after COMMAND ends
term() {
	tmux -S "$SOCK" -f /dev/null new-session -d -s "$1" -x 150 -y 30 \
		"$2; echo __DONE__; exec cat"
}
pane() { tmux -S "$SOCK" capture-pane -p -t "$1"; }
shows() { pane "$1" | grep -q -- "$2"; }
# samples FILE N: the trace holds N samples (flushed at least once a second)
samples() { [ "$(zstdcat "$1" 2>/dev/null | grep -c '"type":"sample"')" -ge "$2" ]; }

# 1. record on a terminal: the line appears with every field, then is cleared for the summary
term rec "'$SB' record --interval 50ms -o '$T/rec.zst' -- '$E' stage=alpha alloc=40M ready='$T/rec.ready' wait='$T/rec.go'"
if wait_for shows rec 'stage alpha  footprint'; then
	line=$(pane rec | grep 'stage alpha')
	case "$line" in
	*"stage alpha  footprint "*"  peak "*"  swap "*"  available "*%*" "*[0-9]" s"* | \
	*"stage alpha  footprint "*"  peak "*"  swap "*"  available "*%*" "*[0-9]" ms"*)
		ok "record: status line '$line'" ;;
	*) bad "record: status line lacks a field: '$line'" ;;
	esac
else
	bad "record: no status line on the terminal: $(pane rec | head -n 5)"
fi
: >"$T/rec.go"
wait_for shows rec __DONE__ || bad "record never ended"
if pane rec | grep -q 'stage alpha'; then
	bad "record: the status line was not cleared: $(pane rec | head -n 5)"
elif pane rec | grep -q '^stagebench: record: .*peak footprint .*exit 0$'; then
	ok "record: cleared, the summary on a line of its own"
else
	bad "record: no summary line: $(pane rec | head -n 5)"
fi

# 2. messages while the line is shown (-v guard polls) each get a line of their own
term msg "'$SB' record -v --interval 50ms --wait-free 1 --poll 100ms -o '$T/msg.zst' -- '$E' stage=beta alloc=20M ready='$T/msg.ready' wait='$T/msg.go'"
wait_for shows msg 'stage beta  footprint' || bad "record -v: no status line"
wait_for sh -c "[ \$(tmux -S '$SOCK' capture-pane -p -t msg | grep -c 'guard: ok') -ge 5 ]" ||
	bad "record -v: fewer than 5 guard lines"
: >"$T/msg.go"
wait_for shows msg __DONE__ || bad "record -v never ended"
mixed=$(pane msg | grep 'stagebench:' | grep -c 'footprint [0-9].*available\|stage beta')
if [ "$mixed" = 0 ]; then
	ok "record -v: no message shares a line with the status line"
else
	bad "record -v: $mixed message line(s) mixed with the status line: $(pane msg | head -n 8)"
fi

# 3. compare on a terminal: the line names the run and the variant
cat >"$T/p.json" <<EOF
{"name": "st", "command": ["$E", "stage=gamma", "alloc=20M", "ready={out}/ready", "wait={out}/go"],
 "variants": {"v1": {}, "v2": {}}}
EOF
term cmp "'$SB' compare v1 v2 --pipeline '$T/p.json' --reps 1 --interval 50ms --out '$T/cmp' >/dev/null"
if wait_for shows cmp '\[1/2\] v1 run 1  stage gamma  footprint'; then
	ok "compare: '$(pane cmp | grep 'v1 run 1  stage')'"
else
	bad "compare: no status line for run 1: $(pane cmp | head -n 5)"
fi
wait_for test -s "$T/cmp/v1-1/ready" && : >"$T/cmp/v1-1/go"
wait_for shows cmp '\[2/2\] v2 run 1  stage gamma' || bad "compare: no status line for run 2"
wait_for test -s "$T/cmp/v2-1/ready" && : >"$T/cmp/v2-1/go"
wait_for shows cmp __DONE__ || bad "compare never ended"
if pane cmp | grep -q 'stage gamma  footprint'; then
	bad "compare: a status line was left: $(pane cmp | head -n 8)"
elif pane cmp | grep -q 'v1 run 1: running$' && pane cmp | grep -q 'v2 run 1: completed'; then
	ok "compare: cleared; each progress line on its own line"
else
	bad "compare: progress lines missing or mixed: $(pane cmp | head -n 8)"
fi

# 3b. a stage name with an escape sequence reaches the terminal as text, not as a command
esc=$(printf '\033')
term esc "'$SB' record --interval 50ms -o '$T/esc.zst' -- '$E' 'stage=red${esc}[31mname' ready='$T/esc.ready' wait='$T/esc.go'"
if wait_for shows esc 'stage red?\[31mname  footprint'; then
	ok "record: control bytes of a stage name shown as '?'"
else
	bad "record: stage name with ESC: $(pane esc | head -n 2)"
fi
: >"$T/esc.go"

# 4. nothing under NO_COLOR and -q on the terminal, nor on a pipe: the recorder writes
# samples for a second (the line would have been drawn several times) before the test looks
for how in nocolor quiet; do
	case $how in
	nocolor) cmd="NO_COLOR=1 '$SB' record --interval 50ms" ;;
	quiet) cmd="'$SB' record -q --interval 50ms" ;;
	esac
	term "$how" "$cmd -o '$T/$how.zst' -- '$E' stage=delta alloc=20M ready='$T/$how.ready' wait='$T/$how.go'"
	wait_for test -s "$T/$how.ready" && wait_for samples "$T/$how.zst" 10 ||
		bad "$how: the run never got going"
	if pane "$how" | grep -q 'stage delta\|footprint [0-9]'; then
		bad "$how: a status line was drawn: $(pane "$how" | head -n 3)"
	else
		ok "$how: no status line"
	fi
	: >"$T/$how.go"
done
"$SB" record --interval 50ms -o "$T/pipe.zst" -- "$E" stage=delta alloc=20M ready="$T/pipe.ready" \
	wait="$T/pipe.go" 2>&1 | cat >"$T/pipe.err" &
wait_for test -s "$T/pipe.ready" && wait_for samples "$T/pipe.zst" 10 || bad "pipe: the run never got going"
: >"$T/pipe.go"
wait
if grep -q "$(printf '\r')\|stage delta\|available" "$T/pipe.err"; then
	bad "pipe: status text in the piped stderr: $(od -c "$T/pipe.err" | head -n 3)"
else
	ok "pipe: no status line ($(wc -l <"$T/pipe.err") line(s): the summary)"
fi
exit $fail
