#!/bin/sh
# compare_parts.sh -- `compare --plan`, `--task K` and `--merge` without a scheduler: every
# output marked with its campaign and a used --out refused; warm-ups per task into files of
# their own; a task stopped during prepare recorded as stopped by its signal; a task still
# recording named so by a merge; a task number past the plan a usage error; a malformed or
# foreign runs.d entry named while the merge reports the rest.
# Needs SB_BIN and SB_HELPERS.
set -u
. "$(dirname "$0")/common.inc"
E=${SB_HELPERS:?SB_HELPERS not set}/eatmem
# wait_for COMMAND...: poll a handshake, at most ~20 s
wait_for() { i=0; until "$@"; do [ $i -ge 2000 ] && return 1; sleep 0.01; i=$((i + 1)); done; }

# HOLD (run) and PREP_HOLD (prepare): when set, write NAME.ready and wait for NAME.go.
cat >"$tmp/p.json" <<EOF
{"name": "parts",
 "command": ["sh", "-c", "if [ -n \"\$HOLD\" ]; then echo \$\$ >\"\$HOLD.ready\"; while [ ! -e \"\$HOLD.go\" ]; do sleep 0.01; done; fi; exec \"\$@\"",
             "sh", "$E", "stage=work", "alloc=1M", "stage=done"],
 "prepare": ["sh", "-c", "if [ -n \"\$PREP_HOLD\" ]; then : >\"\$PREP_HOLD.ready\"; while [ ! -e \"\$PREP_HOLD.go\" ]; do sleep 0.01; done; fi"],
 "variants": {"p": {}, "q": {}}}
EOF
export HOLD= PREP_HOLD=
C() { "$SB" compare p q --pipeline "$tmp/p.json" --interval 20ms -q "$@"; }
Cx() { exec "$SB" compare p q --pipeline "$tmp/p.json" --interval 20ms -q "$@"; } # in a subshell: $! is stagebench
M() { "$SB" compare p q --pipeline "$tmp/p.json" "$@" --merge; } # not quiet: its warnings are checked
campaign() { sed -n 's/.*"campaign": "\([0-9a-f]*\)".*/\1/p' "$1" | head -n 1; }

# A campaign of four runs.
O=$tmp/a
C --reps 2 --out "$O" --plan >"$tmp/a.plan" 2>"$tmp/a.plan.err"
check "--plan --out exits 0 ($(cat "$tmp/a.plan.err"))" [ $? -eq 0 ]
for k in 0 1 2 3; do C --reps 2 --out "$O" --task $k 2>>"$tmp/a.err"; done
id=$(campaign "$O/plan.json")
check "plan.json names the campaign" [ -n "$id" ]
for r in p-1 q-1 p-2 q-2; do
	check "runs.d/$r.json carries the campaign" [ "$(campaign "$O/runs.d/$r.json")" = "$id" ]
	check "$r's trace carries the campaign" sh -c \
		"zstd -dc '$O/$r.trace.jsonl.zst' | head -n 1 | grep -q '\"campaign\":\"$id\"'"
done
M --reps 2 --out "$O" >"$tmp/a.out" 2>"$tmp/a.merge.err"
check "the merge of a whole campaign exits 0 ($(tail -n 2 "$tmp/a.merge.err"))" [ $? -eq 0 ]

# 8. a task's trace cut inside its last zstd frame (its recorder killed while it wrote): the
# merge reads the frames before it, says where it was cut, and reports the run
X=$tmp/x
cp -r "$O" "$X"
size=$(wc -c <"$X/q-2.trace.jsonl.zst")
head -c $((size - 5)) "$O/q-2.trace.jsonl.zst" >"$X/q-2.trace.jsonl.zst"
M --reps 2 --out "$X" >"$tmp/x.out" 2>"$tmp/x.err"
rc=$?
check "a merge with a cut trace exits 0 (got $rc: $(tail -n 2 "$tmp/x.err"))" [ $rc -eq 0 ]
check "it names the byte where q-2's trace was cut" \
	grep -q "q-2.trace.jsonl.zst: cut at byte $((size - 5)), inside its last zstd frame" "$tmp/x.err"
check "and reports q-2 in the table" grep -q '^| q | 2 | done' "$X/table.md"

# 5. a task number past the plan is a usage error
C --reps 2 --out "$O" --task 4 2>"$tmp/k4.err"
rc=$?
check "--task 4 of a plan of 4 exits 2 (got $rc)" [ $rc -eq 2 ]
check "and says how many runs the plan has" grep -q 'the plan has 4 runs' "$tmp/k4.err"

# 2. a used --out: a new plan or a whole compare there is refused, the old results untouched
C --reps 1 --out "$O" --plan >/dev/null 2>"$tmp/replan.err"
rc=$?
check "a second campaign's --plan into a used --out is refused (got $rc)" [ $rc -eq 2 ]
check "naming the campaign there" grep -q "already holds campaign $id" "$tmp/replan.err"
C --reps 1 --out "$O" >/dev/null 2>"$tmp/reuse.err"
rc=$?
check "a compare into a used --out is refused (got $rc)" [ $rc -eq 2 ]
check "the old campaign's plan is untouched" [ "$(campaign "$O/plan.json")" = "$id" ]
C --reps 1 --out "$tmp/a1" --task 0 2>"$tmp/noplan.err"
rc=$?
check "a task without a plan in --out is refused (got $rc)" [ $rc -eq 2 ]
C --reps 1 --out "$O" --task 0 2>"$tmp/otherplan.err"
rc=$?
check "a task whose plan differs from the campaign's is refused (got $rc)" [ $rc -eq 2 ]
# 6. a task with other arguments than the campaign's (a seed, a condition) is refused, both
# lists named, and writes nothing: the campaign's results stay its own
for other in "--seed 8" "--no-prime"; do
	# shellcheck disable=SC2086 # two words
	C --reps 2 --out "$O" --task 0 $other 2>"$tmp/args.err"
	rc=$?
	check "a task with $other is refused (got $rc)" [ $rc -eq 2 ]
	check "naming the campaign's arguments" grep -q "^  planned:   pipeline=parts (bytes [0-9]*, fnv1a [0-9a-f]*), seed=7, interval=20000us, cache-state=as-is, prime=yes, peak-reset=yes\$" "$tmp/args.err"
	case $other in
	--seed*) want="seed=8, interval=20000us, cache-state=as-is, prime=yes" ;;
	*) want="seed=7, interval=20000us, cache-state=as-is, prime=no" ;;
	esac
	check "and the task's ($other)" grep -q "^  this task: pipeline=parts (bytes [0-9]*, fnv1a [0-9a-f]*), $want, peak-reset=yes\$" "$tmp/args.err"
done
check "the refused tasks left p-1's entry alone" [ "$(campaign "$O/runs.d/p-1.json")" = "$id" ]
# a second campaign B where task 1 never ran, beside campaign A's files for it
B=$tmp/b
C --reps 1 --out "$B" --plan >/dev/null && C --reps 1 --out "$B" --task 0 2>/dev/null
mkdir -p "$B/runs.d"
cp "$O/q-1.trace.jsonl.zst" "$B/" && cp "$O/runs.d/q-1.json" "$B/runs.d/"
M --reps 1 --out "$B" >"$tmp/b.out" 2>"$tmp/b.err"
rc=$?
check "a merge beside another campaign's run exits 1 (got $rc)" [ $rc -eq 1 ]
check "it names the other campaign's entry" grep -q "runs.d/q-1.json: .*campaign $id" "$tmp/b.err"
check "and does not list that run as done" sh -c "! grep -q '\"mode\": \"q\", \"run\": 1, \"trace\": \"q-1.trace.jsonl.zst\", \"exit\"' '$B/runs.json'"

# 3. warm-ups of a task: its own variant only, into files of its own
W=$tmp/w
C --reps 1 --out "$W" --plan >/dev/null
C --reps 1 --out "$W" --task 1 --warmup 2 2>"$tmp/w.err"
check "a task with --warmup 2 exits 0 ($(tail -n 2 "$tmp/w.err"))" [ $? -eq 0 ]
check "its warm-ups are task 1's own, of its variant q, twice" \
	[ "$(cd "$W/warmup" 2>/dev/null && ls -d */*.trace.jsonl.zst | tr '\n' ' ')" = "task-1/q-1.trace.jsonl.zst task-1/q-2.trace.jsonl.zst " ]

# 4. a task stopped by SIGTERM during prepare: recorded as stopped by the signal
S=$tmp/s
C --reps 1 --out "$S" --plan >/dev/null
(PREP_HOLD=$tmp/prep && export PREP_HOLD && Cx --reps 1 --out "$S" --task 0 2>"$tmp/s.err") &
pid=$!
wait_for test -e "$tmp/prep.ready" || echo "FAIL compare_parts: prepare never started"
kill -TERM $pid
wait $pid
rc=$?
check "a task stopped during prepare exits 143 (got $rc)" [ $rc -eq 143 ]
check "its runs.d entry says stopped by signal 15" \
	grep -q '"stopped_by": "signal", "signal": 15' "$S/runs.d/p-1.json"
C --reps 1 --out "$S" --task 1 2>/dev/null
M --reps 1 --out "$S" >"$tmp/s.out" 2>"$tmp/s.merge.err"
rc=$?
check "the merge exits 1 (got $rc)" [ $rc -eq 1 ]
check "it names p-1 as stopped by signal 15, not missing" sh -c \
	"grep -q 'p-1: stopped by signal 15' '$tmp/s.merge.err' && ! grep -q 'p-1: missing' '$tmp/s.merge.err'"
check "runs.json lists p-1 stopped by signal 15" \
	grep -q '"mode": "p", "run": 1, .*"stopped_by": "signal", "signal": 15' "$S/runs.json"

# 4. SIGTERM to every process of the task, as Slurm sends it, the command first: the run is
# stopped by the signal (not a run that failed on its own)
G=$tmp/g
C --reps 1 --out "$G" --plan >/dev/null
(HOLD=$tmp/grp && export HOLD && Cx --reps 1 --out "$G" --task 0 2>/dev/null) &
pid=$!
wait_for test -s "$tmp/grp.ready" || echo "FAIL compare_parts: run p-1 never started"
kill -TERM "$(cat "$tmp/grp.ready")" $pid
wait $pid
check "SIGTERM to the command, then to its task: the run is stopped by signal 15" \
	grep -q '"stopped_by": "signal", "signal": 15' "$G/runs.d/p-1.json"

# 4. a merge while a task still records: the run is still recording, not lost
R=$tmp/r
C --reps 1 --out "$R" --plan >/dev/null
C --reps 1 --out "$R" --task 0 2>/dev/null
(HOLD=$tmp/run && export HOLD && Cx --reps 1 --out "$R" --task 1 2>/dev/null) &
pid=$!
wait_for test -e "$tmp/run.ready" || echo "FAIL compare_parts: run q-1 never started"
M --reps 1 --out "$R" >"$tmp/r.out" 2>"$tmp/r.err"
rc=$?
: >"$tmp/run.go"
wait $pid
check "a merge while a task records exits 1 (got $rc)" [ $rc -eq 1 ]
check "it says q-1 is still recording" grep -q 'q-1: still recording' "$tmp/r.err"
check "and does not call it lost" sh -c "! grep -q 'q-1: its task left no result' '$tmp/r.err'"
check "runs.json says running" grep -q '"stopped_by": "running"' "$R/runs.json"

# 7. a task in a pid namespace of its own (a container on this host), killed: its marker says
# pid 1, which here is init, alive; the merge calls the run lost, not still recording
if unshare -Urpf --mount-proc --kill-child true 2>/dev/null; then
	N=$tmp/ns
	C --reps 1 --out "$N" --plan >/dev/null
	C --reps 1 --out "$N" --task 1 2>/dev/null
	(HOLD=$tmp/ns && export HOLD && exec unshare -Urpf --mount-proc --kill-child \
		"$SB" compare p q --pipeline "$tmp/p.json" --interval 20ms -q --reps 1 --out "$N" \
		--task 0 2>/dev/null) &
	pid=$!
	wait_for test -e "$tmp/ns.ready" || echo "FAIL compare_parts: the task in a namespace never started"
	check "its marker says pid 1 of another namespace" sh -c \
		"grep -q '\"pid\": 1,' '$N/runs.d/p-1.running' && ! grep -q \"\$(readlink /proc/self/ns/pid)\" '$N/runs.d/p-1.running'"
	kill -9 $pid
	{ wait $pid; } 2>/dev/null
	# an hour later: the trace is no longer written to
	touch -d '-1 hour' "$N/p-1.trace.jsonl.zst"
	M --reps 1 --out "$N" >"$tmp/ns.out" 2>"$tmp/ns.err"
	check "the merge calls p-1 lost ($(grep p-1 "$tmp/ns.err"))" grep -q '"stopped_by": "lost"' "$N/runs.json"
	check "and not still recording" sh -c "! grep -q 'p-1: still recording' '$tmp/ns.err'"
else
	echo "compare_parts: skipping the pid namespace case (unshare -Urpf is not allowed here)"
fi

# 6. malformed and foreign runs.d entries: named, the rest reported
cp -r "$O" "$tmp/m"
M=$tmp/m
echo '{"mode": "q", "run": 1' >"$M/runs.d/q-1.json"
sed 's/"mode": "p"/"mode": "q"/' "$O/runs.d/p-2.json" >"$M/runs.d/p-2.json"
sed 's/"exit": 0/"exit": 0, "stopped_by": "lost"/' "$O/runs.d/q-2.json" >"$M/runs.d/q-2.json"
cp "$O/runs.d/p-1.json" "$M/runs.d/zz-9.json"
M --reps 2 --out "$M" >"$tmp/m.out" 2>"$tmp/m.err"
rc=$?
check "a merge with unusable entries exits 1 (got $rc)" [ $rc -eq 1 ]
check "it still writes the table" grep -q '^| work | ' "$M/table.md"
check "it names the malformed entry" grep -q "runs.d/q-1.json" "$tmp/m.err"
check "it names the entry of another mode" grep -q "runs.d/p-2.json: .*mode" "$tmp/m.err"
check "it names the entry that claims lost" grep -q "runs.d/q-2.json: .*lost" "$tmp/m.err"
check "it names the entry outside the plan" grep -q "runs.d/zz-9.json" "$tmp/m.err"

exit $fail
