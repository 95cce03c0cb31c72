#!/bin/sh
# compare_signals.sh -- SIGINT/SIGTERM at random moments of `stagebench compare`: right after
# the start, while run K runs, just after run K ended (between runs, or in the next run's
# admission), and while the results are written. Each time: exit 128+N, no process of the
# runs' trees left, and when any run was done: runs.json listing the runs done (the last one
# "stopped_by": "signal" when it was cut short), table.md, latents.md and the charts.
# The runs hand over with files (ready/go), not sleeps: a run holds until the test lets it go.
# Needs SB_BIN and SB_HELPERS. TRIALS=N for more (default 24).
set -u
SB=${SB_BIN:?SB_BIN not set}
E=${SB_HELPERS:?SB_HELPERS not set}/eatmem
T=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$T"' EXIT
fail=0
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fail=1; }
rand() { echo $(($(od -An -N2 -tu2 /dev/urandom) % $1)); } # 0 .. $1-1
# wait_for COMMAND...: poll a condition (a handshake with compare or a run), at most ~20 s
wait_for() { i=0; until "$@"; do [ $i -ge 2000 ] && return 1; sleep 0.01; i=$((i + 1)); done; }
runs_listed() { [ -s "$1/runs.json" ] && [ "$(grep -o '"mode"' "$1/runs.json" | wc -l)" -ge "$2" ]; }
gone() { [ ! -d "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
# execed PID: PID runs stagebench itself (no longer the shell's child or env before the exec)
execed() { [ "$(tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | head -n 1)" = "$SB" ]; }
# An asynchronous command of a non-interactive shell starts with SIGINT ignored; compare
# catches it once its handlers are in, but an "at once" SIGINT could come before: start it
# with SIGINT at its default (coreutils env), else send only SIGTERM; and send it once the
# process is stagebench (until env has reset it, SIGINT is still ignored and would be lost).
launch=
env --default-signal=INT true 2>/dev/null && launch="env --default-signal=INT"
has_gnuplot=0
command -v gnuplot >/dev/null 2>&1 && has_gnuplot=1
# Phase 3 holds compare inside its report: a gnuplot first on PATH that, when GP_HOLD is set,
# writes GP_HOLD.ready and waits for GP_HOLD.go before it runs the real one. Without it, a
# signal sent "while reporting" could come after compare had exited.
if [ $has_gnuplot = 1 ]; then
	mkdir "$T/bin"
	cat >"$T/bin/gnuplot" <<EOF
#!/bin/sh
if [ -n "\${GP_HOLD:-}" ]; then
	echo \$\$ >"\$GP_HOLD.ready"
	while [ ! -e "\$GP_HOLD.go" ]; do sleep 0.01; done
fi
exec $(command -v gnuplot) "\$@"
EOF
	chmod +x "$T/bin/gnuplot"
	PATH=$T/bin:$PATH
	export PATH
fi

# Two variants: p ends when its go file appears; q also ignores SIGTERM (the guard's KILL
# after --grace ends it). Each writes its pid to {out}/ready first.
cat >"$T/sig.json" <<EOF
{"name": "sig",
 "command": ["sh", "-c", "[ -n \"\$SB_IGNORE_TERM\" ] && trap '' TERM; exec \"\$@\"", "sh",
             "$E", "stage=work", "alloc=4M", "ready={out}/ready", "wait={out}/go", "stage=done"],
 "variants": {"p": {}, "q": {"env": {"SB_IGNORE_TERM": "1"}}}}
EOF

trials=${TRIALS:-24}
n=0
while [ $n -lt "$trials" ]; do
	n=$((n + 1))
	O=$T/t$n
	sig=TERM num=15
	[ -n "$launch" ] && [ "$(rand 2)" = 1 ] && sig=INT num=2
	phase=$(rand 4) # 0 at once, 1 during run K, 2 after run K, 3 while reporting
	k=$(($(rand 4) + 1))
	[ "$phase" = 3 ] && k=4
	hold=
	[ "$phase" = 3 ] && [ $has_gnuplot = 1 ] && hold=$O/gp
	GP_HOLD=$hold $launch "$SB" compare p q --pipeline "$T/sig.json" --reps 2 --interval 20ms --grace 300ms \
		--out "$O" >"$T/out$n" 2>"$T/err$n" &
	pid=$!
	what="trial $n: SIG$sig, phase $phase, run $k"
	# let the runs before K (and K itself in phases 2 and 3) go, one by one
	j=0 ready=1 held=none
	[ "$phase" = 0 ] && ready=0
	for id in p-1 q-1 p-2 q-2; do
		[ "$ready" = 1 ] || break
		j=$((j + 1))
		if ! wait_for test -s "$O/$id/ready"; then
			bad "$what: run $id never started: $(tail -n 3 "$T/err$n")"
			ready=0
			break
		fi
		if [ "$phase" = 1 ] && [ $j -eq "$k" ]; then
			held=$id # signalled while it runs: never let it go
			break
		fi
		: >"$O/$id/go"
		if [ $j -eq "$k" ]; then
			# after run K: once runs.json lists it (the next run may be starting)
			wait_for runs_listed "$O" "$k" || bad "$what: runs.json never listed run $k"
			if [ -n "$hold" ]; then
				wait_for test -s "$hold.ready" || bad "$what: compare never drew a chart"
			fi
			break
		fi
	done
	if [ "$phase" = 0 ] && ! wait_for execed "$pid"; then
		kill -0 "$pid" 2>/dev/null && bad "$what: compare never started"
	fi
	kill -s "$sig" "$pid" 2>/dev/null
	sent=$?
	# A compare that ignored the signal goes on: let every run it starts go, so that it ends
	# (and fails the exit check) instead of hanging; KILL it after ~60 s.
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 6000 ]; do
		for id in p-1 q-1 p-2 q-2; do
			[ "$id" != "$held" ] && [ -d "$O/$id" ] && [ ! -e "$O/$id/go" ] && : >"$O/$id/go"
		done
		[ -n "$hold" ] && [ ! -e "$hold.go" ] && : >"$hold.go"
		sleep 0.01
		i=$((i + 1))
	done
	kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
	wait "$pid"
	rc=$?
	if [ $sent -ne 0 ]; then
		# compare had already ended (phase 3 without the gnuplot hold can be late): nothing
		# to judge
		[ "$rc" = 0 ] || bad "$what: compare ended by itself with $rc"
		ok "$what: compare had ended (exit $rc)"
		continue
	fi
	problems=
	[ "$rc" = $((128 + num)) ] || problems="$problems exit $rc (want $((128 + num)));"
	for f in "$O"/*/ready; do
		[ -s "$f" ] || continue
		p=$(cat "$f")
		gone "$p" || problems="$problems run pid $p ($f) still alive;"
	done
	if [ -s "$O/runs.json" ]; then
		for f in table.md latents.md; do
			[ -s "$O/$f" ] || problems="$problems no $f;"
		done
		# no chart only when there is nothing to draw: a signal at once can stop run 1
		# before its first sample, and compare then says so
		if [ $has_gnuplot = 1 ] && ! grep -q 'no run has a footprint sample: no charts' "$T/err$n"; then
			[ -s "$O/memory.png" ] || problems="$problems no memory.png;"
		fi
		listed=$(grep -o '"mode"' "$O/runs.json" | wc -l)
		if [ "$phase" = 1 ]; then
			[ "$listed" = "$k" ] || problems="$problems runs.json lists $listed runs (want $k);"
			tail -n 12 "$O/runs.json" | grep -q '"stopped_by": *"signal"' ||
				problems="$problems the interrupted run is not stopped_by signal;"
		elif [ "$phase" = 2 ] || [ "$phase" = 3 ]; then
			[ "$listed" -ge "$k" ] || problems="$problems runs.json lists $listed runs (want >= $k);"
		fi
		grep -q 'interrupted\|received' "$T/err$n" || problems="$problems no word of the signal;"
	elif [ "$phase" != 0 ]; then
		problems="$problems no runs.json after run(s) were done;"
	fi
	if [ -n "$problems" ]; then
		bad "$what:$problems $(tail -n 4 "$T/err$n" | tr '\n' ' ')"
	else
		ok "$what: exit $rc, results written"
	fi
done

# `kill -PIPE` of `compare --task` stops the task's run like SIGTERM: exit 141, the command
# gone, the run's trace closed with an end record (stopped_by signal).
O=$T/task
"$SB" compare p --pipeline "$T/sig.json" --reps 1 --out "$O" --plan >/dev/null 2>"$T/task.plan.err" ||
	bad "compare --plan before the task: $(cat "$T/task.plan.err")"
"$SB" compare p --pipeline "$T/sig.json" --task 0 --reps 1 --grace 300ms --out "$O" \
	>"$T/task.out" 2>"$T/task.err" &
pid=$!
if wait_for test -s "$O/p-1/ready"; then
	kill -PIPE "$pid"
	wait "$pid"
	rc=$?
	c=$(cat "$O/p-1/ready")
	problems=
	[ "$rc" = 141 ] || problems="$problems exit $rc (want 141);"
	gone "$c" || { problems="$problems run pid $c still alive;"; kill -9 "$c"; }
	zstdcat "$O"/p-1.trace.jsonl.zst 2>/dev/null | tail -n 1 | grep -q '"stopped_by": *"signal"' ||
		problems="$problems no end record stopped_by signal;"
	if [ -n "$problems" ]; then
		bad "compare --task, SIGPIPE:$problems $(tail -n 3 "$T/task.err" | tr '\n' ' ')"
	else
		ok "compare --task, SIGPIPE: exit 141, command stopped, end record"
	fi
else
	bad "compare --task: the run never started: $(tail -n 3 "$T/task.err")"
	kill -9 "$pid"
fi
exit $fail
